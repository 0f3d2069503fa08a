/// `status` as blockc reads it (§6, §7): decoded once here, so that the renderer reads fields,
/// not keys. The daemon writes it as a `StatusDocument`. Lenient, as a reader of another version
/// must be: a key of the wrong type reads as absent.
public struct StatusReply: Equatable, Sendable {
    public var blocked: [BlockedReply]
    /// Without `--all`, the active activities only; `counts` says how many there are.
    public var activities: [ActivityReply]
    public var failures: [FailureReply]
    /// Every activity's count by kind (`activities`, `schedules`, `limits`, ...), whether
    /// listed or not.
    public var counts: [String: Int]
    /// The most activities the daemon registers (absent from an older daemon).
    public var maxActivities: Int?
    public var nextTransition: String?
    /// M2, M3: the requests, grants and delayed changes status shows.
    public var moreTime: RequestsReply
    public var enforcement: EnforcementReply
    /// Screen time: who is kept off the screen now (absent from an older daemon: none).
    public var screen: [ScreenReply]

    public init(_ o: JSONObject) {
        blocked = Reply.objects(o["blocked"]).map(BlockedReply.init)
        activities = Reply.objects(o["activities"]).map(ActivityReply.init)
        failures = Reply.objects(o["failures"]).map(FailureReply.init)
        var counts: [String: Int] = [:]
        for (key, value) in o["counts"]?.object ?? [:] { if let n = value.int { counts[key] = n } }
        self.counts = counts
        (maxActivities, nextTransition) = (o["maxActivities"]?.int, o["nextTransition"]?.string)
        moreTime = RequestsReply(o)
        enforcement = EnforcementReply(o["enforcement"]?.object ?? [:])
        screen = Reply.objects(o["screen"]).map(ScreenReply.init).filter(\.held)
    }
}

/// `status`'s `enforcement`: what acts and what does not, and why (§7 Truth, E5, E7, W2, W3).
public struct EnforcementReply: Equatable, Sendable {
    public var mode: String?
    public var hostsFile: String?
    /// Parts turned off or with nothing to act on: (part, why).
    public var off: [Off]
    public var apps: String?
    public var appsReason: String?
    public var browserPolicies: Browsers?
    public var browsersReason: String?
    public var configProblem: String?
    public var stateProblem: String?
    public var notEnforced: [NotEnforcedReply]
    /// §7 "Truth": blocked selections enforced in part, one entry per part left off.
    public var partial: [NotEnforcedReply]
    public var unblockPending: [NotEnforcedReply]
    public var pathRules: String?
    /// E5: open connections cut (absent: the felt layer says nothing).
    public var cutSockets: Bool?
    public var socketsCut: Int?
    public var cutSocketsProblem: String?
    public var firewall: Firewall?
    public var dns: DNS?
    public var sink: String?
    /// U3: the directory of the per-user tables the NSS module reads.
    public var userTables: String?

    public struct Off: Equatable, Sendable {
        public var part: String
        public var why: String

        public init(part: String, why: String) { (self.part, self.why) = (part, why) }
    }

    /// E7, W3: the browsers that get blockd's policies, their files, and what is closed.
    public struct Browsers: Equatable, Sendable {
        public var browsers: [String]
        public var files: [String]
        public var firefox: String?
        public var closed: [String]
        public var firefoxPrivateClosed: Bool
        /// B1: blockd's extension is installed in them (nil: not, and `extensionReason` says why).
        public var extensionInstalled: Bool
        public var extensionReason: String?

        init(_ o: JSONObject) {
            (browsers, files, firefox) = (Reply.strings(o["browsers"]), Reply.strings(o["files"]), o["firefox"]?.string)
            (closed, firefoxPrivateClosed) = (Reply.strings(o["closed"]), o["firefoxPrivateClosed"]?.bool == true)
            (extensionInstalled, extensionReason) = (o["extension"]?.object != nil, o["extensionReason"]?.string)
        }
    }

    /// E5, W2: new connections refused through nftables, and the allow-only windows.
    public struct Firewall: Equatable, Sendable {
        public var enabled: Bool
        public var learned: Int?
        public var table: String?
        public var until: String?
        public var problem: String?
        public var allowOnlyProblem: String?
        /// Nil when absent or not a list; the windows that are objects otherwise.
        public var allowOnly: [Window]?

        public struct Window: Equatable, Sendable {
            public var uids: [Int]
            public var hosts: Int?
            public var addresses: [String]

            public init(uids: [Int], hosts: Int?, addresses: [String]) { (self.uids, self.hosts, self.addresses) = (uids, hosts, addresses) }
        }

        init(_ o: JSONObject) {
            (enabled, learned, table, until) = (o["enabled"]?.bool == true, o["learned"]?.int, o["table"]?.string, o["until"]?.string)
            (problem, allowOnlyProblem) = (o["problem"]?.string, o["allowOnlyProblem"]?.string)
            allowOnly = o["allowOnly"]?.array.map {
                $0.compactMap(\.object).map { Window(uids: ($0["uids"]?.array ?? []).compactMap(\.int), hosts: $0["hosts"]?.int,
                                                     addresses: Reply.strings($0["addresses"])) }
            }
        }
    }

    /// E5: DNS lookups that fail, and why.
    public struct DNS: Equatable, Sendable {
        public var problem: String?
        public var failed: Int?
        public var lookups: Int?

        public init(problem: String?, failed: Int?, lookups: Int?) { (self.problem, self.failed, self.lookups) = (problem, failed, lookups) }
    }

    public init(_ e: JSONObject) {
        (mode, hostsFile, apps, appsReason) = (e["mode"]?.string, e["hostsFile"]?.string, e["apps"]?.string, e["appsReason"]?.string)
        off = Reply.objects(e["off"]).map { Off(part: $0["part"]?.string ?? "", why: $0["why"]?.string ?? "") }
        (browserPolicies, browsersReason) = (e["browserPolicies"]?.object.map(Browsers.init), e["browsersReason"]?.string)
        (configProblem, stateProblem, pathRules) = (e["configProblem"]?.string, e["stateProblem"]?.string, e["pathRules"]?.string)
        notEnforced = Reply.objects(e["notEnforced"]).map(NotEnforcedReply.init)
        partial = Reply.objects(e["partial"]).map(NotEnforcedReply.init)
        unblockPending = Reply.objects(e["unblockPending"]).map(NotEnforcedReply.init)
        (cutSockets, socketsCut, cutSocketsProblem) = (e["cutSockets"]?.bool, e["socketsCut"]?.int, e["cutSocketsProblem"]?.string)
        firewall = e["firewall"]?.object.map(Firewall.init)
        dns = e["dns"]?.object.map { DNS(problem: $0["problem"]?.string, failed: $0["failed"]?.int, lookups: $0["lookups"]?.int) }
        sink = e["sink"]?.string
        userTables = e["userTables"]?.object?["directory"]?.string
    }
}

/// `status` as the daemon writes it (§6): each member in its place, so the wire's order is
/// written down once (`json`), and the views a member gets (A1, U2) are changes to fields, not
/// to keys. `StatusReply` reads it back.
public struct StatusDocument: Equatable, Sendable {
    /// The version of the shape (docs/PROTOCOL.md, "Compliance"): keys are only ever added
    /// within a version; removing one or changing what one means raises it.
    public static let schema = 1
    /// The instant the answer is for, as the daemon's ISO 8601 text (`now` on the wire).
    public var answeredAt: String
    public var timeZone: String
    public var blocked: [BlockedReply]
    /// The active activities; with `all`, every one.
    public var activities: [ActivityReply]
    public var failures: [FailureReply]
    public var all: Bool
    public var counts: StatusCounts
    /// The engine's part (`mode`, `applied`, `notEnforced`, ...) and the enforcers' notes, whose
    /// keys are their own (E2, E5, E7, U3).
    public var enforcement: JSONObject
    public var nextTransition: String?
    public var maxActivities: Int
    /// The control server's counters (S3).
    public var server: JSONObject
    /// M2, M3: `requests`, `grants` and `delayed`, members of the document itself.
    public var moreTime: RequestsReply
    /// U2: the uid whose view it is, when it is one user's.
    public var viewer: Int?
    /// Screen time: who is kept off the screen now, and by what (as `screen` answers).
    public var screen: [ScreenReply] = []

    public init(answeredAt: String, timeZone: String, blocked: [BlockedReply], activities: [ActivityReply], failures: [FailureReply],
                all: Bool, counts: StatusCounts, enforcement: JSONObject, nextTransition: String?, maxActivities: Int,
                server: JSONObject, moreTime: RequestsReply, viewer: Int? = nil, screen: [ScreenReply] = []) {
        (self.answeredAt, self.timeZone, self.blocked, self.activities, self.failures) = (answeredAt, timeZone, blocked, activities, failures)
        (self.all, self.counts, self.enforcement, self.nextTransition) = (all, counts, enforcement, nextTransition)
        (self.maxActivities, self.server, self.moreTime, self.viewer, self.screen) = (maxActivities, server, moreTime, viewer, screen)
    }

    public var json: JSONObject {
        var o: JSONObject = [
            "schema": .int(Int64(StatusDocument.schema)), "now": .string(answeredAt), "timeZone": .string(timeZone),
            "blocked": .array(blocked.map { .object($0.json) }), "activities": .array(activities.map { .object($0.json) }),
            "failures": .array(failures.map { .object($0.json) }), "all": .bool(all), "counts": .object(counts.json),
            "enforcement": .object(enforcement), "nextTransition": Reply.text(nextTransition),
            "maxActivities": .int(Int64(maxActivities)), "server": .object(server),
        ]
        for (key, value) in moreTime.json { o[key] = value }
        o["screen"] = .array(screen.map { .object($0.json) })
        if let viewer { o["viewer"] = .int(Int64(viewer)) }
        return o
    }
}

/// `status`'s `counts`: every activity by kind, and how many are active, whether listed or not.
public struct StatusCounts: Equatable, Sendable {
    public var activities, active, blocks, schedules, limits: Int

    public init(activities: Int, active: Int, blocks: Int, schedules: Int, limits: Int) {
        (self.activities, self.active, self.blocks, self.schedules, self.limits) = (activities, active, blocks, schedules, limits)
    }

    public var json: JSONObject {
        ["activities": .int(Int64(activities)), "active": .int(Int64(active)), "blocks": .int(Int64(blocks)),
         "schedules": .int(Int64(schedules)), "limits": .int(Int64(limits))]
    }
}
