import Foundation
import Testing
@testable import BlockCore

/// M1-M3 on the core: grants lift for exactly their window, approval between two peers,
/// Delay= on a stop, expiry and the cap (T4). The restart case stays with the engine's harness.
@Suite("M1-M3: more time, decided by the core")
struct CoreMoreTimeTests {
    static let asker = Peer(uid: 1000, mayModify: true)
    static var admin: Peer { var p = Peer(uid: 1001, mayModify: false); p.isAdmin = true; return p }
    /// The asker and the admin as the user database has them: accounts without names.
    static let users = FakeEdge.users()

    static func driver(at start: String = "2026-11-29T13:05:00+09:00", config: ConfigSet = .builtIn) -> FakeEdge {
        FakeEdge(at: start, config: config, users: users)
    }

    /// The asker's own limit (a member's is theirs alone, U1), used up: steam blocked until midnight.
    /// A1: more time never lifts a block for everyone for one member.
    static func usedUp(_ d: inout FakeEdge, limit: String = #"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#,
                       by peer: Peer = asker, runs runner: UInt32? = nil) {
        _ = ok(d.run(limit, as: peer))
        d.usage(running: ["games"], as: runner ?? peer.uid)  // §9: whose own allowance is used up
        d.advance(60)
        d.usage(running: [], as: runner ?? peer.uid)
        #expect(d.enforced == ["steam"])
    }

    @Test("M3, T9: on a used-up limit 'more steam 5s' is 5 s of allowance: lifted while unused, blocked again when the app has run exactly 5 s more")
    func limitAllowance() throws {
        var d = Self.driver(at: "2026-11-29T20:00:00+09:00")
        Self.usedUp(&d)
        let g = try #require(ok(d.run(#"more {"selection":"steam","seconds":5}"#, as: Self.asker)))
        #expect(g["state"] == "granted")
        #expect(g["allowance"] == ["games"])
        #expect(d.enforced == [])
        d.advance(60)
        #expect(d.enforced == [], "not a window: unused allowance keeps")
        d.usage(running: ["games"], as: Self.asker.uid)
        #expect(d.core.nextTransition == d.now + 5, "the one timer is armed for the allowance's end")
        d.advance(4.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforced == ["steam"])
        #expect(d.entries(.moreGranted).count == 1)
        #expect(d.entries(.limit).count == 2, "reached again, and logged again")
    }

    @Test("M3, T7: allowance given today is gone at local midnight; tomorrow has the limit's own allowance")
    func limitAllowanceMidnight() throws {
        var d = Self.driver(at: "2026-11-29T23:50:00+09:00")
        Self.usedUp(&d)
        _ = ok(d.run(#"more {"selection":"steam","seconds":300}"#, as: Self.asker))
        #expect(d.enforced == [])
        d.advance(600)  // 00:01, the next day, nothing used
        d.usage(running: ["games"], as: Self.asker.uid)
        d.advance(59.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforced == ["steam"], "60 s, not 60 s + yesterday's 300 s")
    }

    @Test("M3, T9: on a block a grant is a window: lifted for exactly its length, then blocked again")
    func exactWindow() throws {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":3600}"#, as: Self.asker))
        let start = d.now
        _ = ok(d.run(#"more {"selection":"instagram","seconds":5}"#, as: Self.asker))
        #expect(d.enforced == [])
        #expect(d.core.nextTransition == start + 5)
        #expect(d.arms.last == start + 5, "T9: the timer is armed for it")
        d.advance(4.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforced == ["instagram"])
        #expect(d.entries(.moreEnded).first?.message.contains("(m1) ended at") == true)
        #expect(d.entries(.unlock).first?.message.contains("more time (m1)") == true)
    }

    @Test("M3, T6: a wall-clock step neither shortens nor lengthens a grant", arguments: [3600.0, -3600.0])
    func grantAcrossWallStep(step: Double) throws {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":3600}"#, as: Self.asker))
        _ = ok(d.run(#"more {"selection":"instagram","seconds":600}"#, as: Self.asker))
        #expect(d.enforced == [])
        d.stepWall(step)
        d.wake()
        #expect(d.enforced == [], "the grant is not over just because the clock jumped")
        d.advance(599)
        #expect(d.enforced == [])
        d.advance(1)
        #expect(d.enforced == ["instagram"], "blocked again after exactly 600 s of elapsed time")
    }

    @Test("M1: MoreTime=approval: a pending request; the asker cannot approve it, an admin can, with who granted it in status")
    func approval() throws {
        var d = Self.driver(at: "2026-11-29T20:00:00+09:00")
        Self.usedUp(&d, limit: #"limit-add {"name":"games","seconds":60,"selections":["steam"],"moreTime":{"mode":"approval"}}"#)
        let r = try #require(ok(d.run(#"more {"selection":"steam","seconds":600,"reason":"homework"}"#, as: Self.asker)))
        #expect(r["state"] == "pending")
        #expect(d.enforced == ["steam"])
        guard case .error(let e) = d.run(#"approve {"id":"m1"}"#, as: Self.asker) else { Issue.record("the asker approved"); return }
        #expect(e.code == .permissionDenied)
        let g = try #require(ok(d.run(#"approve {"id":"m1","seconds":300}"#, as: Self.admin)))
        #expect(g["grantedBy"] == 1001)
        #expect(d.enforced == [])
        let grants = d.core.requestsReply().grants  // status's more-time lists
        #expect(grants.first?.grantedBy == 1001)
        #expect(grants.first?.uid == 1000)
        d.usage(running: ["games"], as: Self.asker.uid)  // M3: allowance, used up by running
        d.advance(300)
        #expect(d.enforced == ["steam"])
        #expect(d.entries(.moreAsked).count == 1)
    }

    @Test("M1: a denied request grants nothing; an unanswered one expires after RequestTimeout=")
    func denyAndExpire() throws {
        var d = Self.driver(at: "2026-11-29T20:00:00+09:00")
        Self.usedUp(&d, limit: #"limit-add {"name":"games","seconds":60,"selections":["steam"],"moreTime":{"mode":"approval","requestTimeout":600}}"#)
        _ = ok(d.run(#"more {"selection":"steam","seconds":600}"#, as: Self.asker))
        _ = ok(d.run(#"deny {"id":"m1","reason":"not tonight"}"#, as: Self.admin))
        #expect(d.entries(.moreDenied).first?.message == "More time for steam (m1) denied by #1001: not tonight")
        _ = ok(d.run(#"more {"selection":"steam","seconds":600}"#, as: Self.asker))
        #expect(d.core.nextTransition == d.now + 600)
        d.advance(600)
        #expect(d.entries(.moreExpired).count == 1)
        guard case .error(let e) = d.run(#"approve {"id":"m2"}"#, as: Self.admin) else { Issue.record("approved an expired request"); return }
        #expect(e.code == .notFound)
        #expect(d.enforced == ["steam"])
    }

    @Test("M1: a --lock block gives no more time, even to root")
    func locked() throws {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":600,"lock":true}"#))
        guard case .error(let e) = d.run(#"more {"selection":"instagram","seconds":60}"#) else { Issue.record("granted"); return }
        #expect(e.code == .locked)
        #expect(d.enforced == ["instagram"])
    }

    @Test("M2: a stop under Delay= waits, is shown, and 'cancel' keeps the block")
    func delayedStopCancelled() throws {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":3600,"name":"work","moreTime":{"mode":"self","delay":120}}"#, as: Self.asker))
        let pending = try #require(ok(d.run(#"stop {"name":"work"}"#, as: Self.asker)))
        #expect(pending["pending"] == "work")
        #expect(d.core.nextTransition == d.now + 120)
        #expect(d.core.requestsReply().delayed.first?.name == "work")
        d.advance(60)
        _ = ok(d.run(#"cancel {"name":"work"}"#, as: Self.asker))
        d.advance(120)
        #expect(d.enforced == ["instagram"], "the cancelled stop did not happen")
    }

    @Test("M2: a stop under Delay= that is not cancelled takes effect at its due instant; tightening never waits")
    func delayedStop() throws {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":3600,"name":"work","moreTime":{"mode":"self","delay":120}}"#, as: Self.asker))
        _ = ok(d.run(#"stop {"name":"work"}"#, as: Self.asker))
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":60,"name":"work"}"#, as: Self.asker))
        #expect(d.enforced == ["instagram", "reddit"], "extending is at once")
        d.advance(119)
        #expect(d.enforced == ["instagram", "reddit"])
        d.advance(1)
        #expect(d.enforced == [])
    }

    @Test("T4: grants and requests count toward MaxActivities=")
    func cap() throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 2
        var d = Self.driver(at: "2026-11-29T20:00:00+09:00", config: config)
        Self.usedUp(&d, by: .root, runs: Self.admin.uid)  // root's limit for everyone; the admin's own allowance used up
        _ = ok(d.run(#"more {"selection":"steam","seconds":300}"#, as: Self.admin))  // a member's quota is A1's
        guard case .error(let e) = d.run(#"start {"selections":["instagram"],"seconds":60}"#) else { Issue.record("past the cap"); return }
        #expect(e.code == .activityLimit)
    }
}

/// M4, S4: the lock events tell the agent what `more SELECTION 15m` would get, by the same
/// rules `more` answers with, so the agent shows a button only when it works.
@Suite("M4: the more-time offer in lock events, decided by the core")
struct CoreMoreTimeOfferTests {
    static let asker = Peer(uid: 1000, mayModify: true)

    /// The `more` key of the last lock event for `selection` (nil: none, or no key).
    static func offer(_ d: FakeEdge, _ selection: String) -> String? {
        d.events("lock").filter { $0["selection"] == .string(selection) }.last?["more"]?.string
    }

    @Test("M4: self gives '15 more minutes', approval an 'ask', --lock and MoreTime=no nothing", arguments: [
        (#"{"selections":["instagram"],"seconds":3600}"#, "grant"),
        (#"{"selections":["instagram"],"seconds":3600,"moreTime":{"mode":"approval"}}"#, "ask"),
        (#"{"selections":["instagram"],"seconds":3600,"lock":true}"#, nil),
        (#"{"selections":["instagram"],"seconds":3600,"moreTime":{"mode":"no"}}"#, nil),
    ] as [(String, String?)])
    func modes(start: String, expected: String?) throws {
        var d = FakeEdge(users: FakeEdge.users())
        _ = ok(d.run("start " + start, as: Self.asker))
        #expect(!d.events("lock").isEmpty)
        #expect(Self.offer(d, "instagram") == expected)
    }

    @Test("M4: with less than 15 min of MoreTimePerDay= left only the one more minute is offered, and after it nothing")
    func allowance() throws {
        var d = FakeEdge(users: FakeEdge.users())
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":3600,"moreTime":{"mode":"self","perDay":600}}"#, as: Self.asker))
        #expect(Self.offer(d, "instagram") == "minute")
        _ = ok(d.run(#"more {"selection":"instagram","seconds":60}"#, as: Self.asker))
        d.advance(60)
        #expect(d.enforced == ["instagram"])
        #expect(d.events("lock").count == 2)
        #expect(Self.offer(d, "instagram") == nil, "the minute is taken and 10 min < 15 min: pressing would be refused")
        guard case .error = d.run(#"more {"selection":"instagram","seconds":900}"#, as: Self.asker) else {
            Issue.record("the offer said no, but more was granted"); return
        }
    }
}
