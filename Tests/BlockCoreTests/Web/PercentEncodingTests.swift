import Testing
@testable import BlockCore

/// S7: values put into URLs use the RFC 3986 §2.3 unreserved set only. Expected outputs
/// were checked with python3 `urllib.parse.quote(s, safe='-._~')`.
@Suite struct PercentEncodingTests {
    @Test("S7: only ASCII letters, digits and -._~ pass; all else is UTF-8 with upper-case hex", arguments: [
        ("インスタ", "%E3%82%A4%E3%83%B3%E3%82%B9%E3%82%BF"),
        ("a b", "a%20b"),  // %20, never "+"
        ("&", "%26"),
        ("~", "~"),
        ("a/b?c=d", "a%2Fb%3Fc%3Dd"),
        ("😀", "%F0%9F%98%80"),  // 4-byte UTF-8
        ("\u{00DC}n\u{00EF}code", "%C3%9Cn%C3%AFcode"),  // Latin letters are not ASCII
        ("-._~AZaz09", "-._~AZaz09"),
        ("100%", "100%25"),
        ("+", "%2B"),
        ("{app}", "%7Bapp%7D"),
        ("", ""),
    ])
    func encode(input: String, expected: String) {
        #expect(PercentEncoding.encode(input) == expected)
    }

    @Test("S7: every ASCII byte outside the unreserved set is encoded")
    func asciiTable() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        for byte in UInt8(0)...UInt8(127) {
            let s = String(decoding: [byte], as: UTF8.self)
            let expected = unreserved.contains(byte) ? s : "%" + hex(byte)
            #expect(PercentEncoding.encode(s) == expected, "byte \(byte)")
        }
    }

    private func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(b >> 4)], digits[Int(b & 0x0F)]])
    }

    @Test("S7: OpenURL= placeholders are replaced by encoded values; the URL itself is kept", arguments: [
        ("https://alt.example/?from={app}&list={selection}",
         TemplateValues(selection: "SNS & 動画", app: "インスタ"),
         "https://alt.example/?from=%E3%82%A4%E3%83%B3%E3%82%B9%E3%82%BF&list=SNS%20%26%20%E5%8B%95%E7%94%BB"),
        ("https://alt.example/{selection}/{until}?left={remaining}",
         TemplateValues(selection: "a/b", until: "22:00", remaining: "1h 5m"),
         "https://alt.example/a%2Fb/22%3A00?left=1h%205m"),
        // A missing value is empty in a URL, not S6 prose such as "this app".
        ("https://alt.example/?from={app}", TemplateValues(selection: "Social"), "https://alt.example/?from="),
        ("https://alt.example/?from={app}", TemplateValues(app: ""), "https://alt.example/?from="),
        ("https://alt.example/{{x}}", TemplateValues(), "https://alt.example/{x}"),
    ])
    func expand(template: String, values: TemplateValues, expected: String) throws {
        #expect(PercentEncoding.expand(urlTemplate: template, values: values) == expected)
        let parsed = try PercentEncoding.parse(urlTemplate: template)
        #expect(PercentEncoding.expand(urlTemplate: parsed, values: values) == expected)
    }

    @Test("S6/S7: a bad OpenURL= template is a config error at load", arguments: [
        "https://alt.example/?q={query}",
        "https://alt.example/?q={app",
        "https://alt.example/?q=app}",
    ])
    func invalidURLTemplate(template: String) {
        #expect(throws: CoreError.self) { try PercentEncoding.validate(urlTemplate: template) }
        do {
            try PercentEncoding.validate(urlTemplate: template)
        } catch {
            #expect(error.code == .invalidConfig)
            #expect(error.message.hasPrefix("OpenURL: "))
        }
        // Should one slip past load anyway, no raw brace reaches the opener.
        let expanded = PercentEncoding.expand(urlTemplate: template, values: TemplateValues(app: "x"))
        #expect(!expanded.contains("{") && !expanded.contains("}"))
    }
}
