/// A time zone's rules as the system's tzdata states them (T7): the UTC offset in force at any
/// instant, read from a TZif file (RFC 8536) such as `/usr/share/zoneinfo/Europe/Berlin`.
///
/// blockd reads the zone files the system keeps current (Debian's `tzdata` package) instead of
/// a copy of the rules compiled into the binary, so a rule change reaches schedules with the
/// next `tzdata` update, not the next blockd build. Parsing is pure; reading the file is the
/// caller's (see `ZoneInfo` in BlockDaemon and BlockClient).
public struct Zone: Hashable, Sendable, CustomStringConvertible {
    /// The tz name (`Europe/Berlin`), or `UTC`, or the name it was loaded under.
    public let identifier: String
    /// Transition instants (seconds since the epoch), ascending, and the offset from each on.
    let transitions: [Int]
    let offsets: [Int]
    /// The offset before the first transition.
    let initialOffset: Int
    /// The rule for instants after the last transition (the TZif footer), if any.
    let rule: ZoneRule?

    public var description: String { identifier }

    public static let utc = Zone(identifier: "UTC", transitions: [], offsets: [], initialOffset: 0, rule: nil)

    /// A zone that is always `seconds` east of UTC (tests, and zones named by offset).
    public init(identifier: String, fixedOffset seconds: Int) {
        self.init(identifier: identifier, transitions: [], offsets: [], initialOffset: seconds, rule: nil)
    }

    init(identifier: String, transitions: [Int], offsets: [Int], initialOffset: Int, rule: ZoneRule?) {
        self.identifier = identifier
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.rule = rule
    }

    /// Seconds east of UTC in force at `epochSeconds`.
    public func offset(at epochSeconds: Int) -> Int {
        guard let first = transitions.first, let last = transitions.last else {
            return rule?.offset(at: epochSeconds) ?? initialOffset
        }
        if let rule, epochSeconds >= last { return rule.offset(at: epochSeconds) }
        guard epochSeconds >= first else { return initialOffset }
        // The last transition at or before the instant.
        var lo = 0, hi = transitions.count
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if transitions[mid] <= epochSeconds { lo = mid } else { hi = mid }
        }
        return offsets[lo]
    }

    /// Parses a TZif file (versions 1 to 4). Version 2 and later files are read from their
    /// 64-bit block and footer rule; version 1 files from their 32-bit block alone.
    public static func parse(tzif bytes: [UInt8], identifier: String) throws(CoreError) -> Zone {
        var reader = TZifReader(bytes: bytes)
        let v1 = try reader.header()
        guard v1.version >= 2 else { return try reader.block(v1, timeSize: 4, identifier: identifier, rule: nil) }
        try reader.skip(v1.blockSize(timeSize: 4))
        let v2 = try reader.header()
        let start = reader.position
        try reader.skip(v2.blockSize(timeSize: 8))
        let footer = try reader.footer()
        let rule: ZoneRule?
        do { rule = footer.isEmpty ? nil : try ZoneRule.parse(footer) } catch { throw .badZoneRule(footer) }
        reader.position = start
        return try reader.block(v2, timeSize: 8, identifier: identifier, rule: rule)
    }

    /// Parses a POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3` (the `TZ` environment
    /// variable's form without a file).
    public static func parse(posix text: String) throws(CoreError) -> Zone {
        do {
            let rule = try ZoneRule.parse(text)
            return Zone(identifier: text, transitions: [], offsets: [], initialOffset: rule.standard, rule: rule)
        } catch { throw .badZoneRule(text) }
    }

    /// True if `name` can name a zone file under a zoneinfo directory: relative, no `..`, only
    /// the characters tz names use. Keeps `TZ=../../etc/shadow` from naming any file.
    public static func isValidIdentifier(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255, !name.hasPrefix("/") else { return false }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && part != "." && part != ".."
                && part.utf8.allSatisfy { c in
                    (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)
                        || c == 0x2D || c == 0x2B || c == 0x5F || c == 0x2E
                }
        }
    }
}

private struct TZifHeader {
    var version: Int
    var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int

    func blockSize(timeSize: Int) -> Int {
        timecnt * timeSize + timecnt + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
    }
}

private struct TZifReader {
    let bytes: [UInt8]
    var position = 0

    mutating func skip(_ count: Int) throws(CoreError) {
        guard count >= 0, bytes.count - position >= count else { throw .truncatedTZif }
        position += count
    }

    mutating func integer(_ size: Int) throws(CoreError) -> Int {
        guard bytes.count - position >= size else { throw .truncatedTZif }
        var value: UInt64 = 0
        for i in 0..<size { value = value << 8 | UInt64(bytes[position + i]) }
        position += size
        // Sign-extend: TZif integers are two's complement, big-endian.
        let shift = UInt64(64 - size * 8)
        return Int(Int64(bitPattern: value << shift) >> Int64(shift))
    }

    mutating func header() throws(CoreError) -> TZifHeader {
        guard bytes.count - position >= 44 else { throw bytes.count >= 4 && Array(bytes[0..<4]) == Array("TZif".utf8) ? CoreError.truncatedTZif : CoreError.notTZif }
        guard Array(bytes[position..<position + 4]) == Array("TZif".utf8) else { throw .notTZif }
        let v = bytes[position + 4]
        let version = v == 0 ? 1 : Int(v) - 0x30
        guard (1...9).contains(version) else { throw .notTZif }
        position += 20
        var counts: [Int] = []
        for _ in 0..<6 {
            let n = try integer(4)
            guard n >= 0, n < 1 << 24 else { throw .notTZif }
            counts.append(n)
        }
        guard counts[4] >= 1 else { throw .notTZif }  // at least one local time type
        return TZifHeader(version: version, isutcnt: counts[0], isstdcnt: counts[1], leapcnt: counts[2],
                          timecnt: counts[3], typecnt: counts[4], charcnt: counts[5])
    }

    mutating func block(_ h: TZifHeader, timeSize: Int, identifier: String, rule: ZoneRule?) throws(CoreError) -> Zone {
        var times: [Int] = []
        times.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt { times.append(try integer(timeSize)) }
        var indices: [Int] = []
        indices.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt { indices.append(try integer(1) & 0xFF) }
        var utoffs: [Int] = []
        for _ in 0..<h.typecnt {
            utoffs.append(try integer(4))
            try skip(2)  // isdst, designation index
        }
        guard indices.allSatisfy({ $0 < h.typecnt }) else { throw .notTZif }
        // Sorted input is required by RFC 8536; keep only strictly ascending instants so a
        // malformed file cannot make the search wrong.
        var transitions: [Int] = [], offsets: [Int] = []
        for (t, i) in zip(times, indices) where transitions.last.map({ t > $0 }) ?? true {
            transitions.append(t)
            offsets.append(utoffs[i])
        }
        return Zone(identifier: identifier, transitions: transitions, offsets: offsets,
                    initialOffset: utoffs[0], rule: rule)
    }

    mutating func footer() throws(CoreError) -> String {
        guard position < bytes.count, bytes[position] == 0x0A else { throw .truncatedTZif }
        guard let end = bytes[(position + 1)...].firstIndex(of: 0x0A) else { throw .truncatedTZif }
        return String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
    }
}

/// Why a time zone could not be read (the core's one error type).
extension CoreError {
    static let notTZif = CoreError(.invalidConfig, "it is not a TZif time zone file (RFC 8536)")
    static let truncatedTZif = CoreError(.invalidConfig, "the TZif file is cut short")
    static func badZoneRule(_ text: String) -> CoreError {
        CoreError(.invalidConfig, "its footer rule \"\(text)\" is not a POSIX TZ string")
    }
}
