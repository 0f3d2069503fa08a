import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon
import BlockTestTools

/// §7 with the state log: a change writes bytes of its own size whatever the number of
/// activities, one fdatasync answers every request handled meanwhile (group commit), and a
/// failed fdatasync undoes every change it covered.
@Suite("§7 state log in the engine")
struct LogEngineTests {
    /// A harness whose state already holds `count` client blocks, each on its own domain.
    static func harness(activities count: Int) throws -> Harness {
        let dir = Harness.tempDir()
        var state = DaemonState()
        let now = iso("2026-11-29T04:05:00Z")
        state.activities = (0..<count).map { i in
            .block(Block(name: "held\(i)", selections: ["held\(i).example.com"], start: now, end: now + 86_400, locked: false,
                         origin: .client(uid: 0)))
        }
        try StateStore(directory: dir).save(state)
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = count + 100
        return Harness(dir: dir, config: config)
    }

    /// Bytes written for each of 40 changes (20 starts, 20 stops) after start-up.
    static func bytesPerChange(activities count: Int) throws -> (bytes: Double, snapshots: Int) {
        let h = try harness(activities: count)
        #expect(h.run { h.engine.core.registry.activities.count } == count)
        let (bytes, snapshots) = (h.saveFault.bytes, h.run { h.engine.saving.journal.snapshots })
        for i in 0..<20 { _ = ok(h.send(#"start {"selections":["new\#(i).example.com"],"seconds":600,"name":"n\#(i)"}"#)) }
        for i in 0..<20 { _ = ok(h.send(#"stop {"name":"n\#(i)"}"#)) }
        return (Double(h.saveFault.bytes - bytes) / 40, h.run { h.engine.saving.journal.snapshots } - snapshots)
    }

    @Test("§7: a change writes the same bytes with 2,000 activities as with 10 (no snapshot rewritten per change)")
    func bytesIndependentOfCount() throws {
        let small = try LogEngineTests.bytesPerChange(activities: 10)
        let large = try LogEngineTests.bytesPerChange(activities: 2000)
        #expect(small.snapshots == 0 && large.snapshots == 0, "no compaction within 40 changes")
        #expect(large.bytes <= small.bytes * 1.1 + 16, "bytes per change: \(small.bytes) at 10 activities, \(large.bytes) at 2,000")
        #expect(large.bytes < 2000, "a change costs its own size: \(large.bytes) bytes")
    }

    @Test("§7 group commit: requests handled in one turn of the engine are answered after one fdatasync, with their changes on disk")
    func groupCommit() throws {
        let h = Harness()
        let syncs = h.saveFault.syncs
        let answers = AnswerBox()
        h.run {
            for i in 0..<5 {
                let r = try! Request.parse(#"start {"selections":["g\#(i).example.com"],"seconds":600,"name":"g\#(i)"}"#)
                h.engine.handle(r, from: .root) { answers.add($0) }
            }
            #expect(answers.all.isEmpty, "no answer before the fdatasync")
        }
        #expect(Run.eventually(timeout: 5) { answers.all.count == 5 })
        #expect(answers.all.allSatisfy { $0.line.hasPrefix("OK ") })
        #expect(h.saveFault.syncs - syncs == 1, "one fdatasync for five changes")
        guard case .loaded(let disk) = StateStore(directory: h.dir).load(now: h.clock.wallNow()) else { Issue.record("no state"); return }
        #expect(Set(disk.activities.map(\.activity.name)) == Set((0..<5).map { "g\($0)" }))
    }

    @Test("§7: a failed fdatasync answers every request it covered not-saved and undoes their changes; the next save writes a snapshot")
    func failedSyncUndoesTheBatch() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":3600,"name":"keep"}"#))
        let enforced = h.enforcer.current
        h.saveFault.syncCode = EIO
        let answers = AnswerBox()
        h.run {
            for line in [#"start {"selections":["youtube"],"seconds":600,"name":"yt"}"#, #"stop {"name":"keep"}"#] {
                h.engine.handle(try! Request.parse(line), from: .root) { answers.add($0) }
            }
        }
        #expect(Run.eventually(timeout: 5) { answers.all.count == 2 })
        #expect(answers.all.allSatisfy { $0.line.hasPrefix("ERR not-saved ") }, "\(answers.all.map(\.line))")
        #expect(h.run { h.engine.core.registry.activities.map(\.name) } == ["keep"])
        #expect(h.enforcer.current == enforced, "enforcement converged back")
        h.saveFault.syncCode = nil
        h.run { h.engine.saveRetryBase = 0.01 }
        #expect(Run.eventually(timeout: 5) { h.run { h.engine.saveProblem == nil } })
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.run { h.engine.core.registry.activities.map(\.name) } == ["keep"], "nothing unacknowledged, nothing acknowledged lost")
    }

    @Test("T4: a torn log tail found at start is cut and recorded as a failure saying how many bytes were dropped")
    func tornTailAtStart() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":3600,"name":"keep"}"#))
        let store = StateStore(directory: h.dir)
        let handle = try #require(FileHandle(forWritingAtPath: store.logPath))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"activity":{"block":{"_0":{"name":"to"#.utf8))
        handle.closeFile()
        let (state, problems) = Daemon.loadState(store, now: h.clock.wallNow())
        #expect(state.activities.map(\.activity.name) == ["keep"])
        #expect(problems.count == 1 && problems[0].message.contains("incomplete record of 38 bytes"), "\(problems.map(\.message))")
    }
}

final class AnswerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [Response] = []
    func add(_ r: Response) { lock.withLock { answers.append(r) } }
    var all: [Response] { lock.withLock { answers } }
}
