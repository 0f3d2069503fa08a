/// What each `watch` event carries (§8), with its keys in the order the daemon writes them
/// (`fields`, nil: left out) and its lenient decoder. `extra`: keys a newer daemon added that
/// this build does not know, kept and written back, never dropped.
extension WatchEvent {
    /// A selection became blocked (or its end or reasons changed).
    public struct Lock: Equatable, Sendable {
        public var time: String
        public var selection: String
        /// When it is lifted; nil: no end in sight (`"until": null`).
        public var until: String?
        /// The activities that block it.
        public var reasons: [String]
        /// Per-user blocks: the uids it is blocked for (nil: the whole machine), and, for the
        /// whole machine, everyone but these uids (`Audience`).
        public var users: [Int]?
        public var except: [Int]?
        /// M4: what `blockc more SELECTION 15m` would get now, as the daemon decided it:
        /// `grant`, `ask` (a pending request) or `minute` (`MoreTimeOffer`; a newer daemon may
        /// say more). Nil: asking cannot succeed, so the agent shows no button (S4).
        public var more: WireWord<MoreTimeOffer>?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            [("time", .string(time)), ("selection", .string(selection)), ("until", WatchEvent.end(until)),
             ("reasons", WatchEvent.list(reasons)), ("users", WatchEvent.numbers(users)), ("except", WatchEvent.numbers(except)),
             ("more", WatchEvent.text(more?.word))]
        }

        init(_ o: JSONObject) {
            (time, selection, until) = (o["time"]?.string ?? "", o["selection"]?.string ?? "", o["until"]?.string)
            (reasons, users, except) = (WatchEvent.strings(o["reasons"]) ?? [], WatchEvent.ints(o["users"]), WatchEvent.ints(o["except"]))
            (more, extra) = (o["more"]?.string.map(WireWord.init), WatchEvent.extra(o))
        }

        init(time: String, selection: String, until: String?, reasons: [String], users: [Int]?, except: [Int]?) {
            (self.time, self.selection, self.until, self.reasons, self.users, self.except) = (time, selection, until, reasons, users, except)
        }
    }

    /// A selection stopped being blocked.
    public struct Unlock: Equatable, Sendable {
        public var time: String
        public var selection: String
        /// Why, in words.
        public var why: String
        /// Per-user blocks: the uids it was blocked for (nil: the whole machine), and `except`
        /// as for a lock.
        public var users: [Int]?
        public var except: [Int]?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            [("time", .string(time)), ("selection", .string(selection)), ("why", .string(why)),
             ("users", WatchEvent.numbers(users)), ("except", WatchEvent.numbers(except))]
        }

        init(_ o: JSONObject) {
            (time, selection, why) = (o["time"]?.string ?? "", o["selection"]?.string ?? "", o["why"]?.string ?? "")
            (users, except, extra) = (WatchEvent.ints(o["users"]), WatchEvent.ints(o["except"]), WatchEvent.extra(o))
        }

        init(time: String, selection: String, why: String, users: [Int]?, except: [Int]?) {
            (self.time, self.selection, self.why, self.users, self.except) = (time, selection, why, users, except)
        }
    }

    /// A refusal's or failure's error code and message.
    public struct Problem: Equatable, Sendable {
        public var time: String
        public var code: String
        public var message: String
        /// M4: whose request it was (nil: no one's, e.g. a configuration file's).
        public var uid: Int?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            [("time", .string(time)), ("code", .string(code)), ("message", .string(message)), ("uid", WatchEvent.number(uid))]
        }

        init(_ o: JSONObject) {
            (time, code, message) = (o["time"]?.string ?? "", o["code"]?.string ?? "", o["message"]?.string ?? "")
            (uid, extra) = (o["uid"]?.int, WatchEvent.extra(o))
        }

        init(time: String, code: String, message: String, uid: Int?) {
            (self.time, self.code, self.message, self.uid) = (time, code, message, uid)
        }
    }

    /// A shield hit, or a repaired edit of the hosts file (`tamper`).
    public struct Hit: Equatable, Sendable {
        public var time: String
        /// `denied-launch`, `killed` or `tamper`; a newer daemon may say more.
        public var kind: WireWord<ShieldHit.Kind>
        public var selection: String
        public var path: String
        public var app: String?
        /// When the selection is lifted; nil: no end in sight (`"until": null`).
        public var until: String?
        /// Per-user blocks: the uids the selection is blocked for (nil: the whole machine).
        public var users: [Int]?
        /// M4: as a lock's.
        public var more: WireWord<MoreTimeOffer>?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            [("time", .string(time)), ("kind", .string(kind.word)), ("selection", .string(selection)), ("path", .string(path)),
             ("app", WatchEvent.text(app)), ("until", WatchEvent.end(until)), ("users", WatchEvent.numbers(users)), ("more", WatchEvent.text(more?.word))]
        }

        init(_ o: JSONObject) {
            (time, kind, selection, path) = (o["time"]?.string ?? "", WireWord(o["kind"]?.string ?? ""), o["selection"]?.string ?? "", o["path"]?.string ?? "")
            (app, until, users, more) = (o["app"]?.string, o["until"]?.string, WatchEvent.ints(o["users"]), o["more"]?.string.map(WireWord.init))
            extra = WatchEvent.extra(o)
        }

        init(time: String, kind: WireWord<ShieldHit.Kind>, selection: String, path: String, app: String?, until: String?, users: [Int]?) {
            (self.time, self.kind, self.selection, self.path, self.app, self.until, self.users) = (time, kind, selection, path, app, until, users)
        }
    }

    /// §9: a daily limit was used up: its selections are blocked until `until`.
    public struct Limit: Equatable, Sendable {
        public var time: String
        /// The limit's name.
        public var activity: String
        public var selections: [String]
        public var until: String
        /// Per-user blocks: the uids the limit is for (nil: the whole machine).
        public var users: [Int]?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            [("time", .string(time)), ("activity", .string(activity)), ("selections", WatchEvent.list(selections)),
             ("until", .string(until)), ("users", WatchEvent.numbers(users))]
        }

        init(_ o: JSONObject) {
            (time, activity, selections) = (o["time"]?.string ?? "", o["activity"]?.string ?? "", WatchEvent.strings(o["selections"]) ?? [])
            (until, users, extra) = (o["until"]?.string ?? "", WatchEvent.ints(o["users"]), WatchEvent.extra(o))
        }

        init(time: String, activity: String, selections: [String], until: String, users: [Int]?) {
            (self.time, self.activity, self.selections, self.until, self.users) = (time, activity, selections, until, users)
        }
    }

    /// §9: a daily limit is about to be used up (one event per selection).
    public struct Warning: Equatable, Sendable {
        public var time: String
        /// The limit's name.
        public var activity: String
        public var selection: String
        /// When the block starts if the selection keeps being used, and how much use is left.
        public var starts: String
        public var remaining: String
        public var users: [Int]?
        /// A screen-time limit's: what is done to the sessions when it is used up (`lock`,
        /// `logout`, `suspend`, `poweroff`; nil: a limit of apps and sites).
        public var session: String?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            [("time", .string(time)), ("activity", .string(activity)), ("selection", .string(selection)), ("starts", .string(starts)),
             ("remaining", .string(remaining)), ("users", WatchEvent.numbers(users)), ("session", WatchEvent.text(session))]
        }

        init(_ o: JSONObject) {
            (time, activity, selection) = (o["time"]?.string ?? "", o["activity"]?.string ?? "", o["selection"]?.string ?? "")
            (starts, remaining) = (o["starts"]?.string ?? "", o["remaining"]?.string ?? "")
            (users, session, extra) = (WatchEvent.ints(o["users"]), o["session"]?.string, WatchEvent.extra(o))
        }

        init(time: String, activity: String, selection: String, starts: String, remaining: String, users: [Int]?, session: String? = nil) {
            (self.time, self.activity, self.selection, self.starts, self.remaining, self.users) = (time, activity, selection, starts, remaining, users)
            self.session = session
        }
    }

    /// S3: how many events a slow watcher missed.
    public struct Dropped: Equatable, Sendable {
        public var count: Int
        /// The newest missed event's time, if it had one.
        public var time: String?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] { [("count", .int(Int64(count))), ("time", WatchEvent.text(time))] }

        init(_ o: JSONObject) {
            (count, time, extra) = (o["count"]?.int ?? 0, o["time"]?.string, WatchEvent.extra(o))
        }

        init(count: Int, time: String?) { (self.count, self.time) = (count, time) }
    }
}
