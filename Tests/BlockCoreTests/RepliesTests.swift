import BlockCore
import Foundation
import Testing
import ZoneInfo

/// The `status` objects clients read back: Shapes encodes them through ActivityReply,
/// BlockedReply and FailureReply, and blockc decodes them with the same types.
@Suite("status replies: one encoder, one decoder (DESIGN §6)")
struct RepliesTests {
    static let tokyo = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    static let now = try! TimeText.parseISO8601WithOffset("2026-11-29T13:05:00.000+09:00")
    static let shapes = Shapes(clock: tokyo)

    static let activities: [Activity] = [
        .block(Block(name: "instagram", selections: ["instagram"], start: now, end: now + 1800, origin: .client(uid: 1000))),
        .schedule(Schedule(name: "bedtime", selections: ["reddit"], days: try! WeekdaySet.parse("mon-fri"),
                           start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0), origin: .config(file: "/b.conf"))),
        .limit(Limit(name: "games", selections: ["steam"], seconds: 3600)),
    ]

    @Test("an activity decodes to what was encoded, key for key", arguments: activities)
    func activityRoundTrip(activity: Activity) throws {
        let reply = RepliesTests.shapes.activityReply(activity, at: RepliesTests.now)
        let object = try #require(RepliesTests.shapes.activity(activity, at: RepliesTests.now).object)
        #expect(object == reply.json)
        #expect(ActivityReply(object) == reply)
    }

    @Test("the wire shape of an activity is pinned: an inactive schedule has no 'remaining'")
    func activityShape() throws {
        let block = JSON.object(RepliesTests.shapes.activityReply(RepliesTests.activities[0], at: RepliesTests.now).json).serialized()
        #expect(block == #"{"name":"instagram","kind":"block","selections":["instagram"],"active":true,"start":"2026-11-29T13:05:00.000+09:00","end":"2026-11-29T13:35:00.000+09:00","locked":false,"remaining":1800,"origin":"client","uid":1000}"#)
        let schedule = RepliesTests.shapes.activityReply(RepliesTests.activities[1], at: RepliesTests.now)
        #expect(!schedule.active && schedule.remaining == nil && schedule.window == "22:00-07:00" && schedule.days == "mon-fri")
        #expect(schedule.json.keys == ["name", "kind", "selections", "active", "start", "end", "locked", "window", "days", "origin", "file"])
    }

    @Test("blocked and failure objects round-trip; a null end and a missing uid stay so")
    func blockedAndFailure() {
        let blocked = BlockedReply(selection: "x", until: nil, reasons: ["a"])
        #expect(JSON.object(blocked.json).serialized() == #"{"selection":"x","until":null,"reasons":["a"]}"#)
        #expect(BlockedReply(blocked.json) == blocked)
        let failure = FailureReply(time: "2026-11-29T12:58:00.000+09:00", code: "hook", message: "m", activity: "b")
        #expect(JSON.object(failure.json).serialized() == #"{"time":"2026-11-29T12:58:00.000+09:00","code":"hook","message":"m","activity":"b"}"#)
        #expect(FailureReply(failure.json) == failure)
        #expect(ActivityReply(["name": 5, "active": "yes"]).name == "" && !ActivityReply(["active": "yes"]).active, "wrong types read as absent")
    }
}
