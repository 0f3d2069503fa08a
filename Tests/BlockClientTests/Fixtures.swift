import BlockClient
import BlockCore
import Foundation

/// Response objects shaped exactly as Engine+Requests.swift and Shapes.swift build them (same
/// keys, same order), at a fixed instant in a fixed zone (time is a parameter).
enum Fixture {
    static let tokyo = LocalClock(TimeZone(identifier: "Asia/Tokyo")!)
    /// Sunday 29 November 2026, 13:05 in Tokyo: DESIGN §6's example instant.
    static let now = at("2026-11-29T13:05:00+09:00")

    static func at(_ text: String) -> Date {
        // The fixtures are literals; a typo should fail loudly in the test that uses it.
        guard let date = try? TimeText.parseISO8601(text, clock: tokyo) else { fatalError("bad fixture time \(text)") }
        return date
    }

    static func output(color: Bool = false, now: Date = now) -> Output {
        Output(now: now, clock: tokyo, color: color)
    }

    static let instagramBlock: JSON = [
        "name": "instagram", "kind": "block", "selections": ["instagram"], "active": true,
        "start": "2026-11-29T13:05:00+09:00", "end": "2026-11-29T13:35:00+09:00", "locked": false,
        "remaining": 1800, "origin": "client", "uid": 1000,
    ]

    static let studyBlock: JSON = [
        "name": "study", "kind": "block", "selections": ["reddit", "youtube"], "active": true,
        "start": "2026-11-29T12:00:00+09:00", "end": "2026-11-30T07:00:00+09:00", "locked": true,
        "remaining": 64500, "origin": "client", "uid": 1000,
    ]

    static let bedtime: JSON = [
        "name": "bedtime", "kind": "schedule", "selections": ["instagram", "reddit"], "active": false,
        "start": "2026-11-29T22:00:00+09:00", "end": "2026-11-30T07:00:00+09:00", "locked": false,
        "window": "22:00-07:00", "days": "daily", "remaining": 64500,
        "origin": "config", "file": "/etc/blockd/schedules.d/bedtime.conf",
    ]

    static let capFailure: JSON = [
        "time": "2026-11-29T12:58:00+09:00", "code": "activity-limit",
        "message": "at most 20 activities; stop a block or remove a schedule to free a slot", "uid": 1000,
    ]

    static let reddit: JSON = [
        "name": "reddit", "domains": ["reddit.com", "www.reddit.com"], "apps": [], "openURL": .null, "texts": [:],
    ]

    static func status(blocked: [JSON], activities: [JSON], failures: [JSON] = []) -> JSONObject {
        [
            "now": "2026-11-29T13:05:00+09:00",
            "timeZone": "Asia/Tokyo",
            "blocked": .array(blocked),
            "activities": .array(activities),
            "failures": .array(failures),
            "enforcement": ["mode": "hosts", "applied": ["instagram", "reddit"], "hostsFile": "/etc/hosts"],
            "nextTransition": "2026-11-29T13:35:00+09:00",
            "maxActivities": 20,
        ]
    }

    static let busyStatus = status(
        blocked: [
            ["selection": "instagram", "until": "2026-11-29T13:35:00+09:00", "reasons": ["instagram"]],
            ["selection": "reddit", "until": "2026-11-30T07:00:00+09:00", "reasons": ["study"]],
            ["selection": "youtube", "until": "2026-11-30T07:00:00+09:00", "reasons": ["study"]],
        ],
        activities: [instagramBlock, studyBlock, bedtime],
        failures: [capFailure])

    static let emptyStatus = status(blocked: [], activities: [])

    static func start(_ activity: JSON, outcome: String) -> JSONObject {
        var o = activity.object!
        o["outcome"] = .string(outcome)
        return o
    }
}
