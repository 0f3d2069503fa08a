import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon
import BlockTestTools

/// §7 "Truth": `OK` means on disk; a change that cannot be saved is not made; a save no
/// request waits for is recorded once and retried until it works; nothing acknowledged is lost.
@Suite("§7 Truth: OK means on disk")
struct PersistenceTests {
    func onDisk(_ h: Harness) -> DaemonState? {
        if case .loaded(let s) = StateStore(directory: h.dir).load(now: h.clock.wallNow()) { return s }
        return nil
    }

    func restart(_ h: Harness, config: ConfigSet = .builtIn, loader: (@Sendable () throws(CoreError) -> ConfigSet)? = nil) {
        h.engine = h.makeEngine(config: config, loader: loader)
        h.run { h.engine.startUp() }
    }

    func names(_ h: Harness) -> [String] { h.run { h.engine.core.registry.activities.map(\.name).sorted() } }

    /// Each change, the set-up it needs, and the activities after it if it were made.
    static let changes: [(setUp: [String], request: String)] = [
        ([], #"start {"selections":["youtube"],"seconds":3600}"#),
        ([#"start {"selections":["reddit"],"seconds":3600,"name":"keep"}"#], #"stop {"name":"keep"}"#),
        ([], #"schedule-add {"name":"bed","window":"22:00-07:00","selections":["reddit"]}"#),
        ([#"schedule-add {"name":"bed","window":"22:00-07:00","selections":["reddit"]}"#], #"schedule-remove {"name":"bed"}"#),
        ([], #"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#),
        ([#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#], #"limit-remove {"name":"games"}"#),
    ]

    @Test("§7: a change that cannot be saved (full disk, read-only) is undone and answered not-saved, with what to do",
          arguments: [ENOSPC, EROFS], 0..<6)
    func unsavedChangeIsUndone(code: Int32, index: Int) throws {
        let (setUp, request) = PersistenceTests.changes[index]
        let h = Harness()
        for line in setUp { _ = ok(h.send(line)) }
        let activities = names(h)
        let enforced = h.enforcer.current
        h.saveFault.code = code
        guard case .error(let e) = h.send(request) else { Issue.record("\(request) was answered OK"); return }
        #expect(e.code == .notSaved)
        #expect(e.message.contains(h.dir), "the message names the state directory: \(e.message)")
        #expect(e.message.contains(code == ENOSPC ? "free space" : "writable"), "\(e.message)")
        #expect(names(h) == activities, "the registry is as before")
        #expect(h.enforcer.current == enforced, "enforcement is as before")
        h.saveFault.code = nil
        restart(h)
        #expect(names(h) == activities, "after a restart nothing unacknowledged appears and nothing acknowledged is lost")
    }

    @Test("§7: failures --clear and reload that cannot be saved change nothing")
    func unsavedClearAndReload() throws {
        let h = Harness()
        restart(h, loader: { () throws(CoreError) -> ConfigSet in
            var c = ConfigSet.builtIn
            c.daemon.maxActivities = 7
            return c
        })
        h.run { h.engine.recordFailure(CoreError(.internal, "an old failure"), uid: nil, activity: nil, now: h.clock.wallNow()) }
        h.saveFault.code = ENOSPC
        guard case .error(let clear) = h.send("failures-clear") else { Issue.record("failures-clear answered OK"); return }
        #expect(clear.code == .notSaved)
        #expect(h.run { h.engine.core.state.failures.map(\.message) }.first == "an old failure")
        guard case .error(let reload) = h.send("reload") else { Issue.record("reload answered OK"); return }
        #expect(reload.code == .notSaved)
        #expect(h.run { h.engine.core.registry.maxActivities } == ConfigSet.builtIn.daemon.maxActivities)
    }

    @Test("§7, T4: a save no request waits for is recorded once per cause, retried with backoff, and its recovery logged once and resolves it")
    func timerSaveRetries() throws {
        let h = Harness()
        h.run { h.engine.saveRetryBase = 0.05 }
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":3600}"#))
        h.saveFault.code = ENOSPC
        h.advance(10)
        h.advance(10)
        h.advance(10)
        let refused = h.saveFault.refused
        #expect(Run.eventually { h.saveFault.refused >= refused + 3 }, "the timer's retries go on, and fail")
        var unsaved = h.run { h.engine.core.state.failures.filter { $0.code == "not-saved" } }
        #expect(unsaved.count == 1, "one failure for one cause, however many attempts: \(unsaved.map(\.message))")
        h.saveFault.code = EROFS
        h.advance(10)
        unsaved = h.run { h.engine.core.state.failures.filter { $0.code == "not-saved" } }
        #expect(unsaved.count == 2, "a new cause is a new failure")
        #expect(h.run { h.engine.status(now: h.clock.wallNow()) }["enforcement"]?["stateProblem"] != nil)
        h.saveFault.code = nil
        #expect(Run.eventually(timeout: 10) { h.run { h.engine.saveProblem == nil } }, "the retry saved the state without any request")
        #expect(onDisk(h)?.failures.filter { $0.code == "not-saved" }.count == 2)
        #expect(Run.eventually { onDisk(h)?.failures.filter { $0.code == "not-saved" }.allSatisfy { $0.resolved != nil } == true },
                "T4: a save that works resolves both, and the resolution is saved")
        #expect(h.run { h.engine.status(now: h.clock.wallNow()) }["failures"] == .array([]), "T4: status shows current failures only")
        #expect(h.log.entries.filter { $0.message.contains("is saved again") }.count == 1)
        #expect(h.run { h.engine.status(now: h.clock.wallNow()) }["enforcement"]?["stateProblem"] == nil)
    }

    @Test("§7: nothing acknowledged is lost: an OK'd block survives a restart after failed saves and a refused stop")
    func acknowledgedSurvives() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":3600,"name":"yt"}"#))
        h.saveFault.code = ENOSPC
        h.advance(5)
        guard case .error = h.send(#"stop {"name":"yt"}"#) else { Issue.record("stop answered OK"); return }
        #expect(h.enforcer.current == ["youtube"], "the stop was undone, so the block is still enforced")
        h.saveFault.code = nil
        restart(h)
        #expect(names(h) == ["yt"])
        #expect(h.enforcer.current == ["youtube"])
    }

    @Test("T4: a state file with 150 huge failures loads as the newest 100, each message bounded")
    func failureCapOnLoad() throws {
        let dir = Harness.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var state = DaemonState()
        let huge = String(repeating: "x", count: 200_000)
        state.failures = (0..<150).map { FailureRecord(time: Date(timeIntervalSince1970: Double($0)), code: "internal", message: "\($0) \(huge)") }
        try StateStore(directory: dir).save(state)
        guard case .loaded(let loaded) = StateStore(directory: dir).load(now: Date()) else { Issue.record("not loaded"); return }
        #expect(loaded.failures.count == FailureRecord.limit)
        #expect(loaded.failures.first?.message.hasPrefix("50 ") == true, "the newest are kept")
        #expect(loaded.failures.allSatisfy { $0.message.count <= FailureRecord.messageLimit + 1 })
    }
}
