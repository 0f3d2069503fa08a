import FoundationEssentials

/// F3: `blockd.prom`, what blockd writes into `MetricsDirectory=` for node_exporter's textfile
/// collector, in the Prometheus text exposition format (0.0.4) that collector reads: `# HELP`
/// and `# TYPE` before each family, counters named `…_total`, label values escaped.
///
/// Pure: rendered from the `status` object (the documented, versioned shape compliance
/// scripts read too, so the two cannot disagree) and the event counts the daemon keeps since
/// its start. The same inputs give the same bytes.
public enum Metrics {
    public static let fileName = "blockd.prom"

    /// Events counted since blockd started; counters start again from zero with the process,
    /// as Prometheus expects of them.
    public struct Counters: Equatable, Sendable {
        public var locks = 0
        public var unlocks = 0
        /// By kind, each written as its word (`kind="denied-launch"`).
        public var shieldHits: [ShieldHit.Kind: Int] = [.deniedLaunch: 0, .killed: 0, .tamper: 0]
        /// Requests asked, and their answers (`outcome="asked"`).
        public var moreTime: [WatchEvent.MoreTime.Kind: Int] = [.asked: 0, .granted: 0, .denied: 0]
        /// T4: refused requests by error code (`code="locked"`): the rules working, not failures.
        /// Seeded with the codes a refusal of a well-formed change has (`Core.toldCodes` less
        /// the failures), so each series is there from the start.
        public var refusals: [String: Int] = ["activity-limit": 0, "busy": 0, "exists": 0, "locked": 0, "permission-denied": 0]

        public init() {}

        /// Counts one event as streamed to `watch` (its `event` word and `kind`). A kind this
        /// build does not know (a newer daemon's) is not counted.
        public mutating func count(_ event: WatchEvent) {
            switch event {
            case .lock: locks += 1
            case .unlock: unlocks += 1
            case .shieldHit(let hit):
                switch hit.kind {
                case .known(let kind): shieldHits[kind, default: 0] += 1
                case .unknown: break
                }
            case .tamper: shieldHits[.tamper, default: 0] += 1
            case .moreTime(let m):
                switch m.kind {
                case .known(let kind):
                    switch kind {
                    case .asked, .granted, .denied: moreTime[kind, default: 0] += 1
                    case .expired, .ended, .cancelled: break
                    }
                case .unknown: break
                }
            case .refusal(let r): refusals[r.code, default: 0] += 1
            case .failure, .limit, .warning, .dropped, .unknown: break
            }
        }
    }

    /// The file for `status` (a `status --json` object, every activity listed or not) and
    /// `counters`. `lastEnforcement`: when the enforcers last converged without a failure.
    public static func render(status: JSONObject, counters: Counters, version: String, lastEnforcement: Date?) -> String {
        var out = Writer()
        out.family("blockd_info", "gauge", "blockd's version; always 1", [(["version": version], 1)])
        // The file is world-readable (node_exporter runs as its own user), so a selection
        // blocked only for some users is counted, never named: its name (an ad-hoc one is the
        // site itself) and whose it is stay with that user's table and view (U1, U3).
        let blocked = status["blocked"]?.array ?? []
        let machineWide = blocked.filter { $0["users"] == nil }.compactMap { $0["selection"]?.string }
        out.family("blockd_blocked", "gauge", "1 for each selection blocked now for the whole machine",
                   machineWide.sorted().map { (["selection": $0], 1) })
        out.family("blockd_blocked_per_user", "gauge", "Selections blocked now for some users only (counted, not named: the file is world-readable)",
                   [([:], Double(blocked.count - machineWide.count))])
        let counts = status["counts"]?.object ?? [:]
        out.family("blockd_activities", "gauge", "Registered activities by kind (blocks, schedules, limits)",
                   [("block", "blocks"), ("schedule", "schedules"), ("limit", "limits")].map { (["kind": $0.0], Double(counts[$0.1]?.int ?? 0)) })
        out.family("blockd_activities_active", "gauge", "Activities in force now (a block running, a schedule's window open, a limit used up)",
                   [([:], Double(counts["active"]?.int ?? 0))])
        out.family("blockd_locks_total", "counter", "Times a selection became blocked since blockd started", [([:], Double(counters.locks))])
        out.family("blockd_unlocks_total", "counter", "Times a selection stopped being blocked since blockd started", [([:], Double(counters.unlocks))])
        out.family("blockd_shield_hits_total", "counter", "Denied launches, stopped processes and repaired edits since blockd started",
                   counters.shieldHits.map { ($0.key.rawValue, $0.value) }.sorted { $0.0 < $1.0 }.map { (["kind": $0.0], Double($0.1)) })
        out.family("blockd_more_time_total", "counter", "More-time requests asked, granted and denied since blockd started",
                   counters.moreTime.map { ($0.key.rawValue, $0.value) }.sorted { $0.0 < $1.0 }.map { (["outcome": $0.0], Double($0.1)) })
        out.family("blockd_refusals_total", "counter", "Requests refused since blockd started (permissions, locks, the cap), by error code",
                   counters.refusals.sorted { $0.key < $1.key }.map { (["code": $0.key], Double($0.value)) })
        var failures: [String: Int] = [:]
        for failure in status["failures"]?.array ?? [] { failures[failure["code"]?.string ?? "unknown", default: 0] += 1 }
        out.family("blockd_failures", "gauge", "Current failures (blockc status; resolved ones and refusals are not counted), by error code",
                   failures.sorted { $0.key < $1.key }.map { (["code": $0.key], Double($0.value)) })
        let enforcement = status["enforcement"]?.object ?? [:]
        let off = enforcement["off"]?.array?.compactMap { $0["part"]?.string } ?? []
        let notEnforced = enforcement["notEnforced"]?.array?.count ?? 0
        let degraded = !off.isEmpty || notEnforced > 0 || enforcement["stateProblem"] != nil || enforcement["configProblem"] != nil
        out.family("blockd_enforcement_degraded", "gauge",
                   "1 when an enforcement part is off, a selection is not enforced, or the state or configuration has a problem",
                   [([:], degraded ? 1 : 0)])
        out.family("blockd_enforcement_part_off", "gauge", "1 for each enforcement part that does nothing now (blockc status says why)",
                   off.sorted().map { (["part": $0], 1) })
        out.family("blockd_not_enforced", "gauge", "Selections blocked but not enforced now", [([:], Double(notEnforced))])
        if let lastEnforcement {
            out.family("blockd_last_enforcement_timestamp_seconds", "gauge", "When the enforcers last converged without a failure (Unix time)",
                       [([:], (lastEnforcement.timeIntervalSince1970 * 1000).rounded() / 1000)])
        }
        return out.text
    }

    /// Prometheus text format (exposition format 0.0.4).
    struct Writer {
        var text = ""

        mutating func family(_ name: String, _ type: String, _ help: String, _ samples: [([String: String], Double)]) {
            text += "# HELP \(name) \(escapeHelp(help))\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples {
                text += name
                if !labels.isEmpty {
                    text += "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(escapeLabel($0.value))\"" }.joined(separator: ",") + "}"
                }
                text += " \(number(value))\n"
            }
        }

        /// Integers without a fraction; others with at most three decimals.
        func number(_ value: Double) -> String {
            if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
            return String(value)
        }

        /// In HELP text a backslash and a line feed are escaped.
        func escapeHelp(_ text: String) -> String {
            text.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
        }

        /// In a label value a backslash, a double quote and a line feed are escaped.
        func escapeLabel(_ text: String) -> String {
            escapeHelp(text).replacing("\"", with: "\\\"")
        }
    }
}
