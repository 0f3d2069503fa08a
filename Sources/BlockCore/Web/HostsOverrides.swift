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
        let lines = split(file)
        let sections = HostsFile.sectionRanges(in: file)
        var i = 0
        while i < lines.count {
            let line = lines[i]
            guard !inSection(line.start, sections), line.content.starts(with: heldPrefix) else {
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
        return out
    }

    /// `file` (restored first, so the result depends only on the user's lines) with every line
    /// outside the managed section that maps a name in `blocked`, or a name under one (W1),
    /// held. `blocked` holds
    /// normalised (lower-case) names. Returns the new bytes and the blocked names that lines
    /// gave an address to.
    public static func hold(_ file: [UInt8], blocked: Set<String>) -> (bytes: [UInt8], held: Set<String>) {
        let plain = restore(file)
        guard !blocked.isEmpty else { return (plain, []) }
        var out: [UInt8] = []
        out.reserveCapacity(plain.count)
        var held: Set<String> = []
        let sections = HostsFile.sectionRanges(in: plain)
        for line in split(plain) {
            let whole = plain[line.start..<line.end]
            guard !inSection(line.start, sections), let entry = parse(line.content) else {
                out += whole
                continue
            }
            let hit = entry.names.filter { Site.cover(of: normalised($0), in: blocked) != nil }  // W1: subdomains too
            guard !hit.isEmpty else {
                out += whole
                continue
            }
            for name in hit { held.insert(normalised(name)) }
            let ending = line.ending(in: plain)
            let kept = entry.names.filter { Site.cover(of: normalised($0), in: blocked) == nil }
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
        return (out, held)
    }

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

    static func split(_ file: [UInt8]) -> [Line] {
        var out: [Line] = []
        var start = 0
        while start < file.count {
            var end = start
            while end < file.count && file[end] != 10 { end += 1 }
            var content = file[start..<end]
            if end < file.count, content.last == 13 { content = content.dropLast() }
            let lineEnd = end < file.count ? end + 1 : end
            out.append(Line(start: start, end: lineEnd, content: content))
            start = lineEnd
        }
        return out
    }

    static func inSection(_ offset: Int, _ sections: [Range<Int>]) -> Bool {
        sections.contains { $0.contains(offset) }
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
