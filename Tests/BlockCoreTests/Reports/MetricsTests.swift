import FoundationEssentials
import Testing
@testable import BlockCore

/// F3: `blockd.prom`, rendered from the status object and the counted events.
@Suite struct MetricsTests {
    static let status: JSONObject = [
        "schema": 1,
        "blocked": [["selection": "youtube"], ["selection": "reddit"]],
        "counts": ["activities": 4, "active": 2, "blocks": 1, "schedules": 2, "limits": 1],
        "failures": [["code": "enforcementFailed"], ["code": "enforcementFailed"], ["code": "hookFailed"]],
        "enforcement": [
            "off": [["part": "nss", "why": "…"]],
            "notEnforced": [["selection": "reddit", "cause": "…"]],
        ],
    ]

    @Test("F3, T4: every family has HELP and TYPE; gauges come from status, counters from events (refusals counted by code, not failures)")
    func rendersStatus() {
        var counters = Metrics.Counters()
        for event: JSONObject in [
            ["event": "lock", "selection": "youtube"], ["event": "lock", "selection": "reddit"], ["event": "unlock", "selection": "x"],
            ["event": "shield-hit", "kind": "denied-launch"], ["event": "shield-hit", "kind": "killed"], ["event": "tamper", "kind": "tamper"],
            ["event": "more-time", "kind": "asked"], ["event": "more-time", "kind": "granted"], ["event": "more-time", "kind": "expired"],
            ["event": "refusal", "code": "permission-denied"], ["event": "something-newer"],
        ] { counters.count(WatchEvent(event)) }
        let text = Metrics.render(status: Self.status, counters: counters, version: "0.1.0",
                                  lastEnforcement: Date(timeIntervalSince1970: 1_764_640_000.25))
        #expect(text == """
            # HELP blockd_info blockd's version; always 1
            # TYPE blockd_info gauge
            blockd_info{version="0.1.0"} 1
            # HELP blockd_blocked 1 for each selection blocked now for the whole machine
            # TYPE blockd_blocked gauge
            blockd_blocked{selection="reddit"} 1
            blockd_blocked{selection="youtube"} 1
            # HELP blockd_blocked_per_user Selections blocked now for some users only (counted, not named: the file is world-readable)
            # TYPE blockd_blocked_per_user gauge
            blockd_blocked_per_user 0
            # HELP blockd_activities Registered activities by kind (blocks, schedules, limits)
            # TYPE blockd_activities gauge
            blockd_activities{kind="block"} 1
            blockd_activities{kind="schedule"} 2
            blockd_activities{kind="limit"} 1
            # HELP blockd_activities_active Activities in force now (a block running, a schedule's window open, a limit used up)
            # TYPE blockd_activities_active gauge
            blockd_activities_active 2
            # HELP blockd_locks_total Times a selection became blocked since blockd started
            # TYPE blockd_locks_total counter
            blockd_locks_total 2
            # HELP blockd_unlocks_total Times a selection stopped being blocked since blockd started
            # TYPE blockd_unlocks_total counter
            blockd_unlocks_total 1
            # HELP blockd_shield_hits_total Denied launches, stopped processes and repaired edits since blockd started
            # TYPE blockd_shield_hits_total counter
            blockd_shield_hits_total{kind="denied-launch"} 1
            blockd_shield_hits_total{kind="killed"} 1
            blockd_shield_hits_total{kind="tamper"} 1
            # HELP blockd_more_time_total More-time requests asked, granted and denied since blockd started
            # TYPE blockd_more_time_total counter
            blockd_more_time_total{outcome="asked"} 1
            blockd_more_time_total{outcome="denied"} 0
            blockd_more_time_total{outcome="granted"} 1
            # HELP blockd_refusals_total Requests refused since blockd started (permissions, locks, the cap), by error code
            # TYPE blockd_refusals_total counter
            blockd_refusals_total{code="activity-limit"} 0
            blockd_refusals_total{code="busy"} 0
            blockd_refusals_total{code="exists"} 0
            blockd_refusals_total{code="locked"} 0
            blockd_refusals_total{code="permission-denied"} 1
            # HELP blockd_failures Current failures (blockc status; resolved ones and refusals are not counted), by error code
            # TYPE blockd_failures gauge
            blockd_failures{code="enforcementFailed"} 2
            blockd_failures{code="hookFailed"} 1
            # HELP blockd_enforcement_degraded 1 when an enforcement part is off, a selection is not enforced, or the state or configuration has a problem
            # TYPE blockd_enforcement_degraded gauge
            blockd_enforcement_degraded 1
            # HELP blockd_enforcement_part_off 1 for each enforcement part that does nothing now (blockc status says why)
            # TYPE blockd_enforcement_part_off gauge
            blockd_enforcement_part_off{part="nss"} 1
            # HELP blockd_not_enforced Selections blocked but not enforced now
            # TYPE blockd_not_enforced gauge
            blockd_not_enforced 1
            # HELP blockd_last_enforcement_timestamp_seconds When the enforcers last converged without a failure (Unix time)
            # TYPE blockd_last_enforcement_timestamp_seconds gauge
            blockd_last_enforcement_timestamp_seconds 1764640000.25

            """)
    }

    @Test("F3: nothing blocked and nothing wrong gives zeros and empty families, never a missing HELP")
    func idle() {
        let text = Metrics.render(status: ["counts": ["activities": 0, "active": 0], "enforcement": [:]], counters: Metrics.Counters(),
                                  version: "0.1.0", lastEnforcement: nil)
        #expect(text.contains("# TYPE blockd_blocked gauge\n# HELP blockd_blocked_per_user "))
        #expect(text.contains("blockd_blocked_per_user 0\n# HELP blockd_activities "))
        #expect(text.contains("blockd_enforcement_degraded 0\n") && text.contains("blockd_locks_total 0\n"))
        #expect(!text.contains("blockd_last_enforcement_timestamp_seconds"), "no apply yet: no timestamp to claim")
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            #expect(text.contains("# TYPE \(name) "), "\(name) has its TYPE line")
        }
    }

    /// blockd.prom is world-readable (node_exporter reads it as its own user): a selection
    /// blocked only for some users used to be a `selection` label, so any user learnt the site
    /// of a per-user block. Such selections are counted; only machine-wide ones are named.
    @Test("F3: a selection blocked only for some users is counted, never named, nor are its users; one blocked for everyone too is named")
    func perUserCounted() {
        let status: JSONObject = [
            "blocked": [
                ["selection": "secret-site.example", "users": ["kid"], "reasons": ["secret-site.example"]],
                ["selection": "diary", "users": ["kid", "@teens"], "reasons": ["night"]],
                ["selection": "youtube", "reasons": ["focus", "night"]],
            ],
            "counts": [:], "enforcement": ["notEnforced": [["selection": "diary", "cause": "kid's table cannot be written"]]],
        ]
        let text = Metrics.render(status: status, counters: Metrics.Counters(), version: "1", lastEnforcement: nil)
        #expect(text.contains("blockd_blocked{selection=\"youtube\"} 1\n") && text.contains("blockd_blocked_per_user 2\n"), "\(text)")
        for secret in ["secret-site", "diary", "kid", "teens", "night"] {
            #expect(!text.contains(secret), "'\(secret)' is not in the world-readable file:\n\(text)")
        }
    }

    @Test("F3: label values are escaped: a backslash, a double quote and a line feed")
    func escaping() {
        let status: JSONObject = ["blocked": [["selection": "a\\b\"c\nd"]], "counts": [:], "enforcement": [:]]
        let text = Metrics.render(status: status, counters: Metrics.Counters(), version: "1", lastEnforcement: nil)
        #expect(text.contains(#"blockd_blocked{selection="a\\b\"c\nd"} 1"#))
    }
}
