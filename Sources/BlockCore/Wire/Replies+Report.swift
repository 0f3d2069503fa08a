/// R2: `report`'s answer, written by `json` (UsageHistory.report in ProtocolReport.swift
/// fills it) and decoded once by `init(_:)`, so that the text and CSV renderers read fields, not
/// keys (the HTML page, ReportHTML, and the agent's weekly summary too). Every map is written in
/// the order of its names. Lenient, as a reader of another version must be: a figure of the
/// wrong type reads as 0 (it is still a row of the CSV), a missing map as empty (`used` as nil:
/// an answer from before it was sent says so).
public struct ReportReply: Equatable, Sendable {
    /// The version of the answer's shape (`UsageHistory.schema`).
    public var schema: Int?
    /// The first and last day, `2026-11-29`.
    public var from: String?
    public var to: String?
    /// The uid whose view it is; nil: the whole machine.
    public var user: Int?
    /// What the days are: the last N days, or a calendar week or month (`ReportArguments.Period`).
    public enum Period: String, CaseIterable, Sendable { case days, week, month }

    /// `days`, `week` or `month`; a newer daemon may say more.
    public var period: WireWord<Period>?
    public var days: [Day]
    /// The period before, for the change against it; nil when the ledger has none.
    public var previous: Previous?

    /// Seconds (or counts) by name.
    public typealias Figures = [String: Int]

    public struct Day: Equatable, Sendable {
        /// `2026-11-29` and `sun`.
        public var date: String
        public var weekday: String
        /// Seconds each selection was blocked, each app ran (`apps`) and was in focus
        /// (`foreground`), each site was in the focused window's visible tab while its user was
        /// active (`web`, B2), and on the machine's view each user's time in any counted app (`users`).
        public var blocked, apps, foreground, web, users: Figures
        /// Seconds each selection's apps were used; nil: not sent (a daemon from before it was,
        /// whose HTML page charts each app instead).
        public var used: Figures?
        /// Blocks started and stopped early, more time asked, granted and denied
        /// (`UsageHistory.Count`'s words; `count(_:)` reads one).
        public var counts: Figures
        /// The shield's hits per selection.
        public var shieldHits: Figures
        /// Each daily limit's day.
        public var limits: [String: LimitDay]
        /// Screen time: seconds each person was at the screen (a local login session of theirs
        /// active, unlocked, not idle for long), by uid; a person's view has theirs alone. nil:
        /// not sent (a daemon from before it counted screen time).
        public var screen: Figures?

        public init(date: String, weekday: String, blocked: Figures = [:], used: Figures? = [:], apps: Figures = [:],
                    foreground: Figures = [:], web: Figures = [:], users: Figures = [:], counts: Figures = [:], shieldHits: Figures = [:],
                    limits: [String: LimitDay] = [:], screen: Figures? = nil) {
            (self.date, self.weekday, self.blocked, self.used, self.apps, self.web) = (date, weekday, blocked, used, apps, web)
            (self.foreground, self.users, self.counts, self.shieldHits, self.limits) = (foreground, users, counts, shieldHits, limits)
            self.screen = screen
        }

        /// How many of `count` the day had (0 when not sent).
        public func count(_ count: UsageHistory.Count) -> Int { counts[count.rawValue] ?? 0 }

        /// `users` only on the machine's view (`machine`); `limits` only when a limit has the day.
        func json(machine: Bool) -> JSONObject {
            var o: JSONObject = ["date": .string(date), "weekday": .string(weekday), "blocked": ReportReply.json(blocked),
                                 "apps": ReportReply.json(apps), "foreground": ReportReply.json(foreground), "web": ReportReply.json(web)]
            if let used { o["used"] = ReportReply.json(used) }
            if let screen { o["screen"] = ReportReply.json(screen) }
            if machine { o["users"] = ReportReply.json(users) }
            o["shieldHits"] = ReportReply.json(shieldHits)
            if !limits.isEmpty {
                o["limits"] = .object(JSONObject(uniqueKeysWithValues: limits.sorted { $0.key < $1.key }.map { ($0.key, .object($0.value.json)) }))
            }
            o["counts"] = ReportReply.json(counts)
            return o
        }

        public init(_ o: JSONObject) {
            (date, weekday) = (o["date"]?.string ?? "", o["weekday"]?.string ?? "")
            (blocked, used, apps) = (ReportReply.figures(o["blocked"]), o["used"]?.object.map { ReportReply.figures(.object($0)) }, ReportReply.figures(o["apps"]))
            (foreground, users, web) = (ReportReply.figures(o["foreground"]), ReportReply.figures(o["users"]), ReportReply.figures(o["web"]))
            (counts, shieldHits) = (ReportReply.figures(o["counts"]), ReportReply.figures(o["shieldHits"]))
            var limits: [String: LimitDay] = [:]
            for (name, value) in o["limits"]?.object ?? [:] { limits[name] = LimitDay(value.object ?? [:]) }
            self.limits = limits
            screen = o["screen"]?.object.map { ReportReply.figures(.object($0)) }
        }
    }

    /// §9: a limit on one day: its selections' use and, on a day it limits, the allowance.
    public struct LimitDay: Equatable, Sendable {
        public var used: Int?
        public var allowance: Int?
        public var selections: [String]?
        /// A screen-time limit's action (it counts time at the screen, not selections); nil for
        /// a limit of apps and sites.
        public var session: String?

        public init(used: Int?, allowance: Int?, selections: [String]?, session: String? = nil) {
            (self.used, self.allowance, self.selections, self.session) = (used, allowance, selections, session)
        }

        var json: JSONObject {
            var o = JSONObject()
            if let used { o["used"] = .int(Int64(used)) }
            if let selections { o["selections"] = Reply.strings(selections) }
            if let allowance { o["allowance"] = .int(Int64(allowance)) }
            if let session { o["session"] = .string(session) }
            return o
        }

        public init(_ o: JSONObject) {
            (used, allowance, selections) = (o["used"]?.int, o["allowance"]?.int, o["selections"]?.array?.compactMap(\.string))
            session = o["session"]?.string
        }
    }

    /// The days before: `from` to `to`, with their blocked and used seconds (nil: not sent).
    public struct Previous: Equatable, Sendable {
        public var from: String?
        public var to: String?
        public var blocked: Figures?
        public var used: Figures?

        public init(from: String?, to: String?, blocked: Figures?, used: Figures?) {
            (self.from, self.to, self.blocked, self.used) = (from, to, blocked, used)
        }

        var json: JSONObject {
            var o = JSONObject()
            if let from { o["from"] = .string(from) }
            if let to { o["to"] = .string(to) }
            if let blocked { o["blocked"] = ReportReply.json(blocked) }
            if let used { o["used"] = ReportReply.json(used) }
            return o
        }

        public init(_ o: JSONObject) {
            (from, to) = (o["from"]?.string, o["to"]?.string)
            (blocked, used) = (o["blocked"]?.object.map { ReportReply.figures(.object($0)) }, o["used"]?.object.map { ReportReply.figures(.object($0)) })
        }
    }

    public init(schema: Int?, from: String?, to: String?, period: WireWord<Period>?, user: Int?, days: [Day], previous: Previous?) {
        (self.schema, self.from, self.to, self.period, self.user) = (schema, from, to, period, user)
        (self.days, self.previous) = (days, previous)
    }

    public var json: JSONObject {
        var o = JSONObject()
        if let schema { o["schema"] = .int(Int64(schema)) }
        if let from { o["from"] = .string(from) }
        if let to { o["to"] = .string(to) }
        if let period { o["period"] = .string(period.word) }
        if let user { o["user"] = .int(Int64(user)) }
        o["days"] = .array(days.map { .object($0.json(machine: user == nil)) })
        if let previous { o["previous"] = .object(previous.json) }
        return o
    }

    public init(_ o: JSONObject) {
        (schema, from, to) = (o["schema"]?.int, o["from"]?.string, o["to"]?.string)
        (user, period) = (o["user"]?.int, o["period"]?.string.map(WireWord.init))
        days = Reply.objects(o["days"]).map(Day.init)
        previous = o["previous"]?.object.map(Previous.init)
    }

    /// Figures by name, in the order of the names.
    static func json(_ figures: Figures) -> JSON {
        .object(JSONObject(uniqueKeysWithValues: figures.sorted { $0.key < $1.key }.map { ($0.key, JSON.int(Int64($0.value))) }))
    }

    static func figures(_ value: JSON?) -> Figures {
        var out: Figures = [:]
        for (name, figure) in value?.object ?? [:] { out[name] = figure.int ?? 0 }
        return out
    }
}

/// `stats`: the shield's hits per day and selection, by day then selection, as blockc reads
/// them (StatusSnapshot writes them). A count of the wrong type reads as 0.
public struct StatsReply: Equatable, Sendable {
    public struct Hits: Equatable, Sendable {
        /// `2026-11-29`.
        public var day: String
        public var selection: String
        public var hits: Int

        public init(day: String, selection: String, hits: Int) { (self.day, self.selection, self.hits) = (day, selection, hits) }
    }

    /// The answer's one member (and what `--json` prints of it).
    public static let key = "shieldHits"
    public var shieldHits: [Hits]

    public init(shieldHits: [Hits]) { self.shieldHits = shieldHits }

    public var json: JSONObject {
        [Self.key: .array(shieldHits.map { ["day": .string($0.day), "selection": .string($0.selection), "hits": .int(Int64($0.hits))] })]
    }

    public init(_ o: JSONObject) {
        shieldHits = Reply.objects(o[Self.key]).map {
            Hits(day: $0["day"]?.string ?? "", selection: $0["selection"]?.string ?? "", hits: $0["hits"]?.int ?? 0)
        }
    }
}
