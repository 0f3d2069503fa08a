import Testing
@testable import BlockCore

/// A flat view of a document: (section, key, value, line) in file order.
private func flat(_ text: String) throws -> [String] {
    try INIDocument.parse(file: "t.conf", text: text).sections.flatMap { s in
        s.entries.map { "\(s.name).\($0.key)=\($0.value)@\($0.line)" }
    }
}

private func parseError(_ text: String) -> String? {
    do throws(CoreError) {
        _ = try INIDocument.parse(file: "/etc/blockd/t.conf", text: text)
        return nil
    } catch {
        #expect(error.code == .invalidConfig)
        return error.message
    }
}

@Suite("INI (systemd.syntax(7))")
struct INITests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let expected: [String]
        var testDescription: String { name }
    }

    @Test("systemd.syntax: comments, blanks, trimming, continuation, repeats", arguments: [
        Case(name: "key and value are trimmed around '='",
             text: "[A]\n  Key  =  some value  \n", expected: ["A.Key=some value@2"]),
        Case(name: "'#' and ';' comment lines and blank lines are skipped, also when indented",
             text: "# c\n; c\n\n[A]\n   # indented comment\nK=v\n\n", expected: ["A.K=v@6"]),
        Case(name: "'#' inside a value is not a comment",
             text: "[A]\nK=a # b\n", expected: ["A.K=a # b@2"]),
        Case(name: "a trailing backslash continues the value, joined with one space, line of the key",
             text: "[A]\nK=one \\\n     two\\\nthree\nL=x\n", expected: ["A.K=one two three@2", "A.L=x@5"]),
        Case(name: "comment lines inside a continued value are skipped",
             text: "[A]\nK=one \\\n# note\n; note\n two\n", expected: ["A.K=one two@2"]),
        Case(name: "a blank line ends a continued value",
             text: "[A]\nK=one \\\n\nL=two\n", expected: ["A.K=one@2", "A.L=two@4"]),
        Case(name: "a backslash on the last line ends the value",
             text: "[A]\nK=one \\", expected: ["A.K=one@2"]),
        Case(name: "an escaped trailing backslash is not a continuation",
             text: "[A]\nK=C:\\\\\nL=x\n", expected: ["A.K=C:\\\\@2", "A.L=x@3"]),
        Case(name: "CRLF line endings parse like LF",
             text: "[A]\r\nK=v\r\nL=one \\\r\n two\r\n", expected: ["A.K=v@2", "A.L=one two@3"]),
        Case(name: "a UTF-8 BOM is ignored and does not shift line numbers",
             text: "\u{FEFF}[A]\nK=v\n", expected: ["A.K=v@2"]),
        Case(name: "repeated keys are all kept in order",
             text: "[A]\nK=1\nK=\nK=2\n", expected: ["A.K=1@2", "A.K=@3", "A.K=2@4"]),
        Case(name: "repeated sections are kept as written",
             text: "[A]\nK=1\n[B]\nK=2\n[A]\nK=3\n", expected: ["A.K=1@2", "B.K=2@4", "A.K=3@6"]),
        Case(name: "keys are case-sensitive and kept verbatim, suffixes too",
             text: "[A]\nkey=1\nKey[ja]=２\n", expected: ["A.key=1@2", "A.Key[ja]=２@3"]),
        Case(name: "only the first '=' splits key from value",
             text: "[A]\nURL=https://x.org/?a=b\n", expected: ["A.URL=https://x.org/?a=b@2"]),
        Case(name: "an empty file has no sections",
             text: "", expected: []),
    ])
    func parses(_ c: Case) throws {
        #expect(try flat(c.text) == c.expected)
    }

    @Test("repeated section headers merge when read by name, as systemd does")
    func mergedSections() throws {
        let doc = try INIDocument.parse(file: "t", text: "[A]\nK=1\n[B]\nK=2\n[A]\nK=3\n")
        #expect(doc.entries(inSectionsNamed: "A").map(\.value) == ["1", "3"])
        #expect(doc.sections.map(\.line) == [1, 3, 5])
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let message: String
        var testDescription: String { name }
    }

    @Test("§7: a malformed file is an error naming file and line", arguments: [
        Bad(name: "a key before any section",
            text: "# intro\nMaxActivities=5\n[Daemon]\n",
            message: "/etc/blockd/t.conf:2: MaxActivities= comes before any [Section] header; put it under a section such as [Daemon]"),
        Bad(name: "an empty section name",
            text: "[A]\nK=v\n[]\n",
            message: "/etc/blockd/t.conf:3: the section header '[]' has no name; write e.g. [Daemon]"),
        Bad(name: "an unclosed section header",
            text: "[Daemon\n",
            message: "/etc/blockd/t.conf:1: '[Daemon' starts a section header but does not end with ']'; write e.g. [Daemon]"),
        Bad(name: "a line without '='",
            text: "[A]\r\nK=v\r\n\r\njust words\r\n",
            message: "/etc/blockd/t.conf:4: 'just words' is not a Key=Value assignment, a [Section] header or a comment; add '=' or start the line with '#' to comment it out"),
        Bad(name: "a line without '=' after a BOM and continuation names the first line",
            text: "\u{FEFF}[A]\nnot \\\n an assignment\n",
            message: "/etc/blockd/t.conf:2: 'not an assignment' is not a Key=Value assignment, a [Section] header or a comment; add '=' or start the line with '#' to comment it out"),
        Bad(name: "an empty key",
            text: "[A]\n = v\n",
            message: "/etc/blockd/t.conf:2: '= v' has no key before '='; write Key=Value"),
    ])
    func malformed(_ c: Bad) {
        #expect(parseError(c.text) == c.message)
    }

    @Test("list values split on spaces and tabs; quotes keep spaces", arguments: [
        ("a b\tc", ["a", "b", "c"]),
        ("  a   b  ", ["a", "b"]),
        ("\"/opt/My App/app\" firefox", ["/opt/My App/app", "firefox"]),
        ("'single quoted' x", ["single quoted", "x"]),
        ("a\"b c\"d", ["ab cd"]),
        ("\"\"", [""]),
        ("", []),
    ])
    func words(_ value: String, _ expected: [String]) throws {
        #expect(try INI.words(value) == expected)
    }

    @Test("an unterminated quote in a list is an error")
    func unterminatedQuote() {
        #expect(throws: CoreError.self) { try INI.words("\"/opt/My App") }
    }
}
