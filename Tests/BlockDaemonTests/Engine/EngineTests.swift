import BlockCore
import Dispatch
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// The engine's own part: what the state file keeps across a restart (T8), a corrupt one (§7),
/// status as the engine renders it (§6). A block's life, time and permissions are proved on
/// the core (BlockCoreTests' CoreEngineTests).
@Suite("Engine: state, restarts and status (§2, §7)")
struct EngineTests {
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

    @Test("T4: a refusal past the cap is in the journal, not in the state file's failures or status")
    func capRefusal() throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 1
        let h = Harness(config: config, users: .holding())
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
        #expect(onDisk.failures.isEmpty && onDisk.activities.count == 1)
        let status = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(status["failures"] == .array([]))
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
        #expect(h.entries(.catchUp).first?.message.contains(" started at ") == true && h.entries(.catchUp).first?.message.contains("22:00:00") == true,
                "\(h.entries(.catchUp).first?.message ?? "")")
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

    @Test("U3, A1: the engine knows the test's users table and nothing else: a user it lacks is refused by name, a uid it lacks is #UID; an unsupplied database fails the test when read")
    func usersTableOnly() throws {
        let h = Harness()  // root alone
        guard case .error(let e) = h.send(#"start {"selections":["reddit"],"seconds":60,"users":["alice"]}"#) else {
            Issue.record("a start for a user the table lacks was accepted")
            return
        }
        #expect(e.message.contains("no user named 'alice'"), "\(e.message)")
        #expect(ok(h.send(#"start {"selections":["reddit"],"seconds":60}"#, as: Peer(uid: 1000, mayModify: true)))?["users"] == ["#1000"])
        withKnownIssue("Engine.Collaborators.unsupplied has no user database") {
            _ = Engine.Collaborators.unsupplied(clock: h.clock, store: StateStore(directory: h.dir)).users.read()
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
