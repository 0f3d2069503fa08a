/// An IPv4 or IPv6 address as network-order bytes (E5: what DNS answers, what sockets are cut
/// for, what the nftables table rejects). Text is RFC 5952's canonical form for IPv6.
public struct IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6).
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses dotted-quad IPv4 or IPv6 text (`::` compression, no zone, no embedded IPv4).
    public init?(_ text: String) {
        if text.contains(":") {
            guard let b = IPAddress.parse6(text) else { return nil }
            bytes = b
        } else {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var b: [UInt8] = []
            for p in parts {
                guard !p.isEmpty, p.count <= 3, p.allSatisfy(\.isASCIIDigit), let v = UInt8(p) else { return nil }
                b.append(v)
            }
            bytes = b
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// `::ffff:a.b.c.d`: how an IPv4 peer appears on a dual-stack IPv6 socket.
    public var v4Mapped: IPAddress? {
        isIPv4 ? IPAddress(bytes: [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + bytes) : nil
    }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = (0..<8).map { Int(bytes[2 * $0]) << 8 | Int(bytes[2 * $0 + 1]) }
        // RFC 5952 §4.2: the longest run of two or more zero groups (the first on a tie) is "::".
        var best = (start: -1, length: 0)
        var i = 0
        while i < 8 {
            var j = i
            while j < 8 && groups[j] == 0 { j += 1 }
            if j - i > best.length && j - i >= 2 { best = (i, j - i) }
            i = j == i ? i + 1 : j
        }
        func hex(_ range: Range<Int>) -> String { range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
        guard best.start >= 0 else { return hex(0..<8) }
        return hex(0..<best.start) + "::" + hex((best.start + best.length)..<8)
    }

    public static func < (a: IPAddress, b: IPAddress) -> Bool {
        a.bytes.count != b.bytes.count ? a.bytes.count < b.bytes.count : a.bytes.lexicographicallyPrecedes(b.bytes)
    }

    static func parse6(_ text: String) -> [UInt8]? {
        var halves = [text]
        if let r = text.firstRange(of: "::") {
            halves = [String(text[..<r.lowerBound]), String(text[r.upperBound...])]
            guard !halves[1].contains("::") else { return nil }
        }
        func groups(_ s: String) -> [UInt16]? {
            if s.isEmpty { return [] }
            var out: [UInt16] = []
            for g in s.split(separator: ":", omittingEmptySubsequences: false) {
                guard !g.isEmpty, g.count <= 4, let v = UInt16(g, radix: 16) else { return nil }
                out.append(v)
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard all.count == 8 else { return nil }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
