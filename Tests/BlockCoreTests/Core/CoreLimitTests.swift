import Foundation
import Testing
@testable import BlockCore

/// §9 on the core: a limit counts its apps' running time, blocks at the exact instant it is
/// used up, until local midnight, and its answers count up to the moment asked. The restart
/// case stays with the engine's harness.
@Suite("§9: limits, decided by the core")
struct CoreLimitTests {
    static let evening = "2026-11-29T20:00:00.000+09:00"

    @Test("§9, B3: a limit on sites alone is accepted from a client: web time counts it")
    func sitesAlone() throws {
        var d = FakeEdge(at: Self.evening)
        let added = try #require(ok(d.run(#"limit-add {"name":"webonly","seconds":3600,"selections":["youtube"]}"#)))
        #expect(added["name"] == "webonly", "\(added)")
        #expect(ok(d.run("limit-list"))?["limits"]?.array?.count == 1)
    }

    @Test("§9: a limit blocks at the exact instant the allowance runs out, until local midnight")
    func reached() throws {
        var d = FakeEdge(at: Self.evening)
        _ = ok(d.run(#"limit-add {"name":"games","seconds":3600,"selections":["steam"],"warn":300}"#))
        #expect(d.enforced == [])
        d.usage(running: ["games"])
        // Only the minute checkpoints and the warning fall before the limit.
        #expect(d.core.nextTransition == at("2026-11-29T20:01:00.000+09:00"))
        d.advance(55 * 60)
        #expect(d.entries(.warning).count == 1)
        #expect(d.enforced == [])
        d.advance(5 * 60)
        #expect(d.enforced == ["steam"])
        let reached = try #require(d.entries(.limit).first)
        // §9: the limit is for everyone, and it was root's time that used root's allowance up.
        #expect(reached.message == "Daily limit 'games' reached (1h of use): steam blocked for root until Mon 30 Nov 00:00:00")
        let list = try #require(ok(d.run("limit-list"))?["limits"]?[0])
        #expect(list["used"] == 3600)
        #expect(list["left"] == 0)
        #expect(list["active"] == true)
        // The shield kills the app: usage stops; the block holds until midnight, then lifts.
        d.usage(running: [])
        d.advance(2 * 3600 + 59 * 60)
        #expect(d.enforced == ["steam"])
        d.advance(60)
        #expect(d.enforced == [])
        #expect(d.entries(.unlock).last?.message == "Unblocked steam for root: limit 'games' ended")
    }

    @Test("T5: a manual block of steam ends while its daily limit is exhausted: steam stays blocked")
    func union() throws {
        var d = FakeEdge(at: Self.evening)
        _ = ok(d.run(#"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#))
        _ = ok(d.run(#"start {"selections":["steam"],"seconds":600}"#))
        d.usage(running: ["games"])  // steam ran despite the block? the limit still counts
        d.advance(60)
        d.usage(running: [])
        d.advance(540)  // the manual block ends
        #expect(d.enforced == ["steam"], "the exhausted limit keeps steam blocked")
        // §9: the allowance used up is root's own: for everyone else the block's end lifts steam.
        #expect(d.entries(.unlock).map(\.message) == ["Unblocked steam for everyone but root: timed block 'steam' ended (10m)"])
        let blocked = try #require(d.core.blockedNow("steam").map { d.core.shapes.blocked($0) })  // as status shows it
        #expect(blocked["reasons"] == ["games"])
        #expect(blocked["until"] == "2026-11-30T00:00:00.000+09:00")
    }

    @Test("§9: limit list shows use up to the moment asked, not the last reconcile")
    func current() throws {
        var d = FakeEdge(at: Self.evening)
        _ = ok(d.run(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#))
        d.usage(running: ["games"])
        d.pass(30)  // no wake-up: the answer itself must count the running time
        let limit = try #require(ok(d.run("limit-list"))?["limits"]?[0])
        #expect(limit["used"] == 30)
        #expect(limit["running"] == true)
    }

    @Test("§9 per user: the usage monitor is told each limit's users, so a limit with users counts only their processes")
    func limitedAppsCarryScope() {
        var d = FakeEdge(at: Self.evening, users: CoreUserScopeTests.users)
        _ = ok(d.run(#"limit-add {"name":"games","seconds":3600,"selections":["steam"],"users":["@kids"]}"#))
        _ = ok(d.run(#"limit-add {"name":"all","seconds":3600,"selections":["steam"]}"#))
        let followed = d.core.limitedApps
        #expect(followed["games"]?.users == [1001, 1004])
        #expect(followed["all"]?.users == nil, "a limit without users counts everyone's processes")
        #expect(followed["games"]?.apps.isEmpty == false && followed["games"]?.apps == followed["all"]?.apps)
        #expect(d.effects.contains(.followLimits(followed)), "§9: and the usage monitor is told")
    }
}
