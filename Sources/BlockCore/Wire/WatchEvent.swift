/// One event of `watch` (§8), the object of an `EVENT {json}` line: one case per event the
/// daemon emits, each with its payload (WatchEvent+Payloads.swift), and `unknown` for a newer
/// daemon's event. The daemon builds events with the constructors and writes them with
/// `json`; blockc and the agent read them with `init(_:)`. Nothing else spells an event's
/// keys. Instants stay the daemon's ISO 8601 text (with its offset), so a reader shows
/// exactly what the daemon said.
public enum WatchEvent: Equatable, Sendable {
    case lock(Lock)
    case unlock(Unlock)
    /// Bad input or stale state.
    case refusal(Problem)
    /// Ours to fix.
    case failure(Problem)
    case shieldHit(Hit)
    /// A repaired edit of the hosts file.
    case tamper(Hit)
    case limit(Limit)
    case warning(Warning)
    /// M3: a more-time request or grant changed.
    case moreTime(MoreTime)
    /// S3: a slow watcher missed events.
    case dropped(Dropped)
    /// A newer daemon's event: its word and every other key, in the order they came, to be
    /// shown as it was.
    case unknown(String, JSONObject)

    /// The event words this build knows.
    public enum Name: String, CaseIterable, Sendable {
        case lock, unlock, refusal, failure, shieldHit = "shield-hit", tamper, limit, warning, dropped
        /// M3: a more-time request or grant changed (its `kind`: `MoreTime.Kind`).
        case moreTime = "more-time"
    }

    /// The known word, nil for a newer daemon's event.
    public var name: Name? {
        switch self {
        case .lock: .lock
        case .unlock: .unlock
        case .refusal: .refusal
        case .failure: .failure
        case .shieldHit: .shieldHit
        case .tamper: .tamper
        case .limit: .limit
        case .warning: .warning
        case .moreTime: .moreTime
        case .dropped: .dropped
        case .unknown: nil
        }
    }

    /// The `event` word on the wire, a newer daemon's as it came.
    public var word: String {
        if case .unknown(let word, _) = self { return word }
        return name?.rawValue ?? ""
    }

    /// When the daemon sent it (nil: a newer daemon's event without one, or a `dropped` marker
    /// that missed only events without one).
    public var time: String? {
        switch self {
        case .lock(let e): e.time
        case .unlock(let e): e.time
        case .refusal(let e), .failure(let e): e.time
        case .shieldHit(let e), .tamper(let e): e.time
        case .limit(let e): e.time
        case .warning(let e): e.time
        case .moreTime(let e): e.time
        case .dropped(let e): e.time
        case .unknown(_, let o): o["time"]?.string
        }
    }

    /// The one selection the event is about, the key of the agent's notification slot (S2);
    /// nil for a limit (it names several), a refusal, a failure and a dropped marker.
    public var selection: String? {
        switch self {
        case .lock(let e): e.selection
        case .unlock(let e): e.selection
        case .shieldHit(let e), .tamper(let e): e.selection
        case .warning(let e): e.selection
        case .moreTime(let e): e.selection
        case .refusal, .failure, .limit, .dropped: nil
        case .unknown(_, let o): o["selection"]?.string
        }
    }
}

extension WatchEvent {
    /// Every key a known event may have; a known event's other keys (from a newer daemon) are
    /// kept in its payload's `extra`, and written back after its own.
    static let allKeys: Set<String> = ["time", "kind", "activity", "selection", "selections", "path", "app", "until", "starts",
                                       "remaining", "reasons", "why", "code", "message", "count", "more", "uid", "users", "except", "lifts", "heldUntil"]

    /// The one encoder: the `EVENT` line's object, keys in the order the daemon has always
    /// written them, absent ones left out.
    public var json: JSONObject {
        let (fields, extra): ([(String, JSON?)], JSONObject) = switch self {
        case .lock(let e): (e.fields, e.extra)
        case .unlock(let e): (e.fields, e.extra)
        case .refusal(let e), .failure(let e): (e.fields, e.extra)
        case .shieldHit(let e), .tamper(let e): (e.fields, e.extra)
        case .limit(let e): (e.fields, e.extra)
        case .warning(let e): (e.fields, e.extra)
        case .moreTime(let e): (e.fields, e.extra)
        case .dropped(let e): (e.fields, e.extra)
        case .unknown(_, let o): ([], o)
        }
        var o: JSONObject = ["event": .string(word)]
        for (key, value) in fields { if let value { o[key] = value } }
        for (key, value) in extra where o[key] == nil { o[key] = value }
        return o
    }

    /// The one decoder. Lenient, as a reader of a newer daemon must be: a key of the wrong
    /// type reads as absent (empty text, no list), keys this build does not know are kept, and
    /// an event word it does not know is `unknown`, never an error.
    public init(_ o: JSONObject) {
        let word = o["event"]?.string ?? ""
        guard let name = Name(rawValue: word) else {
            self = .unknown(word, JSONObject(uniqueKeysWithValues: o.filter { $0.key != "event" }.map { ($0.key, $0.value) }))
            return
        }
        switch name {
        case .lock: self = .lock(Lock(o))
        case .unlock: self = .unlock(Unlock(o))
        case .refusal: self = .refusal(Problem(o))
        case .failure: self = .failure(Problem(o))
        case .shieldHit: self = .shieldHit(Hit(o))
        case .tamper: self = .tamper(Hit(o))
        case .limit: self = .limit(Limit(o))
        case .warning: self = .warning(Warning(o))
        case .moreTime: self = .moreTime(MoreTime(o))
        case .dropped: self = .dropped(Dropped(o))
        }
    }

    /// A known event's keys this build does not know.
    static func extra(_ o: JSONObject) -> JSONObject {
        JSONObject(uniqueKeysWithValues: o.filter { $0.key != "event" && !allKeys.contains($0.key) }.map { ($0.key, $0.value) })
    }

    static func text(_ s: String?) -> JSON? { s.map(JSON.string) }
    static func list(_ a: [String]?) -> JSON? { a.map { .array($0.map(JSON.string)) } }
    static func number(_ n: Int?) -> JSON? { n.map { .int(Int64($0)) } }
    static func numbers(_ a: [Int]?) -> JSON? { a.map { .array($0.map { .int(Int64($0)) }) } }
    /// A lock's or hit's end: always written, `null` for no end in sight.
    static func end(_ s: String?) -> JSON? { s.map(JSON.string) ?? .null }

    static func strings(_ value: JSON?) -> [String]? {
        guard case .array(let items)? = value else { return nil }
        return items.compactMap(\.string)
    }

    static func ints(_ value: JSON?) -> [Int]? {
        guard case .array(let items)? = value else { return nil }
        return items.compactMap(\.int)
    }
}

/// The daemon's constructors, with uids as the core keeps them.
extension WatchEvent {
    /// Per-user blocks: `users` nil is the whole machine, for everyone but `except` (`Audience`);
    /// `except` qualifies only an event for everyone.
    public static func lock(time: String, selection: String, until: String?, reasons: [String], users: [UInt32]? = nil,
                            except: [UInt32] = []) -> WatchEvent {
        .lock(Lock(time: time, selection: selection, until: until, reasons: reasons, users: uids(users), except: others(users, except)))
    }

    public static func unlock(time: String, selection: String, why: String, users: [UInt32]? = nil, except: [UInt32] = []) -> WatchEvent {
        .unlock(Unlock(time: time, selection: selection, why: why, users: uids(users), except: others(users, except)))
    }

    /// `uid`: whose request it was (nil: no one's, e.g. a configuration file's).
    public static func refusal(time: String, code: String, message: String, uid: UInt32? = nil) -> WatchEvent {
        .refusal(Problem(time: time, code: code, message: message, uid: uid.map(Int.init)))
    }

    public static func failure(time: String, code: String, message: String, uid: UInt32? = nil) -> WatchEvent {
        .failure(Problem(time: time, code: code, message: message, uid: uid.map(Int.init)))
    }

    public static func shieldHit(time: String, kind: ShieldHit.Kind, selection: String, path: String, app: String?, until: String?,
                                 users: [UInt32]? = nil) -> WatchEvent {
        .shieldHit(Hit(time: time, kind: .known(kind), selection: selection, path: path, app: app, until: until, users: uids(users)))
    }

    public static func tamper(time: String, kind: ShieldHit.Kind, selection: String, path: String, app: String?, until: String?,
                              users: [UInt32]? = nil) -> WatchEvent {
        .tamper(Hit(time: time, kind: .known(kind), selection: selection, path: path, app: app, until: until, users: uids(users)))
    }

    public static func limit(time: String, activity: String, selections: [String], until: String, users: [UInt32]? = nil) -> WatchEvent {
        .limit(Limit(time: time, activity: activity, selections: selections, until: until, users: uids(users)))
    }

    public static func warning(time: String, activity: String, selection: String, starts: String, remaining: String,
                               users: [UInt32]? = nil, session: SessionAction? = nil) -> WatchEvent {
        .warning(Warning(time: time, activity: activity, selection: selection, starts: starts, remaining: remaining, users: uids(users),
                         session: session?.rawValue))
    }

    public static func dropped(count: Int, time: String?) -> WatchEvent { .dropped(Dropped(count: count, time: time)) }

    /// M4, S4: the event with what a "more time" button would get now; only a lock or a hit
    /// carries an offer, any other event comes back as it was.
    public func offering(_ offer: MoreTimeOffer?) -> WatchEvent {
        let more = offer.map(WireWord.known)
        switch self {
        case .lock(var e): e.more = more; return .lock(e)
        case .shieldHit(var e): e.more = more; return .shieldHit(e)
        case .tamper(var e): e.more = more; return .tamper(e)
        case .unlock, .refusal, .failure, .limit, .warning, .moreTime, .dropped, .unknown: return self
        }
    }

    private static func uids(_ users: [UInt32]?) -> [Int]? { users.map { $0.map(Int.init) } }
    private static func others(_ users: [UInt32]?, _ except: [UInt32]) -> [Int]? { users == nil && !except.isEmpty ? except.map(Int.init) : nil }
}
