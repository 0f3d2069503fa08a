import Foundation
import Testing
@testable import BlockCore

/// What the engine used to be tested for that is the core's to decide: a block's life and its
/// end (T1, T5, T9, T10), wall-clock steps (T6), permissions (§5), selections and a bad
/// reload (§7). Saving, restarts and what `status` renders stay with the engine's harness.
@Suite("T1-T10, §5, §7: blocks, time and permissions, decided by the core")
struct CoreEngineTests {
    @Test("T1, T9: start blocks now and the block unlocks by itself at its end, logged with its lateness")
    func startAndExpire() throws {
        var d = FakeEdge()
        let o = ok(d.run(#"start {"selections":["instagram"],"seconds":1800}"#))
        #expect(o?["outcome"] == "created")
        #expect(o?["end"] == "2026-11-29T13:35:00.000+09:00")
        #expect(d.enforced == ["instagram"])
        #expect(d.core.nextTransition == at("2026-11-29T13:35:00.000+09:00"))
        let lock = try #require(d.entries(.lock).first)
        #expect(lock.message.hasPrefix("Blocked instagram: block 'instagram', until 13:35:00"))
        #expect(lock.field(.selection) == "instagram")

        d.advance(1799)
        #expect(d.enforced == ["instagram"])
        d.advance(1.25)
        #expect(d.enforced == [])
        let unlock = try #require(d.entries(.unlock).first)
        #expect(unlock.message == "Unblocked instagram: timed block 'instagram' ended (30m)")
        #expect(unlock.field(.lateMS) == "250")
        #expect(unlock.field(.end) == "2026-11-29T13:35:00.000+09:00")
        #expect(d.core.nextTransition == nil)
        #expect(d.arms.last == .some(nil), "T9: nothing left to wake for")
    }

    @Test("T5: a manual block ending inside bedtime leaves the selection blocked until bedtime ends")
    func unionAcrossEnd() {
        var d = FakeEdge(at: "2026-11-29T23:00:00.000+09:00")
        _ = ok(d.run(#"schedule-add {"name":"bedtime","window":"22:00-07:00","selections":["instagram","youtube"]}"#))
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":1800}"#))
        #expect(d.enforced == ["instagram", "youtube"])
        d.advance(1800)
        #expect(d.enforced == ["instagram", "youtube"])
        #expect(d.entries(.unlock).isEmpty)
        #expect(d.core.blockedNow("instagram")?.until == at("2026-11-30T07:00:00.000+09:00"), "status shows bedtime's end")
        d.advance(7.5 * 3600)
        #expect(d.enforced == [])
        #expect(d.entries(.unlock).map(\.message).sorted() == [
            "Unblocked instagram: schedule 'bedtime' ended", "Unblocked youtube: schedule 'bedtime' ended",
        ])
    }

    @Test("T6: stepping the wall clock neither shortens nor lengthens a block", arguments: [(3600.0, 1800.0), (-3600.0, 600.0)])
    func wallStep(step: TimeInterval, seconds: TimeInterval) {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":\#(Int(seconds))}"#))
        d.stepWall(step)  // someone sets the clock an hour ahead, or back
        d.wake()
        #expect(d.enforced == ["instagram"], "the block is not over just because the clock jumped")
        d.advance(seconds - 1)
        #expect(d.enforced == ["instagram"])
        d.advance(1)
        #expect(d.enforced == [])
    }

    @Test("T6: a block started after an unnoticed wall step is exactly as long as asked", arguments: [3600.0, -3600.0])
    func stepBeforeStart(step: TimeInterval) {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":1800,"name":"old"}"#))
        d.pass(10)
        d.stepWall(step)  // no wake-up: the request below is the first to see the step
        let created = ok(d.run(#"start {"selections":["instagram"],"seconds":6,"name":"new"}"#))
        #expect(created?["end"]?.string == d.core.local.iso8601(d.now + 6))
        #expect(d.enforced == ["instagram", "reddit"], "the new block is enforced at once")
        #expect(d.journal.contains { $0.message.contains("stepped by") })
        d.advance(5.9)
        #expect(d.enforced == ["instagram", "reddit"])
        d.advance(0.1)
        #expect(d.enforced == ["reddit"], "the new block ends 6 s of elapsed time after its start")
        d.advance(1800 - 16.1)
        #expect(d.enforced == ["reddit"], "the old block keeps its remaining elapsed time")
        d.advance(0.2)
        #expect(d.enforced == [])
        #expect(!d.journal.contains { $0.message.contains("stay blocked") })
    }

    @Test("T5: 'stay blocked' is logged only when another activity really covers the selection")
    func endedBlockLogTruth() {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":60,"name":"short"}"#))
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":600,"name":"long"}"#))
        d.advance(60)
        #expect(d.enforced == ["instagram"])
        let stays = d.entries(.stop).map(\.message).filter { $0.contains("stay blocked") }
        #expect(stays == ["Block 'short' ended; its selections stay blocked by 'long'"])
    }

    @Test("T4: a refusal past the cap is told (the journal at warning priority, the watchers, with its code and the asker) and is no failure")
    func capRefusal() throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 1
        var d = FakeEdge(config: config, users: FakeEdge.users())
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":60}"#))
        guard case .error(let e) = d.run(#"start {"selections":["reddit"],"seconds":60}"#, as: Peer(uid: 1000, mayModify: true)) else {
            Issue.record("not refused"); return
        }
        #expect(e.code == .activityLimit)
        let warning = try #require(d.entries(.refusal).first)
        #expect(warning.priority == .warning)
        #expect(warning.field(.code) == "activity-limit")
        #expect(warning.field(.uid) == "1000")
        #expect(d.events.contains { $0["event"] == "refusal" && $0["code"] == "activity-limit" && $0["uid"] == 1000 })
        #expect(d.core.state.failures.isEmpty, "a refusal is the rules working: not a failure")
    }

    @Test("§5: locked blocks cannot be stopped; others only by root or their creator")
    func permissions() throws {
        var d = FakeEdge(users: FakeEdge.users())
        let alice = Peer(uid: 1000, mayModify: true), bob = Peer(uid: 1001, mayModify: true), eve = Peer(uid: 1002, mayModify: false)
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":600}"#, as: alice))
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":600,"lock":true}"#, as: alice))
        if case .error(let e) = d.run(#"start {"selections":["x"],"seconds":600}"#, as: eve) { #expect(e.code == .permissionDenied) } else { Issue.record("eve started a block") }
        // A1: alice's block is hers alone, so to bob it is a name nobody holds.
        if case .error(let e) = d.run(#"stop {"name":"instagram"}"#, as: bob) { #expect(e.code == .notFound) } else { Issue.record("bob stopped alice's block") }
        if case .error(let e) = d.run(#"stop {"name":"reddit"}"#, as: alice) { #expect(e.code == .locked) } else { Issue.record("alice stopped her locked block") }
        _ = ok(d.run(#"stop {"name":"instagram"}"#, as: alice))
        #expect(d.enforced == ["reddit"])
        // Alice's block is hers alone (a plain member's default scope, U1), and so is its unlock (U2).
        #expect(d.entries(.unlock).first?.message == "Unblocked instagram for #1000: block 'instagram' stopped early by #1000")
        // A1: a member's lock binds the member, not root.
        _ = ok(d.run(#"stop {"name":"reddit"}"#))
        #expect(d.enforced == [])
        // Reading is for everyone.
        try d.core.authorize(try Request.parse("status"), by: eve)
    }

    @Test("§7: a bad reload keeps the old configuration and records a failure")
    func badReload() {
        var d = FakeEdge()
        d.files = .failure(CoreError(.invalidConfig, "/etc/blockd/blockd.conf:3: nonsense"))
        guard case .error(let e) = d.run("reload") else { Issue.record("reload succeeded"); return }
        #expect(e.code == .invalidConfig)
        #expect(e.message.contains("previous configuration stays in force"))
        #expect(d.core.state.failures.last?.code == "invalid-config")
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":60}"#))
    }

    @Test("§8: unknown selections get a did-you-mean; ad-hoc domains work")
    func selections() {
        var d = FakeEdge()
        if case .error(let e) = d.run(#"start {"selections":["instagarm"],"seconds":60}"#) {
            #expect(e.code == .unknownSelection)
            #expect(e.message.contains("did you mean 'instagram'"))
        } else { Issue.record("accepted") }
        _ = ok(d.run(#"start {"selections":["example.com"],"seconds":60}"#))
        #expect(d.enforced == ["example.com"])
    }

    @Test("T10: starting again extends, never shortens")
    func extend() {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":1800}"#))
        #expect(ok(d.run(#"start {"selections":["instagram"],"seconds":60}"#))?["outcome"] == "unchanged")
        let o = ok(d.run(#"start {"selections":["instagram"],"seconds":3600}"#))
        #expect(o?["outcome"] == "extended")
        #expect(o?["end"] == "2026-11-29T14:05:00.000+09:00")
    }
}
