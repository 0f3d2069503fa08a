import BlockCore
import Foundation
import Testing
@testable import BlockDaemon

/// M1-M3 in the engine, with the injected clock: grants lift for exactly their window,
/// approval between two peers, Delay= on a stop, expiry, persistence (T8) and the cap (T4).
@Suite("M1-M3: more time in the engine")
struct MoreTimeEngineTests {
    static let asker = Peer(uid: 1000, mayModify: true)
    static var admin: Peer { var p = Peer(uid: 1001, mayModify: false); p.isAdmin = true; return p }
    /// The asker and the admin as the user database has them: accounts without names.
    static let users = UserDirectory.only(nameless: [1000, 1001])

    /// A limit used up: steam blocked until midnight.
    /// The asker's own limit (a member's is theirs alone, U1), used up. A1: more time never lifts
    /// a block for everyone for one member, so the limit is not root's machine-wide one.
    func usedUp(_ h: Harness, limit: String = #"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#, by peer: Peer = MoreTimeEngineTests.asker) {
        _ = ok(h.send(limit, as: peer))
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.advance(60)
        h.run { h.engine.usageChanged(running: []) }
        #expect(h.enforcer.current == ["steam"])
    }

    @Test("M3, T9: on a used-up limit 'more steam 5s' is 5 s of allowance: lifted while unused, blocked again when the app has run exactly 5 s more")
    func limitAllowance() throws {
        let h = Harness(now: "2026-11-29T20:00:00+09:00", users: Self.users)
        usedUp(h)
        let g = try #require(ok(h.send(#"more {"selection":"steam","seconds":5}"#, as: Self.asker)))
        #expect(g["state"] == "granted")
        #expect(g["allowance"] == ["games"])
        #expect(h.enforcer.current == [])
        h.advance(60)
        #expect(h.enforcer.current == [], "not a window: unused allowance keeps")
        h.run { h.engine.usageChanged(running: ["games"]) }
        let start = h.clock.wallNow()
        #expect(h.run { h.engine.nextTransition } == start + 5, "the one timer is armed for the allowance's end")
        h.advance(4.999)
        #expect(h.enforcer.current == [])
        h.advance(0.001)
        #expect(h.enforcer.current == ["steam"])
        #expect(h.entries(.moreGranted).count == 1)
        #expect(h.entries(.limit).count == 2, "reached again, and logged again")
    }

    @Test("M3, T7: allowance given today is gone at local midnight; tomorrow has the limit's own allowance")
    func limitAllowanceMidnight() throws {
        let h = Harness(now: "2026-11-29T23:50:00+09:00", users: Self.users)
        usedUp(h)
        _ = ok(h.send(#"more {"selection":"steam","seconds":300}"#, as: Self.asker))
        #expect(h.enforcer.current == [])
        h.advance(600)  // 00:01, the next day, nothing used
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.advance(59.999)
        #expect(h.enforcer.current == [])
        h.advance(0.001)
        #expect(h.enforcer.current == ["steam"], "60 s, not 60 s + yesterday's 300 s")
    }

    @Test("M3, T9: on a block a grant is a window: lifted for exactly its length, then blocked again")
    func exactWindow() throws {
        let h = Harness(users: Self.users)
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":3600}"#, as: Self.asker))
        let start = h.clock.wallNow()
        _ = ok(h.send(#"more {"selection":"instagram","seconds":5}"#, as: Self.asker))
        #expect(h.enforcer.current == [])
        #expect(h.run { h.engine.nextTransition } == start + 5)
        h.advance(4.999)
        #expect(h.enforcer.current == [])
        h.advance(0.001)
        #expect(h.enforcer.current == ["instagram"])
        #expect(h.entries(.moreEnded).first?.message.contains("(m1) ended at") == true)
        #expect(h.entries(.unlock).first?.message.contains("more time (m1)") == true)
    }

    @Test("M3, T6: a wall-clock step neither shortens nor lengthens a grant", arguments: [3600.0, -3600.0])
    func grantAcrossWallStep(step: Double) throws {
        let h = Harness(users: Self.users)
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":3600}"#, as: Self.asker))
        _ = ok(h.send(#"more {"selection":"instagram","seconds":600}"#, as: Self.asker))
        #expect(h.enforcer.current == [])
        h.clock.stepWall(step)
        h.run { h.engine.wake() }
        #expect(h.enforcer.current == [], "the grant is not over just because the clock jumped")
        h.advance(599)
        #expect(h.enforcer.current == [])
        h.advance(1)
        #expect(h.enforcer.current == ["instagram"], "blocked again after exactly 600 s of elapsed time")
    }

    @Test("M1: MoreTime=approval: a pending request; the asker cannot approve it, an admin can, with who granted it in status")
    func approval() throws {
        let h = Harness(now: "2026-11-29T20:00:00+09:00", users: Self.users)
        usedUp(h, limit: #"limit-add {"name":"games","seconds":60,"selections":["steam"],"moreTime":{"mode":"approval"}}"#)
        let r = try #require(ok(h.send(#"more {"selection":"steam","seconds":600,"reason":"homework"}"#, as: Self.asker)))
        #expect(r["state"] == "pending")
        #expect(h.enforcer.current == ["steam"])
        guard case .error(let e) = h.send(#"approve {"id":"m1"}"#, as: Self.asker) else { Issue.record("the asker approved"); return }
        #expect(e.code == .permissionDenied)
        let g = try #require(ok(h.send(#"approve {"id":"m1","seconds":300}"#, as: Self.admin)))
        #expect(g["grantedBy"] == 1001)
        #expect(h.enforcer.current == [])
        let status = try #require(ok(h.send("status")))
        #expect(status["grants"]?[0]?["grantedBy"] == 1001)
        #expect(status["grants"]?[0]?["uid"] == 1000)
        h.run { h.engine.usageChanged(running: ["games"]) }  // M3: allowance, used up by running
        h.advance(300)
        #expect(h.enforcer.current == ["steam"])
        #expect(h.entries(.moreAsked).count == 1)
    }

    @Test("M1: a denied request grants nothing; an unanswered one expires after RequestTimeout=")
    func denyAndExpire() throws {
        let h = Harness(now: "2026-11-29T20:00:00+09:00", users: Self.users)
        usedUp(h, limit: #"limit-add {"name":"games","seconds":60,"selections":["steam"],"moreTime":{"mode":"approval","requestTimeout":600}}"#)
        _ = ok(h.send(#"more {"selection":"steam","seconds":600}"#, as: Self.asker))
        _ = ok(h.send(#"deny {"id":"m1","reason":"not tonight"}"#, as: Self.admin))
        #expect(h.entries(.moreDenied).first?.message == "More time for steam (m1) denied by \(h.users.person(1001).name): not tonight")
        _ = ok(h.send(#"more {"selection":"steam","seconds":600}"#, as: Self.asker))
        #expect(h.run { h.engine.nextTransition } == h.clock.wallNow() + 600)
        h.advance(600)
        #expect(h.entries(.moreExpired).count == 1)
        guard case .error(let e) = h.send(#"approve {"id":"m2"}"#, as: Self.admin) else { Issue.record("approved an expired request"); return }
        #expect(e.code == .notFound)
        #expect(h.enforcer.current == ["steam"])
    }

    @Test("M1: a --lock block gives no more time, even to root")
    func locked() throws {
        let h = Harness(users: Self.users)
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":600,"lock":true}"#))
        guard case .error(let e) = h.send(#"more {"selection":"instagram","seconds":60}"#) else { Issue.record("granted"); return }
        #expect(e.code == .locked)
        #expect(h.enforcer.current == ["instagram"])
    }

    @Test("M2: a stop under Delay= waits, is shown, and 'cancel' keeps the block")
    func delayedStopCancelled() throws {
        let h = Harness(users: Self.users)
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":3600,"name":"work","moreTime":{"mode":"self","delay":120}}"#, as: Self.asker))
        let pending = try #require(ok(h.send(#"stop {"name":"work"}"#, as: Self.asker)))
        #expect(pending["pending"] == "work")
        #expect(h.run { h.engine.nextTransition } == h.clock.wallNow() + 120)
        #expect(ok(h.send("status"))?["delayed"]?[0]?["pending"] == "work")
        h.advance(60)
        _ = ok(h.send(#"cancel {"name":"work"}"#, as: Self.asker))
        h.advance(120)
        #expect(h.enforcer.current == ["instagram"], "the cancelled stop did not happen")
    }

    @Test("M2: a stop under Delay= that is not cancelled takes effect at its due instant; tightening never waits")
    func delayedStop() throws {
        let h = Harness(users: Self.users)
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":3600,"name":"work","moreTime":{"mode":"self","delay":120}}"#, as: Self.asker))
        _ = ok(h.send(#"stop {"name":"work"}"#, as: Self.asker))
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":60,"name":"work"}"#, as: Self.asker))
        #expect(h.enforcer.current == ["instagram", "reddit"], "extending is at once")
        h.advance(119)
        #expect(h.enforcer.current == ["instagram", "reddit"])
        h.advance(1)
        #expect(h.enforcer.current == [])
    }

    @Test("M3, T8: a grant that ended while blockd was down is not extended; a running one survives a restart")
    func restart() throws {
        let h = Harness(now: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600}"#, as: Self.asker))
        _ = ok(h.send(#"more {"selection":"steam","seconds":300}"#, as: Self.asker))
        h.clock.advance(100)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == [])
        h.clock.advance(400)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == ["steam"])
        #expect(h.entries(.moreEnded).count == 1)
    }

    @Test("T4: grants and requests count toward MaxActivities=")
    func cap() throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 2
        let h = Harness(now: "2026-11-29T20:00:00+09:00", config: config, users: Self.users)
        usedUp(h, by: .root)
        _ = ok(h.send(#"more {"selection":"steam","seconds":300}"#, as: Self.admin))  // a member's quota is A1's
        guard case .error(let e) = h.send(#"start {"selections":["instagram"],"seconds":60}"#) else { Issue.record("past the cap"); return }
        #expect(e.code == .activityLimit)
    }
}
