@testable import BlockClient
import BlockCore
import Testing

/// M2, M3: `blockc status` says what waits for `Delay=` and lists requests and grants.
@Suite("blockc status: delayed loosenings, requests and grants")
struct MoreTimeOutputTests {
    static func status(delayed: [JSON] = [], requests: [JSON] = [], grants: [JSON] = []) -> JSONObject {
        var s = Fixture.busyStatus
        (s["delayed"], s["requests"], s["grants"]) = (.array(delayed), .array(requests), .array(grants))
        return s
    }

    @Test("M2: a delayed stop reads \"stop of 'work' takes effect at 13:07 (in 2m); 'blockc cancel work' to keep it\"")
    func delayedStop() {
        let text = Fixture.output().status(MoreTimeOutputTests.status(delayed: [
            ["pending": "work", "kind": "stop", "uid": 1000, "at": "2026-11-29T13:07:00+09:00"],
            ["pending": "bedtime", "kind": "schedule-remove", "uid": 1000, "at": "2026-11-29T13:10:00+09:00"],
        ]))
        #expect(text.contains("  stop of 'work' takes effect at 13:07 (in 2m); 'blockc cancel work' to keep it"), "\(text)")
        #expect(text.contains("  removal of schedule of 'bedtime' takes effect at 13:10 (in 5m); 'blockc cancel bedtime' to keep it"))
    }

    @Test("M3: pending requests and grants are listed, with who granted them")
    func requestsAndGrants() {
        var output = Fixture.output()
        output.userName = { [0: "root", 1000: "kid"][$0] }
        let text = output.status(MoreTimeOutputTests.status(
            requests: [["id": "m2", "selection": "steam", "state": "pending", "seconds": 900, "uid": 1000, "activities": ["games"],
                        "asked": "2026-11-29T13:00:00+09:00", "expires": "2026-11-29T14:00:00+09:00"]],
            grants: [["id": "m1", "selection": "instagram", "state": "granted", "uid": 1000, "grantedBy": 0, "activities": ["bedtime"],
                      "start": "2026-11-29T13:00:00+09:00", "end": "2026-11-29T13:20:00+09:00"]]))
        #expect(text.contains("Requests"))
        #expect(text.contains("m2") && text.contains("15m") && text.contains("kid"), "A1: people are named: \(text)")
        #expect(text.contains("More time"))
        #expect(text.contains("granted by root"))
    }

    @Test("nothing waiting, nothing said")
    func none() {
        let text = Fixture.output().status(MoreTimeOutputTests.status())
        #expect(!text.contains("Delay=") && !text.contains("Requests") && !text.contains("More time"))
    }
}
