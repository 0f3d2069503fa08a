/// E6: while a name is blocked, no line outside the managed section may give it an address.
///
/// glibc with `multi on` (Debian's /etc/host.conf) returns the addresses of every matching
/// line, so a user's own line for a blocked name, or one appended during a block, would hand
/// browsers a second address to try. Such a line is held: it becomes a comment that keeps its
/// exact bytes, and, when it also names hosts that are not blocked, a line for those alone
/// follows it so they keep resolving:
///
///     # blockd-held: 10.0.0.7 nas instagram.com   # the user's comment
///     10.0.0.7 nas # blockd-kept
///
/// `restore` turns every such pair back into the original line byte for byte (E1 holds after
/// the unlock). Pure byte work, like `HostsFile`: CRLF, a missing final newline and bytes that
/// are not UTF-8 survive.
public enum HostsOverrides {
    public static let heldPrefix = Array("# blockd-held: ".utf8)
    public static let keptSuffix = Array(" # blockd-kept".utf8)

    /// `file` with every held line outside the managed section restored.
    public static func restore(_ file: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(file.count)
        forEachRegion(of: file) { range, isSection in
            guard !isSection else { return out += file[range] }
            // A region ends where a section's BEGIN line starts, never a kept line: pairs
            // are looked for within it.
            let lines = split(file, range)
            var i = 0
            while i < lines.count {
                let line = lines[i]
                guard line.content.starts(with: heldPrefix) else {
                    out += file[line.start..<line.end]
                    i += 1
                    continue
                }
                out += line.content.dropFirst(heldPrefix.count)
                if i + 1 < lines.count, lines[i + 1].content.reversed().starts(with: keptSuffix.reversed()) {
                    out += lines[i + 1].ending(in: file)  // the original's ending travels on the kept line
                    i += 2
                } else {
                    out += line.ending(in: file)
                    i += 1
                }
            }
        }
        return out
    }

    /// `file` (restored first, so the result depends only on the user's lines) with every line
    /// outside the managed section that maps a name in `blocked`, or a name under one (W1),
    /// held. `blocked` holds
    /// normalised (lower-case) names. Returns the new bytes and the blocked names that lines
    /// gave an address to.
    public static func hold(_ file: [UInt8], blocked: Set<String>) -> (bytes: [UInt8], held: Set<String>) {
        hold(file, blocking: blocked.isEmpty ? nil : { Site.cover(of: $0, in: blocked) != nil })
    }

    /// `hold` with the blocked names given as a test (nil: none), so that a caller with
    /// 300,000 names in a structure of its own does not copy them into a set per write.
    /// `isBlocked` says whether a normalised name is blocked, itself or through a parent (W1).
    public static func hold(_ file: [UInt8], blocking isBlocked: ((String) -> Bool)?) -> (bytes: [UInt8], held: Set<String>) {
        let plain = restore(file)
        guard let isBlocked else { return (plain, []) }
        var out: [UInt8] = []
        out.reserveCapacity(plain.count)
        var held: Set<String> = []
        forEachRegion(of: plain) { range, isSection in
            guard !isSection else { return out += plain[range] }
            for line in split(plain, range) {
                guard let entry = parse(line.content) else {
                    out += plain[line.start..<line.end]
                    continue
                }
                let hit = entry.names.filter { isBlocked(normalised($0)) }  // W1: subdomains too
                guard !hit.isEmpty else {
                    out += plain[line.start..<line.end]
                    continue
                }
                for name in hit { held.insert(normalised(name)) }
                let ending = line.ending(in: plain)
                let kept = entry.names.filter { !isBlocked(normalised($0)) }
                out += heldPrefix
                out += line.content
                if kept.isEmpty {
                    out += ending
                } else {
                    out += ending.isEmpty ? [10] : ending
                    out += entry.address
                    for name in kept { out += [32] + name }
                    out += keptSuffix
                    out += ending
                }
            }
        }
        return (out, held)
    }

    /// `hold(HostsFile.splice(file, section: section), blocking:)`, with the file's largest
    /// part scanned once: the lines outside the section are looked at with an empty section in
    /// its place, and the section goes in last.
    public static func splice(_ file: [UInt8], section: [UInt8]?, blocking isBlocked: ((String) -> Bool)?) -> [UInt8] {
        splice(file, section: section, blocking: isBlocked, known: nil).bytes
    }

    /// The same, and where the section is in the result. `known`, when given, is where the
    /// file's one managed section is (the file is exactly as blockd last left it): the file's
    /// largest part is then not scanned at all, only the lines around it (E1 at scale: a
    /// section of 300,000 lines was scanned on every change).
    public static func splice(_ file: [UInt8], section: [UInt8]?, blocking isBlocked: ((String) -> Bool)?,
                              known: Range<Int>?) -> (bytes: [UInt8], section: Range<Int>?) {
        let outside: [UInt8]
        if let known {
            outside = Array(file[..<known.lowerBound]) + (section == nil ? [] : placeholder) + file[known.upperBound...]
        } else {
            outside = HostsFile.splice(file, section: section == nil ? nil : placeholder)
        }
        let held = hold(outside, blocking: isBlocked).bytes
        guard let section else { return (held, nil) }
        let at = HostsFile.sectionRanges(in: held).first?.lowerBound ?? 0
        return (HostsFile.splice(held, section: section), at..<(at + section.count))
    }

    /// An empty managed section, where the section goes while the rest of the file is looked at.
    static let placeholder = HostsFile.beginMarker + [10] + HostsFile.endMarker + [10]

    /// The names that held lines in `file` keep from resolving (for status and tests).
    public static func heldNames(in file: [UInt8]) -> Set<String> {
        var names: Set<String> = []
        for line in split(file) where line.content.starts(with: heldPrefix) {
            if let entry = parse(line.content.dropFirst(heldPrefix.count)) {
                for name in entry.names { names.insert(normalised(name)) }
            }
        }
        return names
    }

    // MARK: Lines

    struct Line {
        var start: Int
        var end: Int  // after the line ending
        var content: ArraySlice<UInt8>  // without the line ending

        func ending(in file: [UInt8]) -> ArraySlice<UInt8> { file[(start + content.count)..<end] }
    }

    static func split(_ file: [UInt8]) -> [Line] { split(file, 0..<file.count) }

    /// The lines of `range`, which starts at a line's start and ends at a line's end.
    static func split(_ file: [UInt8], _ range: Range<Int>) -> [Line] {
        var out: [Line] = []
        var start = range.lowerBound
        while start < range.upperBound {
            var end = start
            while end < range.upperBound && file[end] != 10 { end += 1 }
            var content = file[start..<end]
            if end < file.count, content.last == 13 { content = content.dropLast() }
            let lineEnd = end < file.count ? end + 1 : end
            out.append(Line(start: start, end: lineEnd, content: content))
            start = lineEnd
        }
        return out
    }

    /// Calls `body` with the file's parts in order: each managed section whole (a range of
    /// 300,000 lines is copied, not split), and the user's lines between them.
    static func forEachRegion(of file: [UInt8], _ body: (Range<Int>, _ isSection: Bool) -> Void) {
        var cursor = 0
        for section in HostsFile.sectionRanges(in: file) {
            if cursor < section.lowerBound { body(cursor..<section.lowerBound, false) }
            body(section, true)
            cursor = section.upperBound
        }
        if cursor < file.count { body(cursor..<file.count, false) }
    }

    /// An address line: the address and the names, comments cut (hosts(5)).
    static func parse(_ content: ArraySlice<UInt8>) -> (address: ArraySlice<UInt8>, names: [ArraySlice<UInt8>])? {
        let text = content.prefix { $0 != 35 }  // '#'
        let fields = text.split(whereSeparator: { $0 == 32 || $0 == 9 || $0 == 13 })
        guard fields.count >= 2 else { return nil }
        return (fields[0], Array(fields.dropFirst()))
    }

    /// Host names match without regard to ASCII case or a final dot.
    static func normalised(_ name: ArraySlice<UInt8>) -> String {
        var bytes = name.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
        if bytes.last == 46 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
