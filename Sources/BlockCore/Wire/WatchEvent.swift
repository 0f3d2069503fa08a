/// One event of `watch` (§8), the object of an `EVENT {json}` line. The daemon builds
/// events with the constructors below and writes them with `json`; blockc and the agent read
/// them with `init(_:)`. Nothing else spells an event's keys. Instants stay the daemon's
/// ISO 8601 text (with its offset), so a reader shows exactly what the daemon said.
public struct WatchEvent: Equatable, Sendable {
    public enum Name: String, CaseIterable, Sendable {
        case lock, unlock, refusal, failure, shieldHit = "shield-hit", tamper, limit, warning, dropped
        /// M3: a more-time request or grant changed (`kind`: asked, granted, denied, expired, ended).
        case moreTime = "more-time"
    }

    /// The event word; a newer daemon's word that this build does not know is kept as it came.
    public var word: String
    public var name: Name? { Name(rawValue: word) }
    public var time: String?
    public var selection: String?
    /// A limit's selections.
    public var selections: [String]?
    /// A limit's name (limit, warning).
    public var activity: String?
    /// When the selection is lifted (lock, shield-hit, limit).
    public var until: String?
    /// The daemon said the block has no end in sight (`"until": null`), which is not the
    /// same as an event that has no `until` at all.
    public var noEnd = false
    /// The activities that block the selection (lock).
    public var reasons: [String]?
    /// Why a selection was unblocked, in words (unlock).
    public var why: String?
    /// A refusal's or failure's error code and message.
    public var code: String?
    public var message: String?
    /// A shield hit's kind (`denied-launch`, `killed`, `tamper`), its path and app.
    public var hitKind: String?
    public var path: String?
    public var app: String?
    /// When a limit's block starts, and how much use is left (warning).
    public var starts: String?
    public var remaining: String?
    /// How many events a slow watcher missed (dropped).
    public var count: Int?
    /// M4: what `blockc more SELECTION 15m` would get now (lock, shield-hit), as the daemon
    /// decided it: `grant`, `ask` (a pending request) or `minute` (only one more minute).
    /// Absent: asking cannot succeed, so the agent shows no button (S4).
    public var more: String?
    /// M4: who asked (more-time), so that an agent knows its own request's answer; whose
    /// request was refused or failed (refusal, failure).
    public var uid: Int?
    /// Per-user blocks: the uids the selection is (lock, shield-hit), was (unlock) or the limit
    /// is (limit, warning) blocked for; absent: the whole machine. The daemon sends a watcher
    /// only the events it may see (`isShown(to:)`).
    public var users: [Int]?
    /// Per-user blocks, lock and unlock without `users`: everyone but these uids, whose own
    /// view of the selection did not change the same way (`Audience`).
    public var except: [Int]?
    /// Keys this build does not know, from a newer daemon (all keys of an unknown event):
    /// shown, never dropped.
    public var unknown = JSONObject()

    public init(_ word: String, time: String? = nil) {
        self.word = word
        self.time = time
    }
}

extension WatchEvent {
    public static func lock(time: String, selection: String, until: String?, reasons: [String], users: [UInt32]? = nil,
                            except: [UInt32] = []) -> WatchEvent {
        var e = WatchEvent(Name.lock.rawValue, time: time)
        (e.selection, e.until, e.noEnd, e.reasons) = (selection, until, until == nil, reasons)
        e.scope(users, except: except)
        return e
    }

    public static func unlock(time: String, selection: String, why: String, users: [UInt32]? = nil, except: [UInt32] = []) -> WatchEvent {
        var e = WatchEvent(Name.unlock.rawValue, time: time)
        (e.selection, e.why) = (selection, why)
        e.scope(users, except: except)
        return e
    }

    /// A refusal (bad input or stale state) or a failure (ours to fix): `name` says which;
    /// `uid` whose request it was (nil: no one's, e.g. a configuration file's).
    public static func problem(_ name: Name, time: String, code: String, message: String, uid: UInt32? = nil) -> WatchEvent {
        var e = WatchEvent(name.rawValue, time: time)
        (e.code, e.message, e.uid) = (code, message, uid.map(Int.init))
        return e
    }

    /// A shield hit, or (`name` .tamper) a repaired edit of the hosts file.
    public static func hit(_ name: Name, time: String, kind: String, selection: String, path: String, app: String?, until: String?,
                           users: [UInt32]? = nil) -> WatchEvent {
        var e = WatchEvent(name.rawValue, time: time)
        (e.hitKind, e.selection, e.path, e.app, e.until, e.noEnd) = (kind, selection, path, app, until, until == nil)
        e.scope(users)
        return e
    }

    public static func limit(time: String, activity: String, selections: [String], until: String, users: [UInt32]? = nil) -> WatchEvent {
        var e = WatchEvent(Name.limit.rawValue, time: time)
        (e.activity, e.selections, e.until) = (activity, selections, until)
        e.scope(users)
        return e
    }

    public static func warning(time: String, activity: String, selection: String, starts: String, remaining: String,
                               users: [UInt32]? = nil) -> WatchEvent {
        var e = WatchEvent(Name.warning.rawValue, time: time)
        (e.activity, e.selection, e.starts, e.remaining) = (activity, selection, starts, remaining)
        e.scope(users)
        return e
    }

    private mutating func scope(_ uids: [UInt32]?, except: [UInt32] = []) {
        users = uids.map { $0.map(Int.init) }
        self.except = uids == nil && !except.isEmpty ? except.map(Int.init) : nil
    }

    public static func dropped(count: Int, time: String?) -> WatchEvent {
        var e = WatchEvent(Name.dropped.rawValue, time: time)
        e.count = count
        return e
    }
}

extension WatchEvent {
    /// Each event's keys in the order the daemon writes them; absent keys are left out.
    static func keys(_ name: Name?) -> [String] {
        switch name {
        case .lock: ["time", "selection", "until", "reasons", "users", "except", "more"]
        case .unlock: ["time", "selection", "why", "users", "except"]
        case .refusal, .failure: ["time", "code", "message", "uid"]
        case .shieldHit, .tamper: ["time", "kind", "selection", "path", "app", "until", "users", "more"]
        case .limit: ["time", "activity", "selections", "until", "users"]
        case .warning: ["time", "activity", "selection", "starts", "remaining", "users"]
        case .dropped: ["count", "time"]
        case .moreTime: ["time", "kind", "activity", "selection", "until", "message", "uid"]
        case nil: []
        }
    }

    static let allKeys = ["time", "kind", "activity", "selection", "selections", "path", "app", "until", "starts",
                          "remaining", "reasons", "why", "code", "message", "count", "more", "uid", "users", "except"]

    /// The one encoder: the `EVENT` line's object.
    public var json: JSONObject {
        var o: JSONObject = ["event": .string(word)]
        for key in WatchEvent.keys(name) {
            if let value = self[key] { o[key] = value }
        }
        for (key, value) in unknown where o[key] == nil { o[key] = value }
        return o
    }

    /// The one decoder. Lenient, as a reader of a newer daemon must be: a key of the wrong
    /// type reads as absent, and keys this build does not know are kept in `unknown`.
    public init(_ o: JSONObject) {
        self.init(o["event"]?.string ?? "")
        time = o["time"]?.string
        noEnd = o["until"] == .null
        (hitKind, activity, selection, path, app) = (o["kind"]?.string, o["activity"]?.string, o["selection"]?.string,
                                                     o["path"]?.string, o["app"]?.string)
        (until, starts, remaining, why) = (o["until"]?.string, o["starts"]?.string, o["remaining"]?.string, o["why"]?.string)
        (code, message) = (o["code"]?.string, o["message"]?.string)
        count = o["count"]?.int
        (more, uid) = (o["more"]?.string, o["uid"]?.int)
        selections = o["selections"].flatMap(WatchEvent.strings)
        reasons = o["reasons"].flatMap(WatchEvent.strings)
        if case .array(let items)? = o["users"] { users = items.compactMap(\.int) }
        if case .array(let items)? = o["except"] { except = items.compactMap(\.int) }
        // An unknown event keeps every key, in the order it came, to be shown as it was.
        for (key, value) in o where key != "event" && (name == nil || !WatchEvent.allKeys.contains(key)) { unknown[key] = value }
    }

    public subscript(key: String) -> JSON? {
        func text(_ s: String?) -> JSON? { s.map(JSON.string) }
        func list(_ a: [String]?) -> JSON? { a.map { .array($0.map(JSON.string)) } }
        switch key {
        case "time": return text(time)
        case "kind": return text(hitKind)
        case "activity": return text(activity)
        case "selection": return text(selection)
        case "selections": return list(selections)
        case "path": return text(path)
        case "app": return text(app)
        case "until":
            if let until { return .string(until) }
            return noEnd ? JSON.null : Optional<JSON>.none
        case "starts": return text(starts)
        case "remaining": return text(remaining)
        case "reasons": return list(reasons)
        case "why": return text(why)
        case "code": return text(code)
        case "message": return text(message)
        case "count": return count.map { .int(Int64($0)) }
        case "more": return text(more)
        case "uid": return uid.map { .int(Int64($0)) }
        case "users": return users.map { .array($0.map { .int(Int64($0)) }) }
        case "except": return except.map { .array($0.map { .int(Int64($0)) }) }
        default: return unknown[key]
        }
    }

    static func strings(_ value: JSON) -> [String]? {
        guard case .array(let items) = value else { return nil }
        return items.compactMap(\.string)
    }
}
