import BlockCore
import Dispatch
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

@Suite("Engine: reconcile, timers, state (§2, §7)")
struct EngineTests {
    @Test("start blocks now and the block unlocks by itself at its end, logged with its lateness")
    func startAndExpire() throws {
        let h = Harness()
        let o = ok(h.send(#"start {"selections":["instagram"],"seconds":1800}"#))
        #expect(o?["outcome"] == "created")
        #expect(o?["end"] == "2026-11-29T13:35:00.000+09:00")
        #expect(h.enforcer.current == ["instagram"])
        #expect(h.run { h.engine.nextTransition } == iso("2026-11-29T13:35:00.000+09:00"))
        let lock = try #require(h.entries(.lock).first)
        #expect(lock.message.hasPrefix("Blocked instagram: block 'instagram', until 2026-11-29T13:35:00.000+09:00"))
        #expect(lock.field(.selection) == "instagram")

        h.advance(1799)
        #expect(h.enforcer.current == ["instagram"])
        h.advance(1.25)
        #expect(h.enforcer.current == [])
        let unlock = try #require(h.entries(.unlock).first)
        #expect(unlock.message == "Unblocked instagram: timed block 'instagram' ended (30m)")
        #expect(unlock.field(.lateMS) == "250")
        #expect(unlock.field(.end) == "2026-11-29T13:35:00.000+09:00")
        #expect(h.run { h.engine.nextTransition } == nil)
    }

    @Test("T5: a manual block ending inside bedtime leaves the selection blocked until bedtime ends")
    func unionAcrossEnd() {
        let h = Harness(now: "2026-11-29T23:00:00.000+09:00")
        _ = ok(h.send(#"schedule-add {"name":"bedtime","window":"22:00-07:00","selections":["instagram","youtube"]}"#))
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":1800}"#))
        #expect(h.enforcer.current == ["instagram", "youtube"])
        h.advance(1800)
        #expect(h.enforcer.current == ["instagram", "youtube"])
        #expect(h.entries(.unlock).isEmpty)
        let status = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(status["blocked"]?[0]?["until"] == "2026-11-30T07:00:00.000+09:00")
        h.advance(7.5 * 3600)
        #expect(h.enforcer.current == [])
        #expect(h.entries(.unlock).map(\.message).sorted() == [
            "Unblocked instagram: schedule 'bedtime' ended", "Unblocked youtube: schedule 'bedtime' ended",
        ])
    }

    @Test("T6: stepping the wall clock neither shortens nor lengthens a block")
    func wallStep() {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":1800}"#))
        h.clock.stepWall(3600)  // someone sets the clock an hour ahead
        h.run { h.engine.wake() }
        #expect(h.enforcer.current == ["instagram"], "the block is not over just because the clock jumped")
        h.advance(1799)
        #expect(h.enforcer.current == ["instagram"])
        h.advance(1)
        #expect(h.enforcer.current == [])
        let h2 = Harness()
        _ = ok(h2.send(#"start {"selections":["reddit"],"seconds":600}"#))
        h2.clock.stepWall(-3600)  // and back
        h2.run { h2.engine.wake() }
        h2.advance(600)
        #expect(h2.enforcer.current == [])
    }

    @Test("T6: a block started after an unnoticed wall step is exactly as long as asked", arguments: [3600.0, -3600.0])
    func stepBeforeStart(step: TimeInterval) {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":1800,"name":"old"}"#))
        h.clock.advance(10)
        h.clock.stepWall(step)  // no wake-up: the request below is the first to see the step
        let created = ok(h.send(#"start {"selections":["instagram"],"seconds":6,"name":"new"}"#))
        #expect(created?["end"]?.string == h.run { h.engine.core.local.iso8601(h.clock.wallNow() + 6) })
        #expect(h.enforcer.current == ["instagram", "reddit"], "the new block is enforced at once")
        #expect(h.log.entries.contains { $0.message.contains("stepped by") })
        h.advance(5.9)
        #expect(h.enforcer.current == ["instagram", "reddit"])
        h.advance(0.1)
        #expect(h.enforcer.current == ["reddit"], "the new block ends 6 s of elapsed time after its start")
        h.advance(1800 - 16.1)
        #expect(h.enforcer.current == ["reddit"], "the old block keeps its remaining elapsed time")
        h.advance(0.2)
        #expect(h.enforcer.current == [])
        #expect(!h.log.entries.contains { $0.message.contains("stay blocked") })
    }

    @Test("T6: status after an unnoticed wall step shows the remaining time, not shifted times", arguments: [3600.0, -3600.0])
    func stepBeforeStatus(step: TimeInterval) {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":1800,"name":"b"}"#))
        h.clock.advance(100)
        h.clock.stepWall(step)
        let status = ok(h.send("status"))
        let expected = h.run { h.engine.core.local.iso8601(h.clock.wallNow() + 1700) }
        #expect(status?["activities"]?[0]?["end"]?.string == expected)
        #expect(status?["blocked"]?[0]?["until"]?.string == expected)
    }

    @Test("T5: 'stay blocked' is logged only when another activity really covers the selection")
    func endedBlockLogTruth() {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":60,"name":"short"}"#))
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":600,"name":"long"}"#))
        h.advance(60)
        #expect(h.enforcer.current == ["instagram"])
        let stays = h.entries(.stop).map(\.message).filter { $0.contains("stay blocked") }
        #expect(stays == ["Block 'short' ended; its selections stay blocked by 'long'"])
    }

    @Test("T4: a refusal past the cap is recorded in the state file, the journal and status")
    func capRefusal() throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 1
        let h = Harness(config: config, users: .only(nameless: [1000]))
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":60}"#))
        guard case .error(let e) = h.send(#"start {"selections":["reddit"],"seconds":60}"#, as: Peer(uid: 1000, mayModify: true)) else {
            Issue.record("not refused"); return
        }
        #expect(e.code == .activityLimit)
        let warning = try #require(h.entries(.refusal).first)
        #expect(warning.priority == .warning)
        #expect(warning.field(.code) == "activity-limit")
        let onDisk = try #require(h.run { () -> DaemonState? in
            if case .loaded(let s) = StateStore(directory: h.dir).load(now: h.clock.wallNow()) { return s } else { return nil }
        })
        #expect(onDisk.failures.map(\.code) == ["activity-limit"])
        #expect(onDisk.failures.first?.uid == 1000)
        let status = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(status["failures"]?[0]?["code"] == "activity-limit")
    }

    @Test("T8: a restart keeps every block, and an end missed while down is caught up and logged with its lateness")
    func restartAndCatchUp() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":600}"#))
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":7200,"lock":true}"#))
        // The daemon dies; 20 minutes pass; a new one starts from the state file.
        h.clock.advance(1200)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == ["reddit"])
        let catchUp = try #require(h.entries(.catchUp).first)
        #expect(catchUp.field(.activity) == "instagram")
        #expect(catchUp.field(.lateMS) == "600000")
        let status = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(status["activities"]?.array?.count == 1)
        #expect(status["activities"]?[0]?["locked"] == true)
    }

    @Test("T8: a schedule window that opened while the daemon was down is locked at start")
    func catchUpScheduleStart() throws {
        let h = Harness(now: "2026-11-29T21:00:00.000+09:00")
        _ = ok(h.send(#"schedule-add {"name":"bedtime","window":"22:00-07:00","selections":["youtube"]}"#))
        h.clock.advance(2 * 3600)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == ["youtube"])
        #expect(h.entries(.catchUp).first?.message.contains("started at 2026-11-29T22:00:00.000+09:00") == true)
    }

    @Test("§7: an unreadable state file is moved aside, never deleted, and the daemon starts empty")
    func corruptState() throws {
        let dir = Harness.tempDir()
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: dir + "/state.json"))
        guard case .corrupt(let problem, let movedTo) = StateStore(directory: dir).load(now: iso("2026-11-29T00:00:00Z")) else {
            Issue.record("not detected"); return
        }
        #expect(problem.contains("not a valid state file"))
        #expect(movedTo == dir + "/state.json.corrupt-1795910400")
        #expect(try String(contentsOfFile: movedTo!, encoding: .utf8) == "{ not json")
        #expect(!FileManager.default.fileExists(atPath: dir + "/state.json"))
        try? FileManager.default.removeItem(atPath: dir)
    }

    @Test("§5: locked blocks cannot be stopped; others only by root or their creator")
    func permissions() {
        let h = Harness(users: .only(nameless: [1000, 1001, 1002]))
        let alice = Peer(uid: 1000, mayModify: true), bob = Peer(uid: 1001, mayModify: true), eve = Peer(uid: 1002, mayModify: false)
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":600}"#, as: alice))
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":600,"lock":true}"#, as: alice))
        if case .error(let e) = h.send(#"start {"selections":["x"],"seconds":600}"#, as: eve) { #expect(e.code == .permissionDenied) } else { Issue.record("eve started a block") }
        if case .error(let e) = h.send(#"stop {"name":"instagram"}"#, as: bob) { #expect(e.code == .permissionDenied) } else { Issue.record("bob stopped alice's block") }
        if case .error(let e) = h.send(#"stop {"name":"reddit"}"#, as: alice) { #expect(e.code == .locked) } else { Issue.record("alice stopped her locked block") }
        _ = ok(h.send(#"stop {"name":"instagram"}"#, as: alice))
        #expect(h.enforcer.current == ["reddit"])
        // Alice's block is hers alone (a plain member's default scope, U1), and so is its unlock (U2).
        let alices = h.users.person(1000).name
        #expect(h.entries(.unlock).first?.message == "Unblocked instagram for \(alices): block 'instagram' stopped early by \(alices)")
        // A1: a member's lock binds the member, not root.
        _ = ok(h.send(#"stop {"name":"reddit"}"#))
        #expect(h.enforcer.current == [])
        // Reading is for everyone.
        _ = ok(h.send("status", as: eve))
    }

    @Test("§7: a bad reload keeps the old configuration and records a failure")
    func badReload() {
        let h = Harness()
        h.engine = h.makeEngine(loader: { () throws(CoreError) -> ConfigSet in throw CoreError(.invalidConfig, "/etc/blockd/blockd.conf:3: nonsense") })
        h.run { h.engine.startUp() }
        guard case .error(let e) = h.send("reload") else { Issue.record("reload succeeded"); return }
        #expect(e.code == .invalidConfig)
        #expect(e.message.contains("previous configuration stays in force"))
        #expect(h.run { h.engine.core.state.failures.last?.code } == "invalid-config")
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":60}"#))
    }

    @Test("unknown selections get a did-you-mean; ad-hoc domains work")
    func selections() {
        let h = Harness()
        if case .error(let e) = h.send(#"start {"selections":["instagarm"],"seconds":60}"#) {
            #expect(e.code == .unknownSelection)
            #expect(e.message.contains("did you mean 'instagram'"))
        } else { Issue.record("accepted") }
        _ = ok(h.send(#"start {"selections":["example.com"],"seconds":60}"#))
        #expect(h.enforcer.current == ["example.com"])
    }

    @Test("T10: starting again extends, never shortens")
    func extend() {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":1800}"#))
        #expect(ok(h.send(#"start {"selections":["instagram"],"seconds":60}"#))?["outcome"] == "unchanged")
        let o = ok(h.send(#"start {"selections":["instagram"],"seconds":3600}"#))
        #expect(o?["outcome"] == "extended")
        #expect(o?["end"] == "2026-11-29T14:05:00.000+09:00")
    }

    @Test("status has the documented shape (§6)")
    func statusShape() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":1800}"#))
        let o = try #require(ok(h.send("status")))
        #expect(Array(o.keys.prefix(6)) == ["schema", "now", "timeZone", "blocked", "activities", "failures"])
        #expect(o["schema"] == 1, "the compliance interface's version (docs/PROTOCOL.md)")
        #expect(o["now"] == "2026-11-29T13:05:00.000+09:00")
        let blocked = try #require(o["blocked"]?[0])
        #expect(blocked["selection"] == "instagram")
        #expect(blocked["reasons"] == ["instagram"])
        let a = try #require(o["activities"]?[0])
        for key in ["name", "kind", "selections", "active", "start", "end", "locked"] { #expect(a[key] != nil, "activity has \(key)") }
        #expect(a["kind"] == "block")
        #expect(a["remaining"] == 1800)
    }
}

@Suite("Test doubles")
struct DoubleTests {
    @Test("a collaborator the test did not supply (here the configuration loader) fails the test when the engine uses it")
    func unsuppliedFailsLoudly() {
        let h = Harness()
        withKnownIssue("the harness supplies no configuration loader") {
            _ = h.send("reload")
        }
    }

    @Test("U3, A1: a user or uid the test's user database does not hold fails the test when the engine looks it up; one it names as absent is refused quietly")
    func unlistedUserFailsLoudly() throws {
        let h = Harness()  // root alone
        withKnownIssue("the default user database holds root alone") {
            _ = h.send(#"start {"selections":["reddit"],"seconds":60,"users":["alice"]}"#)
        }
        withKnownIssue("uid 1000 is no account the test gave") {
            _ = h.send(#"start {"selections":["reddit"],"seconds":60}"#, as: Peer(uid: 1000, mayModify: true))
        }
        let given = Harness(users: .only(absent: ["alice"], nameless: [1000]))
        guard case .error(let e) = given.send(#"start {"selections":["reddit"],"seconds":60,"users":["alice"]}"#) else {
            Issue.record("a start for an absent user was accepted")
            return
        }
        #expect(e.message.contains("no user named 'alice'"), "\(e.message)")
        #expect(ok(given.send(#"start {"selections":["reddit"],"seconds":60}"#, as: Peer(uid: 1000, mayModify: true)))?["users"] == ["#1000"])
        withKnownIssue("Engine.Collaborators.unsupplied has no user database") {
            _ = Engine.Collaborators.unsupplied(clock: h.clock, store: StateStore(directory: h.dir)).users.uid("root")
        }
    }
}

@Suite("S5: shield hits")
struct ShieldHitTests {
    @Test("S5: hits are counted per selection per local day, persisted, logged and streamed")
    func counted() throws {
        let h = Harness(now: "2026-11-29T23:59:00.000+09:00")
        _ = ok(h.send(#"start {"selections":["discord"],"seconds":3600}"#))
        let before = h.events.all.count
        let sink = h.inbox.shieldHits
        sink(ShieldHit(kind: .deniedLaunch, selection: "discord", path: "/usr/bin/discord", app: "Discord", pid: 42))
        sink(ShieldHit(kind: .killed, selection: "discord", path: "/usr/bin/discord", pid: 43))
        h.run {}
        h.advance(120)  // past local midnight: a new day
        sink(ShieldHit(kind: .tamper, selection: "discord", path: "/etc/hosts"))
        h.run {}
        let stats = try #require(ok(h.send("stats")))
        #expect(stats["shieldHits"] == [
            ["day": "2026-11-29", "selection": "discord", "hits": 2],
            ["day": "2026-11-30", "selection": "discord", "hits": 1],
        ])
        #expect(h.entries(.shieldHit).first?.message == "Denied launch of Discord (/usr/bin/discord): discord is blocked")
        #expect(h.entries(.tamper).first?.priority == .warning)
        let first = try #require(h.events.all.dropFirst(before).first)
        #expect(first["event"] == "shield-hit")
        #expect(first["app"] == "Discord")
        #expect(first["until"] == "2026-11-30T00:59:00.000+09:00")
        // Persisted: a restart keeps the counts.
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(ok(h.send("stats"))?["shieldHits"]?.array?.count == 2)
    }
}
