/// One `Key=Value` line of an INI file. `line` is where the key is written (the first line
/// of a continued value), so errors point at what the user typed.
public struct INIEntry: Hashable, Sendable {
    public var key: String
    public var value: String
    public var line: Int

    public init(key: String, value: String, line: Int) {
        self.key = key
        self.value = value
        self.line = line
    }
}

/// A `[Name]` section and its entries in file order. Repeated keys are all kept: list keys
/// append (and reset on an empty value), single-valued keys take the last one, as systemd does.
public struct INISection: Hashable, Sendable {
    public var name: String
    public var line: Int
    public var entries: [INIEntry]

    public init(name: String, line: Int, entries: [INIEntry] = []) {
        self.name = name
        self.line = line
        self.entries = entries
    }
}

/// A parsed systemd-style INI file (systemd.syntax(7)). Sections are kept as written; a name
/// that appears twice gives two sections, and readers that want systemd's merging use
/// `entries(inSectionsNamed:)`.
public struct INIDocument: Hashable, Sendable {
    public var sections: [INISection]

    public init(sections: [INISection] = []) {
        self.sections = sections
    }

    /// Entries of every section with this name, in file order (systemd merges repeated
    /// sections into one).
    public func entries(inSectionsNamed name: String) -> [INIEntry] {
        sections.filter { $0.name == name }.flatMap(\.entries)
    }

    /// Parses `text`, the contents of `file`; `file` is only used in error messages, which
    /// read `file:line: ...` (§7).
    ///
    /// Rules beyond systemd.syntax(7), decided here:
    /// - A continued value is joined with exactly one space: the backslash and the whitespace
    ///   around the break collapse, so indenting the next line changes nothing. An even number
    ///   of trailing backslashes is an escaped backslash, not a continuation (as in systemd).
    /// - A backslash on the last line of the file simply ends the value.
    /// - Comment lines inside a continued value are skipped; a blank line ends it.
    /// - Section names are taken verbatim between the brackets (no trimming), so `[ Daemon ]`
    ///   is reported as an unknown section rather than silently accepted.
    /// - Values are not unquoted here; list keys do that with `INI.words(_:)`.
    public static func parse(file: String, text: String) throws(CoreError) -> INIDocument {
        let (doc, problems) = Self.read(file: file, text: text)
        if let first = problems.first { throw first }
        return doc
    }

    /// Like `parse`, but a line that does not parse is a problem and is skipped, and the rest is
    /// still read: every malformed line of a file in one run (§7, `--check-config`), in line
    /// order.
    public static func read(file: String, text: String) -> (INIDocument, [CoreError]) {
        var sections: [INISection] = []
        var problems: [CoreError] = []
        func finish(_ line: Int, _ raw: String) {
            do throws(CoreError) { try Self.finish(line, raw, file: file, into: &sections) } catch { problems.append(error) }
        }
        // A pending continued value: the key line's number and the text so far.
        var pending: (line: Int, text: String)?
        var lineNumber = 0
        for rawLine in Self.lines(of: text) {
            lineNumber += 1
            let trimmed = rawLine.trimmingINISpace()
            if let first = trimmed.first, first == "#" || first == ";" { continue }
            if trimmed.isEmpty {
                if let p = pending {
                    pending = nil
                    finish(p.line, p.text)
                }
                continue
            }
            let start = pending?.line ?? lineNumber
            let sofar = pending.map { $0.text + " " } ?? ""
            if Self.endsWithContinuation(trimmed) {
                pending = (start, sofar + String(trimmed.unicodeScalars.dropLast()).trimmingINISpace())
                continue
            }
            pending = nil
            finish(start, sofar + trimmed)
        }
        if let p = pending { finish(p.line, p.text) }
        return (INIDocument(sections: sections), problems)
    }

    /// One logical line (continuations joined): a section header or a `Key=Value` entry.
    static func finish(_ line: Int, _ raw: String, file: String, into sections: inout [INISection]) throws(CoreError) {
        func fail(_ line: Int, _ why: String) -> CoreError {
            CoreError(.invalidConfig, "\(file):\(line): \(why)")
        }
        let content = raw.trimmingINISpace()
        if content.first == "[" {
            guard content.last == "]", content.count >= 2 else {
                throw fail(line, "'\(content)' starts a section header but does not end with ']'; write e.g. [Daemon]")
            }
            let name = String(content.dropFirst().dropLast())
            guard !name.isEmpty else {
                throw fail(line, "the section header '[]' has no name; write e.g. [Daemon]")
            }
            guard !name.contains("[") && !name.contains("]") else {
                throw fail(line, "'\(content)' is not a section header; a section name cannot contain '[' or ']'")
            }
            sections.append(INISection(name: name, line: line))
            return
        }
        guard let eq = content.firstIndex(of: "=") else {
            throw fail(line, "'\(content)' is not a Key=Value assignment, a [Section] header or a comment; add '=' or start the line with '#' to comment it out")
        }
        let key = String(content[..<eq]).trimmingINISpace()
        let value = String(content[content.index(after: eq)...]).trimmingINISpace()
        guard !key.isEmpty else {
            throw fail(line, "'\(content)' has no key before '='; write Key=Value")
        }
        guard !sections.isEmpty else {
            throw fail(line, "\(key)= comes before any [Section] header; put it under a section such as [Daemon]")
        }
        sections[sections.count - 1].entries.append(INIEntry(key: key, value: value, line: line))
    }

    /// Lines split on LF only (as systemd reads them), a CR before the LF dropped so CRLF
    /// files from other editors parse the same, and a leading UTF-8 BOM ignored.
    static func lines(of text: String) -> [String] {
        var bytes = Substring(text).utf8[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            let body = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            return String(decoding: body, as: UTF8.self)
        }
    }

    static func endsWithContinuation(_ line: String) -> Bool {
        var count = 0
        for c in line.unicodeScalars.reversed() {
            guard c == "\\" else { break }
            count += 1
        }
        return count % 2 == 1
    }
}

/// Helpers shared by the config readers.
public enum INI {
    /// Splits a list value into words on spaces and tabs, as systemd's list settings do.
    /// A word may be quoted with `"` or `'` to keep spaces in it (`Apps="/opt/My App/app"`);
    /// quotes may also appear inside a word (`a"b c"d` is one word `ab cd`). No backslash
    /// escapes: nothing in blockd's lists needs them, and paths may contain backslashes.
    /// The error has no file:line; callers add it because they know the entry.
    public static func words(_ value: String) throws(CoreError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        for ch in value {
            if let q = quote {
                if ch == q { quote = nil } else { current.append(ch) }
                continue
            }
            switch ch {
            case " ", "\t":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "\"", "'":
                quote = ch
                inWord = true
            default:
                current.append(ch)
                inWord = true
            }
        }
        if let q = quote {
            throw CoreError(.invalidConfig, "the value has an opening \(q) without a closing one; close the quote")
        }
        if inWord { words.append(current) }
        return words
    }
}

extension String {
    /// systemd's WHITESPACE set minus the newline (lines are already split): space, tab, CR.
    func trimmingINISpace() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return String(s)
    }
}
