/// The managed section of a hosts file (E1), as pure byte manipulation.
///
/// Everything outside the section is preserved byte for byte: the file is handled as bytes,
/// never decoded, so CRLF line ends, a missing final newline and bytes that are not UTF-8
/// survive any number of block/unblock cycles. A new section goes at the top of the file,
/// because resolvers that read hosts files take the first matching line: a user's own line
/// for a blocked domain further down cannot undo the block, and removing a section at the
/// top restores the rest exactly.
public enum HostsFile {
    public static let beginMarker = Array("# BEGIN blockd: managed by blockd(8); edits here are undone while blocks are active".utf8)
    public static let endMarker = Array("# END blockd".utf8)

    /// Where blocked names point (E5). On Linux 0.0.0.0 and :: are the local machine (a
    /// connect to 0.0.0.0 lands on 127.0.0.1), so a machine running its own web server would
    /// show that instead of a refusal. `reject` is a loopback address and an RFC 6666
    /// discard-only address that blockd's nftables table refuses at once; `unspecified` is
    /// the fallback where nftables is missing or turned off.
    public struct Sink: Equatable, Sendable {
        public var v4: String
        public var v6: String
        public init(v4: String, v6: String) {
            self.v4 = v4
            self.v6 = v6
        }

        public static let unspecified = Sink(v4: "0.0.0.0", v6: "::")
        public static let reject = Sink(v4: "127.0.0.253", v6: "100::1")

        public var addresses: [IPAddress] { [v4, v6].compactMap(IPAddress.init) }
        public var description: String { "\(v4) \(v6)" }
    }

    /// The section for `domains` (normalised, E1): `0.0.0.0 d` and `:: d` per domain (or the
    /// addresses of `sink`), in the order given, between the markers; every line ends with LF.
    /// Nil for no domains.
    public static func section(for domains: [String], sink: Sink = .unspecified) -> [UInt8]? {
        guard !domains.isEmpty else { return nil }
        var out = beginMarker + [10]
        out.reserveCapacity(domains.reduce(out.count + endMarker.count + 1) { $0 + 2 * $1.utf8.count + 32 })
        for d in domains {
            out.append(contentsOf: "\(sink.v4) ".utf8)
            out.append(contentsOf: d.utf8)
            out.append(10)
            out.append(contentsOf: "\(sink.v6) ".utf8)
            out.append(contentsOf: d.utf8)
            out.append(10)
        }
        return out + endMarker + [10]
    }

    /// `file` with its managed section replaced by `section` (nil: removed). A file without
    /// a section gets it prepended. Stray extra sections are removed.
    public static func splice(_ file: [UInt8], section: [UInt8]?) -> [UInt8] {
        let ranges = sectionRanges(in: file)
        guard !ranges.isEmpty else {
            guard let section else { return file }
            return section + file
        }
        var out: [UInt8] = []
        out.reserveCapacity(file.count + (section?.count ?? 0))
        var cursor = 0
        for (i, r) in ranges.enumerated() {
            out += file[cursor..<r.lowerBound]
            if i == 0, let section { out += section }
            cursor = r.upperBound
        }
        out += file[cursor...]
        return out
    }

    /// The domains listed in the file's first managed section, in order (for tamper checks).
    public static func blockedDomains(in file: [UInt8]) -> [String] {
        guard let r = sectionRanges(in: file).first else { return [] }
        var domains: [String] = []
        for line in lines(file[r]) {
            if let d = entryDomain(line), d.prefix.utf8.contains(46) { domains.append(d.domain) }  // the IPv4 sink's lines
        }
        return domains
    }

    /// Byte ranges of managed sections, each from its BEGIN line to the end of its END line
    /// (newline included). A BEGIN without an END before the next BEGIN (someone deleted the
    /// END line) covers only itself and the entry lines right after it, so that no line of
    /// the user's is ever swallowed. One pass, no array of lines: a section of
    /// 300,000 lines (100,000 names with their www. and m. forms) is scanned on every write.
    static func sectionRanges(in file: [UInt8]) -> [Range<Int>] {
        file.withUnsafeBufferPointer { sectionRanges(in: $0) }
    }

    static func sectionRanges(in file: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var at = 0
        while at < file.count {
            let begin = line(in: file, at: at)
            guard matches(file, begin.content, beginMarker) else {
                at = begin.end
                continue
            }
            var next = begin.end, closed: Int?
            while next < file.count {
                let l = line(in: file, at: next)
                if matches(file, l.content, endMarker) { closed = l.end; break }
                if matches(file, l.content, beginMarker) { break }
                next = l.end
            }
            if let closed {
                ranges.append(at..<closed)
                at = closed
                continue
            }
            var k = begin.end
            while k < file.count {
                let l = line(in: file, at: k)
                guard isEntry(file, l.content) else { break }
                k = l.end
            }
            ranges.append(at..<k)
            at = k
        }
        return ranges
    }

    /// The line at `start`: its content without LF (and without a CR before it, or at the
    /// end of the file) and where the next line starts.
    static func line(in file: UnsafeBufferPointer<UInt8>, at start: Int) -> (content: Range<Int>, end: Int) {
        var stop = start
        while stop < file.count && file[stop] != 10 { stop += 1 }
        let contentEnd = stop > start && file[stop - 1] == 13 ? stop - 1 : stop
        return (start..<contentEnd, stop < file.count ? stop + 1 : stop)
    }

    static func matches(_ file: UnsafeBufferPointer<UInt8>, _ content: Range<Int>, _ marker: [UInt8]) -> Bool {
        content.count == marker.count && file[content].elementsEqual(marker)
    }

    /// Whether the line is one `entryDomain` reads, without making its strings.
    static func isEntry(_ file: UnsafeBufferPointer<UInt8>, _ content: Range<Int>) -> Bool {
        let line = file[content]
        for (_, p) in entryPrefixBytes where line.starts(with: p) {
            let rest = line.dropFirst(p.count)
            return !rest.isEmpty && rest.allSatisfy { $0 > 32 && $0 < 127 }
        }
        return false
    }

    static func lines(_ bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var out: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        while start < bytes.endIndex {
            var end = start
            while end < bytes.endIndex && bytes[end] != 10 { end += 1 }
            var line = bytes[start..<end]
            if line.last == 13 { line = line.dropLast() }
            out.append(line)
            start = end + 1
        }
        return out
    }

    /// Every sink's line prefixes: a section written with either sink is recognised, so
    /// switching sinks replaces it instead of leaving a stray one.
    static let entryPrefixes = [Sink.unspecified, Sink.reject].flatMap { ["\($0.v4) ", "\($0.v6) "] }
    static let entryPrefixBytes = entryPrefixes.map { ($0, Array($0.utf8)) }

    /// `0.0.0.0 d` or `:: d` (or a line for another sink), as written by `section(for:)`.
    static func entryDomain(_ line: ArraySlice<UInt8>) -> (prefix: String, domain: String)? {
        for (prefix, p) in entryPrefixBytes {
            if line.starts(with: p) {
                let rest = line.dropFirst(p.count)
                guard !rest.isEmpty, rest.allSatisfy({ $0 > 32 && $0 < 127 }) else { return nil }
                return (prefix, String(decoding: rest, as: UTF8.self))
            }
        }
        return nil
    }
}
