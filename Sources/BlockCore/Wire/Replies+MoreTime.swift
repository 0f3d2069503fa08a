/// The answers of the more-time commands (M1-M3), typed once: `more` and `approve` (a grant or
/// a request), `deny`, `cancel`, `requests` (also the more-time keys of `status`), and a
/// `stop`, `schedule-remove` or `limit-remove` that waits for its `Delay=`. Each `json` writes
/// the keys in the order the daemon sends them (RepliesTests pins the lines); `init(_:)` reads
/// them back leniently, as Replies.swift does: a key of the wrong type reads as absent.

/// M3: more time granted (`"state": "granted"`): the answer to `approve` and to a `more` that
/// the policy grants at once, and a row of `requests`. Over blocks and schedules it is a
/// window; over a used-up daily limit (`allowance`) it is an amount of use.
public struct GrantReply: Equatable, Sendable {
    public var id: String
    public var selection: String
    public var start: String?
    public var end: String?
    /// Who it is for.
    public var uid: Int?
    public var user: String?
    /// What it lifts: the activities, then the limits it gives allowance.
    public var activities: [String]
    /// The limits given allowance instead of a window (nil: none).
    public var allowance: [String]?
    /// Who granted it (nil: the policy, `MoreTime=self`).
    public var grantedBy: Int?
    public var grantedByUser: String?
    public var reason: String?
    /// M1: in the answer to `more`, what NAME was taken as (`selection` or `limit`), and the
    /// other kind it names too (nil: none). Absent elsewhere (and from older daemons).
    public var named: WireWord<MoreTimeNamed>?
    public var also: WireWord<MoreTimeNamed>?
    /// M5: in the answer to `more` and `approve`, how much the grant lifts now (`all`, `some`,
    /// `nothing`) and what still holds the selection.
    public var lifts: WireWord<MoreTimeLift>?
    public var held: [HeldReply]?

    public init(id: String, selection: String, start: String?, end: String?, uid: Int? = nil, user: String? = nil,
                activities: [String] = [], allowance: [String]? = nil, grantedBy: Int? = nil, grantedByUser: String? = nil,
                reason: String? = nil) {
        (self.id, self.selection, self.start, self.end, self.uid, self.user) = (id, selection, start, end, uid, user)
        (self.activities, self.allowance, self.grantedBy) = (activities, allowance, grantedBy)
        (self.grantedByUser, self.reason) = (grantedByUser, reason)
    }

    public var json: JSONObject {
        var o: JSONObject = ["id": .string(id), "selection": .string(selection), "state": "granted",
                             "start": Reply.text(start), "end": Reply.text(end)]
        if let uid { o["uid"] = .int(Int64(uid)) }
        o["activities"] = Reply.strings(activities)
        if let allowance { o["allowance"] = Reply.strings(allowance) }
        o["grantedBy"] = Reply.int(grantedBy)
        if let user { o["user"] = .string(user) }
        if let grantedByUser { o["grantedByUser"] = .string(grantedByUser) }
        if let reason { o["reason"] = .string(reason) }
        if let named { o["named"] = .string(named.word) }
        if let also { o["also"] = .string(also.word) }
        if let lifts { o["lifts"] = .string(lifts.word) }
        if let held { o["held"] = .array(held.map { .object($0.json) }) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(id: o["id"]?.string ?? "", selection: o["selection"]?.string ?? "", start: o["start"]?.string,
                  end: o["end"]?.string, uid: o["uid"]?.int, user: o["user"]?.string, activities: Reply.strings(o["activities"]),
                  allowance: o["allowance"] == nil ? nil : Reply.strings(o["allowance"]), grantedBy: o["grantedBy"]?.int,
                  grantedByUser: o["grantedByUser"]?.string, reason: o["reason"]?.string)
        (named, also, lifts) = (o["named"]?.string.map(WireWord.init), o["also"]?.string.map(WireWord.init), o["lifts"]?.string.map(WireWord.init))
        held = o["held"] == nil ? nil : Reply.objects(o["held"]).map(HeldReply.init)
    }
}

/// M5: what still holds a granted selection: a reason of its own the grant was not given over,
/// or another blocked selection (`selection`) covering some of its sites or apps, with that
/// activity's more-time policy (`moreTime`: `self`, `approval`, `no`), whether it is a
/// `--lock` block, and when it ends (nil: no end in sight).
public struct HeldReply: Equatable, Sendable {
    public var selection: String
    public var activity: String
    public var kind: WireWord<Activity.Kind>
    public var moreTime: WireWord<MoreTimeMode>
    public var locked: Bool
    public var until: String?

    public init(selection: String, activity: String, kind: WireWord<Activity.Kind>, moreTime: WireWord<MoreTimeMode>, locked: Bool, until: String?) {
        (self.selection, self.activity, self.kind, self.moreTime, self.locked, self.until) = (selection, activity, kind, moreTime, locked, until)
    }

    public var json: JSONObject {
        ["selection": .string(selection), "activity": .string(activity), "kind": .string(kind.word), "moreTime": .string(moreTime.word),
         "locked": .bool(locked), "until": Reply.text(until)]
    }

    public init(_ o: JSONObject) {
        self.init(selection: o["selection"]?.string ?? "", activity: o["activity"]?.string ?? "", kind: WireWord(o["kind"]?.string ?? ""),
                  moreTime: WireWord(o["moreTime"]?.string ?? ""), locked: o["locked"]?.bool ?? false, until: o["until"]?.string)
    }
}

/// M1: a request for more time that waits for an administrator (`"state": "pending"`): the
/// answer to a `more` under `MoreTime=approval`, and a row of `requests`.
public struct MoreTimeRequestReply: Equatable, Sendable {
    public var id: String
    public var selection: String
    public var asked: String?
    /// When it lapses unanswered.
    public var expires: String?
    public var uid: Int?
    public var user: String?
    public var activities: [String]
    /// What was asked for (nil: the rest of the day).
    public var seconds: Int?
    public var reason: String?

    public init(id: String, selection: String, asked: String?, expires: String?, uid: Int? = nil, user: String? = nil,
                activities: [String] = [], seconds: Int? = nil, reason: String? = nil) {
        (self.id, self.selection, self.asked, self.expires, self.uid, self.user) = (id, selection, asked, expires, uid, user)
        (self.activities, self.seconds, self.reason) = (activities, seconds, reason)
    }

    public var json: JSONObject {
        var o: JSONObject = ["id": .string(id), "selection": .string(selection), "state": "pending",
                             "asked": Reply.text(asked), "expires": Reply.text(expires)]
        if let uid { o["uid"] = .int(Int64(uid)) }
        o["activities"] = Reply.strings(activities)
        o["seconds"] = Reply.int(seconds)
        if let user { o["user"] = .string(user) }
        if let reason { o["reason"] = .string(reason) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(id: o["id"]?.string ?? "", selection: o["selection"]?.string ?? "", asked: o["asked"]?.string,
                  expires: o["expires"]?.string, uid: o["uid"]?.int, user: o["user"]?.string,
                  activities: Reply.strings(o["activities"]), seconds: o["seconds"]?.int, reason: o["reason"]?.string)
    }
}

/// M2: a stop or removal that waits for its activities' `Delay=`: what `stop`,
/// `schedule-remove` and `limit-remove` answer then, and a row of `requests`.
public struct DelayedReply: Equatable, Sendable {
    /// The activity's name (`blockc cancel NAME` keeps it).
    public var name: String
    /// `stop`, `schedule-remove` or `limit-remove`; a newer daemon may say more.
    public var kind: WireWord<PendingLoosening.Kind>
    public var uid: Int?
    public var user: String?
    /// When it takes effect.
    public var at: String?

    public init(name: String, kind: PendingLoosening.Kind, uid: Int? = nil, user: String? = nil, at: String?) {
        self.init(name: name, kind: .known(kind), uid: uid, user: user, at: at)
    }

    init(name: String, kind: WireWord<PendingLoosening.Kind>, uid: Int?, user: String?, at: String?) {
        (self.name, self.kind, self.uid, self.user, self.at) = (name, kind, uid, user, at)
    }

    public var json: JSONObject {
        var o: JSONObject = ["pending": .string(name), "kind": .string(kind.word)]
        if let uid { o["uid"] = .int(Int64(uid)) }
        if let user { o["user"] = .string(user) }
        o["at"] = Reply.text(at)
        return o
    }

    public init(_ o: JSONObject) {
        self.init(name: o["pending"]?.string ?? "", kind: WireWord(o["kind"]?.string ?? ""), uid: o["uid"]?.int,
                  user: o["user"]?.string, at: o["at"]?.string)
    }
}

/// The answer to `requests`, and the more-time part of `status`: what waits for an
/// administrator, what is granted, what waits for `Delay=` (A1: a member sees their own).
public struct RequestsReply: Equatable, Sendable {
    public var requests: [MoreTimeRequestReply]
    public var grants: [GrantReply]
    public var delayed: [DelayedReply]
    /// M4: whether the caller may approve (`requests` only; nil in `status`).
    public var admin: Bool?

    public init(requests: [MoreTimeRequestReply] = [], grants: [GrantReply] = [], delayed: [DelayedReply] = [], admin: Bool? = nil) {
        (self.requests, self.grants, self.delayed, self.admin) = (requests, grants, delayed, admin)
    }

    public var json: JSONObject {
        var o: JSONObject = ["requests": .array(requests.map { .object($0.json) }), "grants": .array(grants.map { .object($0.json) }),
                             "delayed": .array(delayed.map { .object($0.json) })]
        if let admin { o["admin"] = .bool(admin) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(requests: Reply.objects(o["requests"]).map(MoreTimeRequestReply.init), grants: Reply.objects(o["grants"]).map(GrantReply.init),
                  delayed: Reply.objects(o["delayed"]).map(DelayedReply.init), admin: o["admin"]?.bool)
    }
}

/// The answer to `more` and `approve`: more time now, or a request that waits. A `state` this
/// client does not know (a newer daemon's) is kept as it came, to be shown as it is.
public enum MoreReply: Equatable, Sendable {
    case granted(GrantReply)
    case pending(MoreTimeRequestReply)
    case unknown(JSONObject)

    public var json: JSONObject {
        switch self {
        case .granted(let g): g.json
        case .pending(let r): r.json
        case .unknown(let o): o
        }
    }

    public init(_ o: JSONObject) {
        switch o["state"]?.string {
        case "granted": self = .granted(GrantReply(o))
        case "pending": self = .pending(MoreTimeRequestReply(o))
        default: self = .unknown(o)
        }
    }
}

/// The answer to `stop`, `schedule-remove` and `limit-remove`: done at once (`{"stopped":
/// NAME}`, `{"removed": NAME}`), or waiting for the activities' `Delay=` (M2).
public enum RemovalReply: Equatable, Sendable {
    case stopped(String)
    case removed(String)
    case delayed(DelayedReply)

    public var json: JSONObject {
        switch self {
        case .stopped(let name): ["stopped": .string(name)]
        case .removed(let name): ["removed": .string(name)]
        case .delayed(let d): d.json
        }
    }

    public init(_ o: JSONObject) {
        if o["pending"] != nil {
            self = .delayed(DelayedReply(o))
        } else if let name = o["stopped"]?.string {
            self = .stopped(name)
        } else {
            self = .removed(o["removed"]?.string ?? "")
        }
    }
}

/// The answer to `deny`: `{"denied": ID, "selection": S}`.
public struct DeniedReply: Equatable, Sendable {
    public var id: String
    public var selection: String

    public init(id: String, selection: String) { (self.id, self.selection) = (id, selection) }

    public var json: JSONObject { ["denied": .string(id), "selection": .string(selection)] }

    public init(_ o: JSONObject) { self.init(id: o["denied"]?.string ?? "", selection: o["selection"]?.string ?? "") }
}

/// The answer to `cancel`: `{"cancelled": NAME, "kind": K}`, where `kind` is `request` for a
/// withdrawn request and the delayed loosening's kind (`stop`, ...) otherwise.
public struct CancelledReply: Equatable, Sendable {
    /// What was cancelled: a request for more time, or a loosening that waited for its `Delay=`
    /// (its kind's word, as `DelayedReply` says it).
    public enum Kind: RawRepresentable, Hashable, Sendable {
        case request
        case loosening(PendingLoosening.Kind)

        public init?(rawValue: String) {
            if rawValue == "request" { self = .request } else if let l = PendingLoosening.Kind(rawValue: rawValue) { self = .loosening(l) } else { return nil }
        }

        public var rawValue: String {
            switch self {
            case .request: "request"
            case .loosening(let l): l.rawValue
            }
        }
    }

    public var name: String
    /// A newer daemon may say more.
    public var kind: WireWord<Kind>

    public init(name: String, kind: Kind) { (self.name, self.kind) = (name, .known(kind)) }

    public var json: JSONObject { ["cancelled": .string(name), "kind": .string(kind.word)] }

    public init(_ o: JSONObject) { (name, kind) = (o["cancelled"]?.string ?? "", WireWord(o["kind"]?.string ?? "")) }
}
