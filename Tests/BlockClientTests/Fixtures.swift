import BlockClient
import BlockCore
import Foundation
import ZoneInfo

/// Response objects built by the daemon's own encoders (Shapes, ActivityReply, BlockedReply,
/// FailureReply) from model values, at a fixed instant in a fixed zone (time is a
/// parameter). Only the `status` envelope, which Engine+Requests.swift assembles, is written
/// out here.
enum Fixture {
    static let tokyo = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    /// Sunday 29 November 2026, 13:05 in Tokyo: §6's example instant.
    static let now = at("2026-11-29T13:05:00+09:00")

    static func at(_ text: String) -> Date {
        // The fixtures are literals; a typo should fail loudly in the test that uses it.
        guard let date = try? TimeText.parseISO8601(text, clock: tokyo) else { fatalError("bad fixture time \(text)") }
        return date
    }

    static func output(color: Bool = false, now: Date = now) -> Output {
        Output(now: now, clock: tokyo, color: color)
    }

    /// The daemon's own encoders (BlockCore's Shapes and replies), so the fixtures cannot drift.
    static let shapes = Shapes(clock: tokyo)

    static let instagramBlock = shapes.activity(.block(Block(
        name: "instagram", selections: ["instagram"], start: at("2026-11-29T13:05:00+09:00"), end: at("2026-11-29T13:35:00+09:00"),
        origin: .client(uid: 1000))), at: now)

    static let studyBlock = shapes.activity(.block(Block(
        name: "study", selections: ["reddit", "youtube"], start: at("2026-11-29T12:00:00+09:00"), end: at("2026-11-30T07:00:00+09:00"),
        locked: true, origin: .client(uid: 1000))), at: now)

    /// Inactive at 13:05: its next window is tonight's, and it has no `remaining`.
    static let bedtime = shapes.activity(.schedule(Schedule(
        name: "bedtime", selections: ["instagram", "reddit"], start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0),
        origin: .config(file: "/etc/blockd/schedules.d/bedtime.conf"))), at: now)

    static let capFailure = shapes.failure(
        time: at("2026-11-29T12:58:00+09:00"), code: "activity-limit",
        message: "at most 20 activities; stop a block or remove a schedule to free a slot", uid: 1000, activity: nil)

    static let reddit = shapes.selection(Selection(name: "reddit", domains: ["reddit.com", "www.reddit.com"]))

    static func blocked(_ selection: String, until: String, by reasons: [String]) -> JSON {
        .object(BlockedReply(selection: selection, until: until, reasons: reasons).json)
    }

    static func status(blocked: [JSON], activities: [JSON], failures: [JSON] = []) -> JSONObject {
        [
            "now": "2026-11-29T13:05:00+09:00",
            "timeZone": "Asia/Tokyo",
            "blocked": .array(blocked),
            "activities": .array(activities),
            "failures": .array(failures),
            "enforcement": ["mode": "hosts+fanotify", "applied": ["instagram", "reddit"], "hostsFile": "/etc/hosts"],
            "nextTransition": "2026-11-29T13:35:00+09:00",
            "maxActivities": 20,
        ]
    }

    static let busyStatus = status(
        blocked: [
            blocked("instagram", until: "2026-11-29T13:35:00+09:00", by: ["instagram"]),
            blocked("reddit", until: "2026-11-30T07:00:00+09:00", by: ["study"]),
            blocked("youtube", until: "2026-11-30T07:00:00+09:00", by: ["study"]),
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

extension BlockcInvocation {
    /// blockc's command line read at the fixtures' instant and in their zone (`--until` is
    /// resolved against them).
    static func parse(_ arguments: [String], now: Date = Fixture.now) throws(CoreError) -> BlockcInvocation {
        try parse(arguments, now: now, clock: Fixture.tokyo)
    }

    /// The request the command line sends (nil: help or `--version`).
    var request: Request? {
        guard case .send(let request, _) = action else { return nil }
        return request
    }
}
