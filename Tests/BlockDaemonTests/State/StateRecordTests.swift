import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

/// §7, T8: state-log records are written by a hand-written encoder. Its lines must be the bytes
/// `JSONEncoder` wrote before it (so a log written by an older blockd and one written now are
/// the same file format), must decode with `JSONDecoder` to the record written, and a log an
/// older blockd wrote must load after an upgrade.
@Suite("§7 T8 the state-log record encoder")
struct StateRecordTests {
    /// The line as blockd wrote it before the hand-written encoder: `JSONEncoder`, then the checksum.
    static func foundationLine(_ record: StateLog.Record) throws -> [UInt8] {
        var body = Array(try StateLog.encoder.encode(record))
        let hex = String(StateLog.crc32(body), radix: 16)
        body.removeLast()
        body += Array(",\"crc\":\"\(String(repeating: "0", count: 8 - hex.count))\(hex)\"}\n".utf8)
        return body
    }

    @Test("T8: random records are written byte for byte as JSONEncoder writes them, and decode back to themselves")
    func randomRecordsMatchFoundation() throws {
        var random = RecordRandom(seed: 0x5EED_2026)
        var encoder = StateRecordEncoder()
        for i in 0..<400 {
            var record = random.record()
            (record.gen, record.seq) = (random.int(0...9), i + 1)
            let line = try encoder.line(record)
            let expected = try StateRecordTests.foundationLine(record)
            #expect(line == expected, "record \(i): \(String(decoding: line, as: UTF8.self))\nJSONEncoder: \(String(decoding: expected, as: UTF8.self))")
            guard case .record(let back) = StateLog.parse(line.dropLast()[...]) else {
                Issue.record("record \(i) does not parse: \(String(decoding: line, as: UTF8.self))")
                continue
            }
            #expect(back == record, "record \(i) decodes to what was written")
        }
        random.exact = false  // instants and seconds any decimal: the bytes still match
        for i in 0..<200 {
            let record = random.record()
            #expect(try encoder.line(record) == StateRecordTests.foundationLine(record), "inexact record \(i)")
        }
    }

    @Test("T8: odd strings (quotes, backslashes, every control, NUL, DEL, U+2028, non-BMP, combining marks) as JSONEncoder writes them")
    func oddStrings() throws {
        var encoder = StateRecordEncoder()
        for text in RecordRandom.oddStrings {
            var delta = StateDelta()
            delta.appliedAdd = [text]
            delta.historyOpen = [text: Date(timeIntervalSince1970: 1_800_000_000.25)]
            delta.shieldHits = [text: [text: 1, "\(text)e\u{301}": 2, "\(text)f": 3]]
            for record: StateLog.Record in [.remove(text), .state(delta), .put(.block(Block(name: text, selections: [text], start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_600.5))))] {
                #expect(try encoder.line(record) == StateRecordTests.foundationLine(record), "\(Array(text.unicodeScalars))")
                guard case .record(let back) = StateLog.parse(try encoder.line(record).dropLast()[...]) else {
                    Issue.record("\(Array(text.unicodeScalars)) does not parse")
                    continue
                }
                #expect(back == record)
            }
        }
    }

    @Test("T8: a selection's targets written again unchanged are the same bytes; changed targets of the same name are written anew")
    func targetsKeptOnlyWhileUnchanged() throws {
        var encoder = StateRecordEncoder()
        var big = Selection(name: "big", domains: (0..<2000).map { "d\($0).example.com" })
        func line(_ s: Selection) throws -> [UInt8] {
            var delta = StateDelta()
            delta.targets = [s.name: s]
            return try encoder.line(.state(delta))
        }
        let first = try line(big)
        #expect(try line(big) == first)
        big.domains[1999] = "changed.example.com"
        let changed = try line(big)
        var delta = StateDelta()
        delta.targets = ["big": big]
        #expect(changed == (try StateRecordTests.foundationLine(.state(delta))), "the changed targets, not the ones written before")
        #expect(changed != first)
    }

    /// Six lines of a `state.log` written by blockd before the hand-written encoder (the
    /// registration benchmark's log: a block, the day's history, the reconcile time, twice).
    static let oldLog = #"""
    {"activity":{"block":{"_0":{"end":1796316075.0404215,"locked":false,"name":"b13074","origin":{"client":{"uid":0}},"selections":["d74.example.com"],"start":1796229675.0404215}}},"gen":10,"kind":"put","seq":39223,"crc":"d1b020da"}
    {"gen":10,"kind":"state","seq":39224,"state":{"historyDays":{"2026-12-02":{"blocked":{},"counts":{"0":{"started":13075}},"foreground":{},"limits":{},"running":{},"used":{}}}},"crc":"908512f0"}
    {"gen":10,"kind":"state","seq":39225,"state":{"lastReconcile":1796229675.0404215},"crc":"af2daf02"}
    {"activity":{"block":{"_0":{"end":1796316075.0414736,"locked":false,"name":"b13075","origin":{"client":{"uid":0}},"selections":["d75.example.com"],"start":1796229675.0414736}}},"gen":10,"kind":"put","seq":39226,"crc":"ff7d59ad"}
    {"gen":10,"kind":"state","seq":39227,"state":{"historyDays":{"2026-12-02":{"blocked":{},"counts":{"0":{"started":13076}},"foreground":{},"limits":{},"running":{},"used":{}}}},"crc":"f9a40f2e"}
    {"gen":10,"kind":"state","seq":39228,"state":{"lastReconcile":1796229675.0414736},"crc":"83332a0e"}

    """#

    @Test("T8: a state log written by an older blockd loads after an upgrade, and its records are written again to the same bytes")
    func oldLogLoads() throws {
        let dir = Harness.tempDir()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var snapshot = DaemonState()
        (snapshot.generation, snapshot.seq) = (10, 39222)
        let store = StateStore(directory: dir)
        try StateStore.encoder.encode(snapshot).write(to: URL(fileURLWithPath: store.path))
        try Data(StateRecordTests.oldLog.utf8).write(to: URL(fileURLWithPath: store.logPath))
        let (result, problems) = store.open(now: Date(timeIntervalSince1970: 1_796_229_700), repair: true)
        guard case .loaded(let state) = result else { Issue.record("not loaded: \(result)"); return }
        #expect(problems.isEmpty)
        #expect(state.seq == 39228 && state.activities.map(\.activity.name) == ["b13074", "b13075"])
        #expect(state.history.days["2026-12-02"]?.counts["0"]?["started"] == 13076)
        #expect(state.lastReconcile == Date(timeIntervalSince1970: 1_796_229_675.0414736))
        var encoder = StateRecordEncoder()
        for line in StateRecordTests.oldLog.split(separator: "\n") {
            guard case .record(let record) = StateLog.parse(Array(line.utf8)[...]) else { Issue.record("not parsed: \(line)"); continue }
            #expect(String(decoding: try encoder.line(record), as: UTF8.self) == line + "\n")
        }
    }
}

/// Random state-log records from a seed (SplitMix64), with the strings a record may hold at
/// their worst. `exact`: instants and seconds are binary fractions, which come back from a
/// decimal text to the same `Date` (a `Date` keeps seconds since 2001, so most others do not).
struct RecordRandom {
    var generator: TortureTests.Generator
    var exact = true

    init(seed: UInt64) { generator = TortureTests.Generator(state: seed) }

    mutating func next() -> UInt64 { generator.next() }

    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    static let oddStrings: [String] = [
        "", "\"", "\\", "\"\\\"", "/path/to", "\u{0}", "a\u{0}b", "\u{7F}", "\u{2028}\u{2029}", "😀", "a😀b\u{10FFFF}",
        "e\u{301}", "\u{E9}", "Ω≈ç√", "\u{FEFF}", "\u{FFFE}", "line\nbreak\r\ttab\u{8}\u{C}",
        String(String.UnicodeScalarView((0..<0x20).map { Unicode.Scalar(UInt8($0)) })),
    ]

    mutating func string() -> String {
        if chance(30) { return RecordRandom.oddStrings[int(0...(RecordRandom.oddStrings.count - 1))] }
        let pool: [Unicode.Scalar] = ["a", "z", "0", ".", "-", "\"", "\\", "/", "\u{0}", "\u{1F}", "\u{E9}", "\u{301}", "😀", "\u{2028}", "日"]
        return String(String.UnicodeScalarView((0..<int(0...12)).map { _ in pool[int(0...(pool.count - 1))] }))
    }

    mutating func strings() -> [String] { (0..<int(0...4)).map { _ in string() } }

    mutating func seconds() -> Double {
        exact ? Double(int(-1_000_000...4_000_000_000)) / 1024 : Double(int(0...4_000_000)) / 1000 + 1 / 3
    }

    mutating func date() -> Date { Date(timeIntervalSince1970: 1_700_000_000 + seconds()) }

    mutating func dictionary<T>(_ value: (inout RecordRandom) -> T) -> [String: T] {
        var d: [String: T] = [:]
        for _ in 0..<int(0...3) { d[string()] = value(&self) }
        return d
    }

    mutating func selection(depth: Int = 0) -> Selection {
        var s = Selection(name: string(), domains: strings(), apps: strings(), paths: strings(), openURL: chance(30) ? string() : nil,
                          texts: dictionary { $0.string() }, execOnBlock: chance(20) ? string() : nil,
                          execOnUnblock: chance(20) ? string() : nil, firewall: chance(30) ? chance(50) : nil)
        if chance(20) { s.users = (0..<int(0...3)).map { _ in UInt32(int(0...70000)) } }
        if depth == 0 && chance(15) { s.allowed = [selection(depth: 1)] }
        if chance(20) { s.exceptions = strings() }
        return s
    }

    mutating func activity() -> StoredActivity {
        if chance(10) { return .limit(Limit(name: string(), selections: strings(), seconds: int(60...7200))) }
        var b = Block(name: string(), selections: strings(), start: date(), end: date(), locked: chance(50),
                      origin: chance(80) ? .client(uid: UInt32(int(0...70000))) : .config(file: string()))
        if chance(20) { b.users = Scope(names: strings(), uids: [UInt32(int(0...70000))]) }
        return .block(b)
    }

    mutating func day() -> UsageHistory.Day {
        var d = UsageHistory.Day()
        d.running = dictionary { r in r.dictionary { $0.seconds() } }
        d.blocked = dictionary { r in r.dictionary { $0.seconds() } }
        d.counts = dictionary { r in r.dictionary { $0.int(-5...100_000) } }
        d.limits = dictionary { $0.seconds() }
        return d
    }

    mutating func delta() -> StateDelta {
        var d = StateDelta()
        if chance(50) { d.lastReconcile = date() }
        if chance(30) { d.appliedAdd = strings() }
        if chance(30) { d.appliedRemove = strings() }
        if chance(30) { d.targets = dictionary { $0.selection() } }
        if chance(20) { d.targetsRemove = strings() }
        if chance(20) { d.failuresAdd = [FailureRecord(time: date(), code: string(), message: string(), uid: chance(50) ? 1000 : nil)] }
        // T4: a failure's cause and resolution, absent from a record without them (an older blockd's bytes).
        if chance(10) { d.failures = [FailureRecord(time: date(), code: string(), message: string(), cause: string(), resolved: chance(50) ? date() : nil)] }
        if chance(10) { d.failures = [] }
        if chance(30) { d.shieldHits = dictionary { r in r.dictionary { $0.int(0...1000) } } }
        if chance(40) { d.historyDays = dictionary { $0.day() } }
        if chance(20) { d.historyDaysRemove = strings() }
        if chance(20) { d.historyOpen = dictionary { $0.date() } }
        if chance(20) { d.historyClosed = strings() }
        if chance(10) { d.usage = UsageLedger() }
        return d
    }

    mutating func record() -> StateLog.Record {
        switch int(0...2) {
        case 0: .put(activity())
        case 1: .remove(string())
        default: .state(delta())
        }
    }
}
