import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

/// §7, T8: the state log after the snapshot. Each line is one checked record; a torn or
/// damaged tail is cut at the last good record (the rest kept) and reported; records of an older
/// generation than the snapshot (a crash between a compaction's snapshot and its truncation)
/// are skipped.
@Suite("§7 the state log")
struct StateLogTests {
    static func block(_ name: String, end: Double = 1_900_000_000) -> StoredActivity {
        .block(Block(name: name, selections: ["\(name).example.com"], start: Date(timeIntervalSince1970: 1_800_000_000),
                     end: Date(timeIntervalSince1970: end), locked: false, origin: .client(uid: 1000)))
    }

    static func lines(_ records: [StateLog.Record], gen: Int = 1, from seq: Int = 1) throws -> [[UInt8]] {
        try records.enumerated().map { i, r in
            var r = r
            (r.gen, r.seq) = (gen, seq + i)
            return Array(try StateLog.line(r))
        }
    }

    static var snapshot: DaemonState {
        var s = DaemonState()
        (s.generation, s.seq, s.activities) = (1, 0, [block("old")])
        return s
    }

    static var records: [StateLog.Record] {
        var delta = StateDelta()
        delta.appliedAdd = ["a.example.com"]
        delta.failuresAdd = [FailureRecord(time: Date(timeIntervalSince1970: 1_800_000_001), code: "internal", message: "x")]
        return [.put(block("a")), .remove("old"), .state(delta), .put(block("b", end: 1_900_000_001.25))]
    }

    @Test("T8: records round-trip, each line checkable with zlib's CRC-32, and replay in order onto the snapshot")
    func roundTrip() throws {
        let lines = try StateLogTests.lines(StateLogTests.records)
        for (line, record) in zip(lines, StateLogTests.records) {
            guard case .record(let back) = StateLog.parse(line.dropLast()[...]) else { Issue.record("not parsed"); continue }
            #expect(back.kind == record.kind && back.activity == record.activity && back.name == record.name && back.state == record.state)
            #expect(line.last == 10 && !line.dropLast().contains(10), "one record, one line")
        }
        #expect(StateLog.crc32(Array("123456789".utf8)) == 0xCBF4_3926, "the IEEE CRC-32 check value")
        let replay = StateLog.replay(lines.flatMap { $0 }, onto: StateLogTests.snapshot)
        #expect(replay.cut == nil && replay.applied == 4 && replay.state.seq == 4)
        #expect(replay.state.activities.map(\.activity.name) == ["a", "b"])
        #expect(replay.state.activities.last == StateLogTests.block("b", end: 1_900_000_001.25), "instants are exact")
        #expect(replay.state.applied == ["a.example.com"] && replay.state.failures.map(\.message) == ["x"])
    }

    @Test("T8: a torn last record, cut at every byte, is cut and everything before it kept")
    func tornTailAtEveryByte() throws {
        let lines = try StateLogTests.lines(StateLogTests.records)
        let good = lines.dropLast().flatMap { $0 }
        let complete = StateLog.replay(good, onto: StateLogTests.snapshot).state
        for length in 1..<lines.last!.count {
            let replay = StateLog.replay(good + lines.last!.prefix(length), onto: StateLogTests.snapshot)
            #expect(replay.state == complete, "cut at \(length)")
            #expect(replay.cut == StateLog.Cut(offset: good.count, bytes: length, lines: 0, damage: .incomplete), "cut at \(length)")
            #expect(replay.goodLength == good.count)
        }
    }

    @Test("T4: a bad checksum in the middle cuts the log there; the cut part is kept aside, the file truncated, the loss recorded")
    func badChecksumInTheMiddle() throws {
        let dir = Harness.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(directory: dir)
        var snap = StateLogTests.snapshot
        snap.generation = 0  // save() writes generation + 1
        try store.save(snap)
        var lines = try StateLogTests.lines(StateLogTests.records)
        lines[1][lines[1].count / 2] ^= 0x01
        let log = lines.flatMap { $0 }
        try Data(log).write(to: URL(fileURLWithPath: store.logPath))
        let (result, problems) = store.open(now: Date(timeIntervalSince1970: 1_800_000_100), repair: true)
        guard case .loaded(let state) = result else { Issue.record("not loaded"); return }
        #expect(state.activities.map(\.activity.name) == ["old", "a"], "the record before the damage is kept, none after it")
        #expect(state.seq == 1)
        #expect(FileManager.default.contents(atPath: store.logPath).map(Array.init) == lines[0], "the log is truncated at the last good record")
        let aside = store.logPath + ".cut-1800000100"
        #expect(FileManager.default.contents(atPath: aside).map(Array.init) == Array(log[lines[0].count...]), "the cut part is kept")
        let message = try #require(problems.first)
        #expect(message.contains("damaged at byte \(lines[0].count)") && message.contains("checksum") && message.contains("3 records")
                && message.contains("\(log.count - lines[0].count) bytes") && message.contains(aside), "\(message)")
        #expect(StateStore(directory: dir).open(now: Date(), repair: true).problems.isEmpty, "cut once, then clean")
    }

    @Test("T8: a record out of sequence or of a newer generation ends the log; an older generation's is skipped")
    func sequenceAndGeneration() throws {
        let r = StateLogTests.records
        let stale = try StateLogTests.lines(r, gen: 0, from: 1).flatMap { $0 }
        let current = try StateLogTests.lines(r, gen: 1, from: 1)
        var replay = StateLog.replay(stale + current.flatMap { $0 }, onto: StateLogTests.snapshot)
        #expect(replay.cut == nil && replay.applied == 4, "records of the older generation are already in the snapshot")
        let gap = try StateLogTests.lines([r[0]], gen: 1, from: 1)[0] + StateLogTests.lines([r[1]], gen: 1, from: 3)[0]
        replay = StateLog.replay(gap, onto: StateLogTests.snapshot)
        #expect(replay.applied == 1 && replay.cut?.damage == .outOfSequence(expected: 2, found: 3))
        replay = StateLog.replay(try StateLogTests.lines([r[0]], gen: 2)[0], onto: StateLogTests.snapshot)
        #expect(replay.applied == 0 && replay.cut?.damage == .newerGeneration(2))
    }

    @Test("T8: compaction starts a new generation; a crash between its snapshot and the log's truncation replays right")
    func compactionAndCrash() throws {
        let dir = Harness.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(directory: dir)
        let journal = StateJournal(store: store, generation: 0, seq: 0)
        try journal.compact(DaemonState())
        try journal.append([.put(StateLogTests.block("a")), .put(StateLogTests.block("b"))])
        try journal.sync()
        let beforeCompaction = try #require(FileManager.default.contents(atPath: store.logPath))
        var full = DaemonState()
        full.activities = [StateLogTests.block("a"), StateLogTests.block("b")]
        try journal.compact(full)
        #expect(journal.generation == 2 && journal.length == 0)
        try journal.append([.remove("a")])
        guard case .loaded(let s) = store.load(now: Date()) else { Issue.record("not loaded"); return }
        #expect(s.generation == 2 && s.seq == 3 && s.activities.map(\.activity.name) == ["b"])
        // The crash: the new snapshot is in place but the old log was never truncated.
        try beforeCompaction.write(to: URL(fileURLWithPath: store.logPath))
        guard case .loaded(let crashed) = store.load(now: Date()) else { Issue.record("not loaded"); return }
        #expect(crashed.activities.map(\.activity.name) == ["a", "b"] && crashed.seq == 2, "the old generation's records are skipped")
        // ... or truncated, and a new record written after the old ones.
        try (beforeCompaction + Data(try StateLog.line(StateLog.Record(gen: 2, seq: 3, kind: .remove, name: "a"))))
            .write(to: URL(fileURLWithPath: store.logPath))
        guard case .loaded(let mixed) = store.load(now: Date()) else { Issue.record("not loaded"); return }
        #expect(mixed.activities.map(\.activity.name) == ["b"] && mixed.seq == 3)
    }
}
