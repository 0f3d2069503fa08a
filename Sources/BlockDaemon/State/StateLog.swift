import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The state log, `state.log` beside `state.json` (§7, T8): what changed since the
/// snapshot, one JSON object a line, so that saving a change costs the size of the change and
/// not of the state. Each line is a record
///
///     {"gen":3,"seq":118,"kind":"put","activity":{...},"crc":"1c291ca3"}
///
/// `kind` is `put` (a client activity, whole, as in `state.json`), `remove` (`name`) or `state`
/// (`state`: the changed part of the rest, a `StateDelta`). `gen` is the snapshot generation the
/// record follows and `seq` counts records across generations: the first record after a
/// snapshot with `"seq":S` has `S+1`. `crc` is the CRC-32 (IEEE, as `zlib.crc32`) of the line
/// without its `,"crc":"…"` member, in eight lower-case hex digits. A record of an older
/// generation is already in the snapshot and is skipped; the first record that is not a whole,
/// checked line of the snapshot's generation in sequence ends the log, and what follows it is
/// cut (a torn tail from a crash mid-write, or damage).
public enum StateLog {
    public enum Kind: String, Codable, Sendable { case put, remove, state }

    public struct Record: Codable, Equatable, Sendable {
        public var gen: Int
        public var seq: Int
        public var kind: Kind
        public var activity: StoredActivity?
        public var name: String?
        public var state: StateDelta?

        public static func put(_ a: StoredActivity) -> Record { Record(gen: 0, seq: 0, kind: .put, activity: a) }
        public static func remove(_ name: String) -> Record { Record(gen: 0, seq: 0, kind: .remove, name: name) }
        public static func state(_ d: StateDelta) -> Record { Record(gen: 0, seq: 0, kind: .state, state: d) }
    }

    /// The line for `record`, LF included: the bytes `JSONEncoder` would write
    /// (StateRecordEncoder.swift), with the checksum member added.
    public static func line(_ record: Record) throws -> Data {
        var encoder = StateRecordEncoder()
        return Data(try encoder.line(record))
    }

    /// One line of the log: a record, or why it is not one.
    public enum Line: Sendable {
        case record(Record)
        case damaged(Damage)
    }

    /// The record on one line (without its LF), or why it is not one.
    public static func parse(_ line: ArraySlice<UInt8>) -> Line {
        let suffix = Array(",\"crc\":\"".utf8)
        guard line.count > 19, line.last == UInt8(ascii: "}"), line[line.endIndex - 2] == UInt8(ascii: "\"") else {
            return .damaged(.noChecksum)
        }
        let hexStart = line.endIndex - 10
        guard line[(hexStart - suffix.count)..<hexStart].elementsEqual(suffix),
              let stored = UInt32(String(decoding: line[hexStart..<(line.endIndex - 2)], as: UTF8.self), radix: 16) else {
            return .damaged(.noChecksum)
        }
        var body = Data(line[line.startIndex..<(hexStart - suffix.count)])
        body.append(UInt8(ascii: "}"))
        guard crc32(body) == stored else { return .damaged(.badChecksum) }
        do { return .record(try decoder.decode(Record.self, from: body)) } catch {
            return .damaged(.notARecord(StateStore.describe(error)))
        }
    }

    public enum Damage: Equatable, Sendable, CustomStringConvertible {
        case noChecksum, badChecksum, notARecord(String), outOfSequence(expected: Int, found: Int), newerGeneration(Int), incomplete
        public var description: String {
            switch self {
            case .noChecksum: "a line without a checksum"
            case .badChecksum: "a line whose checksum does not match"
            case .notARecord(let why): "a line that is not a record (\(why))"
            case .outOfSequence(let expected, let found): "record \(found) where record \(expected) was due"
            case .newerGeneration(let gen): "a record of generation \(gen), newer than the snapshot's"
            case .incomplete: "an incomplete last line"
            }
        }
    }

    /// What replaying a log gave: the state, how many records it applied, and what was cut.
    public struct Replay: Sendable {
        public var state: DaemonState
        public var applied = 0
        /// Bytes of the log up to the end of the last good line.
        public var goodLength = 0
        public var cut: Cut?
    }

    public struct Cut: Equatable, Sendable {
        public var offset: Int
        public var bytes: Int
        /// Complete lines in the cut part (0: only a torn last line).
        public var lines: Int
        public var damage: Damage
    }

    /// Applies the records of `log` that follow `snapshot` (same generation, in sequence).
    public static func replay(_ log: [UInt8], onto snapshot: DaemonState) -> Replay {
        var out = Replay(state: snapshot)
        var folded = Folded(snapshot.activities)
        var start = 0
        while start < log.count {
            guard let end = log[start...].firstIndex(of: 10) else {
                out.cut = Cut(offset: start, bytes: log.count - start, lines: 0, damage: .incomplete)
                break
            }
            var damage: Damage?
            switch parse(log[start..<end]) {
            case .damaged(let d): damage = d
            case .record(let r) where r.gen < snapshot.generation: break  // already in the snapshot
            case .record(let r) where r.gen > snapshot.generation: damage = .newerGeneration(r.gen)
            case .record(let r) where r.seq != out.state.seq + 1: damage = .outOfSequence(expected: out.state.seq + 1, found: r.seq)
            case .record(let r):
                folded.apply(r, to: &out.state)
                out.state.seq = r.seq
                out.applied += 1
            }
            if let damage {
                let lines = log[start...].filter { $0 == 10 }.count
                out.cut = Cut(offset: start, bytes: log.count - start, lines: lines, damage: damage)
                break
            }
            start = end + 1
            out.goodLength = start
        }
        out.state.activities = folded.activities
        return out
    }

    /// The activities by name, in order, while records are applied.
    struct Folded {
        var order: [String] = []
        var byName: [String: StoredActivity] = [:]
        init(_ activities: [StoredActivity]) {
            for a in activities { insert(a) }
        }
        mutating func insert(_ a: StoredActivity) {
            let name = a.activity.name
            if byName.updateValue(a, forKey: name) == nil { order.append(name) }
        }
        mutating func apply(_ r: Record, to state: inout DaemonState) {
            switch r.kind {
            case .put: if let a = r.activity { insert(a) }
            case .remove: if let name = r.name { byName[name] = nil }
            case .state: r.state?.apply(to: &state)
            }
        }
        var activities: [StoredActivity] {
            var seen = Set<String>()
            return order.compactMap { name in seen.insert(name).inserted ? byName[name] : nil }
        }
    }

    /// CRC-32 (IEEE 802.3, reflected, as zlib's `crc32`).
    public static func crc32<S: Sequence>(_ bytes: S) -> UInt32 where S.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .secondsSince1970
        return e
    }()

    static var decoder: JSONDecoder { StateStore.decoder }
}
