/// The objects of `status` (and of `start`, `schedule list`, `limit list`, `failures`,
/// `selections`) that clients read back (§6): encoded by `json` for the daemon (through
/// `Shapes`) and decoded by `init(_:)` for blockc and the agent, so that each is read in one
/// place (the more-time answers are in Replies+MoreTime.swift). They are an API for scripts:
/// keys may be added, never renamed. Instants are the daemon's ISO 8601 text with offset, durations are seconds.
/// Decoding is lenient, as a reader of another version must be: a key of the wrong type
/// reads as absent.
public struct ActivityReply: Equatable, Sendable {
    /// Where an activity came from: a client's request or a configuration file.
    public enum Origin: String, CaseIterable, Sendable { case client, config }

    public var name: String
    /// `block`, `schedule` or `limit`; a newer daemon may say more.
    public var kind: WireWord<Activity.Kind>
    public var selections: [String]
    public var active: Bool
    /// For a schedule or limit the current window if active, else the next.
    public var start: String?
    public var end: String?
    public var locked: Bool
    /// A schedule's `HH:MM-HH:MM`.
    public var window: String?
    /// A schedule's or limit's days (`daily`, `mon-fri`).
    public var days: String?
    /// §9: a limit's daily allowance, warning, today's use and what is left, in seconds.
    public var limit: Int?
    public var warn: Int?
    /// Screen time: a screen-time limit's action (`lock`, `logout`, `suspend`, `poweroff`);
    /// nil for a limit of apps and sites.
    public var session: String?
    public var used: Int?
    public var left: Int?
    public var running: Bool?
    /// Seconds until it is lifted, for an active activity only.
    public var remaining: Int?
    /// `client` (with the uid that asked) or `config` (with its file); a newer daemon may say more.
    public var origin: WireWord<Origin>
    public var uid: Int?
    public var file: String?
    /// Who it applies to: the names and `@group`s given, and the uids they stood for (nil:
    /// the whole machine).
    public var users: [String]?
    public var userIds: [Int]?
    /// §9: a limit's day for each person it counted today (the machine's and an
    /// administrator's view only; a member sees their own figures above).
    public var people: [PersonUse]?

    /// One person's day under a limit: their use and what is left, in seconds, and whether it
    /// blocks them now.
    public struct PersonUse: Equatable, Sendable {
        public var user: String
        public var uid: Int
        public var used: Int
        public var left: Int
        public var blocked: Bool
        public init(user: String, uid: Int, used: Int, left: Int, blocked: Bool) {
            (self.user, self.uid, self.used, self.left, self.blocked) = (user, uid, used, left, blocked)
        }
        var json: JSON {
            .object(["user": .string(user), "uid": .int(Int64(uid)), "used": .int(Int64(used)), "left": .int(Int64(left)), "blocked": .bool(blocked)])
        }
        init?(_ v: JSON) {
            guard let o = v.object, let uid = o["uid"]?.int else { return nil }
            self.init(user: o["user"]?.string ?? "#\(uid)", uid: uid, used: o["used"]?.int ?? 0, left: o["left"]?.int ?? 0, blocked: o["blocked"]?.bool == true)
        }
    }

    public init(name: String, kind: Activity.Kind, selections: [String], active: Bool, start: String?, end: String?,
                locked: Bool, origin: Origin) {
        self.init(name: name, kind: .known(kind), selections: selections, active: active, start: start, end: end, locked: locked,
                  origin: .known(origin))
    }

    init(name: String, kind: WireWord<Activity.Kind>, selections: [String], active: Bool, start: String?, end: String?,
         locked: Bool, origin: WireWord<Origin>) {
        (self.name, self.kind, self.selections, self.active) = (name, kind, selections, active)
        (self.start, self.end, self.locked, self.origin) = (start, end, locked, origin)
    }

    public var json: JSONObject {
        var o: JSONObject = ["name": .string(name), "kind": .string(kind.word), "selections": Reply.strings(selections),
                             "active": .bool(active), "start": Reply.text(start), "end": Reply.text(end), "locked": .bool(locked)]
        if let window { o["window"] = .string(window) }
        if let limit { o["limit"] = .int(Int64(limit)) }
        if let days { o["days"] = .string(days) }
        if let warn { o["warn"] = .int(Int64(warn)) }
        if let session { o["session"] = .string(session) }
        if let used { o["used"] = .int(Int64(used)) }
        if let left { o["left"] = .int(Int64(left)) }
        if let running { o["running"] = .bool(running) }
        if let remaining { o["remaining"] = .int(Int64(remaining)) }
        o["origin"] = .string(origin.word)
        if let uid { o["uid"] = .int(Int64(uid)) }
        if let file { o["file"] = .string(file) }
        if let users { o["users"] = Reply.strings(users) }
        if let userIds { o["userIds"] = .array(userIds.map { .int(Int64($0)) }) }
        if let people { o["people"] = .array(people.map(\.json)) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(name: o["name"]?.string ?? "", kind: WireWord(o["kind"]?.string ?? ""), selections: Reply.strings(o["selections"]),
                  active: o["active"]?.bool == true, start: o["start"]?.string, end: o["end"]?.string,
                  locked: o["locked"]?.bool == true, origin: WireWord(o["origin"]?.string ?? ""))
        (window, days, file) = (o["window"]?.string, o["days"]?.string, o["file"]?.string)
        (limit, warn, used, left) = (o["limit"]?.int, o["warn"]?.int, o["used"]?.int, o["left"]?.int)
        session = o["session"]?.string
        (running, remaining, uid) = (o["running"]?.bool, o["remaining"]?.int, o["uid"]?.int)
        if o["users"] != nil { users = Reply.strings(o["users"]) }
        userIds = o["userIds"]?.array?.compactMap(\.int)
        people = o["people"]?.array?.compactMap(PersonUse.init)
    }
}

/// A blocked selection in `status`: when it is lifted if nothing changes (nil: no end in
/// sight) and the activities that block it.
public struct BlockedReply: Equatable, Sendable {
    public var selection: String
    public var until: String?
    public var reasons: [String]
    /// The users and `@group`s it is blocked for (nil: the whole machine).
    public var users: [String]?

    public init(selection: String, until: String?, reasons: [String], users: [String]? = nil) {
        (self.selection, self.until, self.reasons, self.users) = (selection, until, reasons, users)
    }

    public var json: JSONObject {
        var o: JSONObject = ["selection": .string(selection), "until": Reply.text(until), "reasons": Reply.strings(reasons)]
        if let users { o["users"] = Reply.strings(users) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(selection: o["selection"]?.string ?? "", until: o["until"]?.string, reasons: Reply.strings(o["reasons"]),
                  users: o["users"] == nil ? nil : Reply.strings(o["users"]))
    }
}

/// A failure (T4): an enforcement error, a configuration that does not load, a state file that
/// cannot be saved, ... `status` lists the current ones; `failures` lists them all, a resolved
/// one with when its cause was gone (`resolved`).
public struct FailureReply: Equatable, Sendable {
    public var time: String?
    public var code: String
    public var message: String
    public var uid: Int?
    public var activity: String?
    /// When its cause was gone (nil: current).
    public var resolved: String?

    public init(time: String?, code: String, message: String, uid: Int? = nil, activity: String? = nil, resolved: String? = nil) {
        (self.time, self.code, self.message, self.uid, self.activity, self.resolved) = (time, code, message, uid, activity, resolved)
    }

    public var json: JSONObject {
        var o: JSONObject = ["time": Reply.text(time), "code": .string(code), "message": .string(message)]
        if let uid { o["uid"] = .int(Int64(uid)) }
        if let activity { o["activity"] = .string(activity) }
        if let resolved { o["resolved"] = .string(resolved) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(time: o["time"]?.string, code: o["code"]?.string ?? "", message: o["message"]?.string ?? "",
                  uid: o["uid"]?.int, activity: o["activity"]?.string, resolved: o["resolved"]?.string)
    }
}

/// A selection as `selections` lists it and `selection-show` answers it (S1, S6, E8): blockc
/// prints it, the notification agent takes its alternative and its own texts from it.
public struct SelectionReply: Equatable, Sendable {
    public var name: String
    public var domains: [String]
    public var apps: [String]
    /// E8: URL prefixes, enforced in browsers only.
    public var paths: [String]
    public var openURL: String?
    /// E5 `Firewall=yes` (sent only when true).
    public var firewall: Bool?
    /// S6: the selection's own texts, keyed as in its file (`ShieldBody[ja]`).
    public var texts: [String: String]

    public init(name: String, domains: [String] = [], apps: [String] = [], paths: [String] = [], openURL: String? = nil,
                firewall: Bool? = nil, texts: [String: String] = [:]) {
        (self.name, self.domains, self.apps, self.paths) = (name, domains, apps, paths)
        (self.openURL, self.firewall, self.texts) = (openURL, firewall, texts)
    }

    public var json: JSONObject {
        var o: JSONObject = ["name": .string(name), "domains": Reply.strings(domains), "apps": Reply.strings(apps),
                             "paths": Reply.strings(paths), "openURL": Reply.text(openURL)]
        if firewall == true { o["firewall"] = .bool(true) }
        var texts = JSONObject()
        for key in self.texts.keys.sorted() { texts[key] = .string(self.texts[key]!) }
        o["texts"] = .object(texts)
        return o
    }

    public init(_ o: JSONObject) {
        self.init(name: o["name"]?.string ?? "", domains: Reply.strings(o["domains"]), apps: Reply.strings(o["apps"]),
                  paths: Reply.strings(o["paths"]), openURL: o["openURL"]?.string, firewall: o["firewall"]?.bool)
        for (key, value) in o["texts"]?.object ?? JSONObject() {
            if let text = value.string { texts[key] = text }
        }
    }
}

enum Reply {
    static func text(_ s: String?) -> JSON { s.map(JSON.string) ?? .null }
    static func int(_ n: Int?) -> JSON { n.map { .int(Int64($0)) } ?? .null }
    static func strings(_ a: [String]) -> JSON { .array(a.map(JSON.string)) }
    static func strings(_ value: JSON?) -> [String] { (value?.array ?? []).compactMap(\.string) }
    static func objects(_ value: JSON?) -> [JSONObject] { (value?.array ?? []).compactMap(\.object) }
}
