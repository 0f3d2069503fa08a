import BlockCore
import Foundation
import Testing
@testable import BlockDaemon

@Suite("§9: limits in the engine")
struct LimitEngineTests {
    @Test("§9: a limit on selections without apps is refused, and nothing is registered")
    func uncountable() {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00")
        let r = h.send(#"limit-add {"name":"webonly","seconds":3600,"selections":["youtube"]}"#)
        guard case .error(let e) = r else { Issue.record("accepted: \(r.line)"); return }
        #expect(e.code == .usage && e.message.hasPrefix("limit 'webonly' could never be used up"), "\(e)")
        #expect(ok(h.send("limit-list"))?["limits"]?.array?.isEmpty == true)
    }

    @Test("§9: a limit blocks at the exact instant the allowance runs out, until local midnight")
    func reached() throws {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00")
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"],"warn":300}"#))
        #expect(h.enforcer.current == [])
        h.run { h.engine.usageChanged(running: ["games"]) }
        // Only the minute checkpoints and the warning fall before the limit.
        #expect(h.run { h.engine.nextTransition } == iso("2026-11-29T20:01:00.000+09:00"))
        h.advance(55 * 60)
        #expect(h.entries(.warning).count == 1)
        #expect(h.enforcer.current == [])
        h.advance(5 * 60)
        #expect(h.enforcer.current == ["steam"])
        let reached = try #require(h.entries(.limit).first)
        #expect(reached.message == "Daily limit 'games' reached (1h of use): steam blocked until 2026-11-30T00:00:00.000+09:00")
        let list = try #require(ok(h.send("limit-list"))?["limits"]?[0])
        #expect(list["used"] == 3600)
        #expect(list["left"] == 0)
        #expect(list["active"] == true)
        // The shield kills the app: usage stops; the block holds until midnight, then lifts.
        h.run { h.engine.usageChanged(running: []) }
        h.advance(2 * 3600 + 59 * 60)
        #expect(h.enforcer.current == ["steam"])
        h.advance(60)
        #expect(h.enforcer.current == [])
        #expect(h.entries(.unlock).last?.message == "Unblocked steam: limit 'games' ended")
    }

    @Test("T5: a manual block of steam ends while its daily limit is exhausted: steam stays blocked")
    func union() throws {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00")
        _ = ok(h.send(#"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#))
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":600}"#))
        h.run { h.engine.usageChanged(running: ["games"]) }  // steam ran despite the block? the limit still counts
        h.advance(60)
        h.run { h.engine.usageChanged(running: []) }
        h.advance(540)  // the manual block ends
        #expect(h.enforcer.current == ["steam"], "the exhausted limit keeps steam blocked")
        #expect(h.entries(.unlock).isEmpty)
        let status = try #require(ok(h.send("status")))
        #expect(status["blocked"]?[0]?["reasons"] == ["games"])
        #expect(status["blocked"]?[0]?["until"] == "2026-11-30T00:00:00.000+09:00")
    }

    @Test("§9: a restart keeps the day's usage and the reached limit; time while down is not counted")
    func restart() throws {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00")
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#))
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.advance(20 * 60)  // a checkpoint happens on each wake-up
        h.clock.advance(30 * 60)  // blockd dies; 30 minutes pass
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        let used = try #require(ok(h.send("limit-list"))?["limits"]?[0]?["used"]?.int)
        #expect(used == 20 * 60)
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.advance(40 * 60)
        #expect(h.enforcer.current == ["steam"])
    }
}

@Suite("§9: limit answers are current")
struct LimitDisplayTests {
    @Test("§9: limit list shows use up to the moment asked, not the last reconcile")
    func current() throws {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00")
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#))
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.clock.advance(30)  // no wake-up: the answer itself must count the running time
        let limit = try #require(ok(h.send("limit-list"))?["limits"]?[0])
        #expect(limit["used"] == 30)
        #expect(limit["running"] == true)
    }

    @Test("§9 per user: the usage monitor is told each limit's users, so a limit with users counts only their processes")
    func limitedAppsCarryScope() {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00", users: UserScopeTests.users)
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"],"users":["@kids"]}"#))
        _ = ok(h.send(#"limit-add {"name":"all","seconds":3600,"selections":["steam"]}"#))
        let followed = h.run { h.engine.limitedApps }
        #expect(followed["games"]?.users == [1001, 1004])
        #expect(followed["all"]?.users == nil, "a limit without users counts everyone's processes")
        #expect(followed["games"]?.apps.isEmpty == false && followed["games"]?.apps == followed["all"]?.apps)
    }
}
