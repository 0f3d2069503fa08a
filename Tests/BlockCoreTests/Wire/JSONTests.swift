import Testing
@testable import BlockCore

@Suite struct JSONTests {
    // MARK: Valid documents round-trip

    static let validDocuments: [String] = [
        "null", "true", "false", "0", "-0", "1", "-1", "42", "1.5", "-2.25", "2.0", "1e3", "1E-3",
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1e308", "5e-324",
        "123456789012345678901234567890", "0.1",
        #""""#, #""hello""#, #""a\"b\\c\/d""#, #""\b\f\n\r\t""#, #""\u0000\u001f""#,
        #""\u00e9\u4e2d\ud83d\ude00""#, #""é中😀""#, "\"\u{7F}\u{2028}\"",
        "[]", "{}", "[[]]", "[{}]", "[1,2,3]", #"{"a":1}"#, " \t\r\n[ 1 , 2 ]\n",
        #"{"now":"2026-11-29T13:05:00+09:00","blocked":[{"selection":"instagram","until":"x","reasons":["instagram","bedtime"]}],"activities":[],"failures":[],"enforcement":{}}"#,
        #"{"z":1,"a":2,"m":{"y":[true,false,null],"b":-0.5}}"#,
        #"{"":""}"#, #"{"a":{"a":{"a":{}}}}"#,
    ]

    @Test(arguments: validDocuments)
    func validDocumentRoundTrips(_ text: String) throws {
        let value = try JSON.parse(text)
        let compact = value.serialized()
        #expect(!compact.contains("\n") && !compact.contains("\r"))
        #expect(try JSON.parse(compact) == value)
        #expect(try JSON.parse(compact).serialized() == compact, "key order and number form are stable")
        #expect(try JSON.parse(value.prettyPrinted()) == value)
    }

    // MARK: Invalid documents are errors, never crashes

    static let invalidDocuments: [(String, String)] = [
        ("", "end of input"), ("   ", "end of input"), ("[", "end of input"), ("{", "end of input"),
        ("[1,]", "expected a value"), (#"{"a":1,}"#, "member name"), ("[1 2]", "',' or ']'"),
        (#"{"a" 1}"#, "':'"), (#"{a:1}"#, "member name"), ("{'a':1}", "member name"),
        ("[1] x", "end of input after"), ("1 2", "end of input after"), ("nul", "literal"),
        ("True", "expected a value"), ("NaN", "expected a value"), ("Infinity", "expected a value"),
        ("-Infinity", "digit"), ("01", "leading zeros"), ("-01", "leading zeros"), ("00", "leading zeros"),
        ("1.", "digit after '.'"), (".5", "expected a value"), ("+1", "expected a value"), ("-", "digit"),
        ("1e", "exponent"), ("1e+", "exponent"), ("0x10", "end of input after"), ("1e400", "too large"),
        ("-1e400", "too large"), ("[1] // c", "end of input after"), ("/* c */ 1", "expected a value"),
        ("\"abc", "inside a string"), ("\"a\nb\"", "control character 0x0A"), ("\"\t\"", "control character"),
        (#""\x""#, "invalid escape"), (#""\u12""#, "four hex digits"), (#""\uD800""#, "lone high surrogate"),
        (#""\uDC00""#, "lone low surrogate"), (#""\uD800\u0041""#, "not followed by a low"),
        (#""\uD800x""#, "lone high surrogate"), (#"{"a":1,"a":2}"#, "duplicate key \"a\""),
        ("\u{FEFF}1", "expected a value"), ("\u{0B}1", "expected a value"), ("\u{A0}1", "expected a value"),
        ("[1]\u{0}", "end of input after"),
    ]

    @Test(arguments: invalidDocuments)
    func invalidDocumentIsUsageError(_ text: String, _ expected: String) {
        #expect {
            _ = try JSON.parse(text)
        } throws: { error in
            guard let error = error as? CoreError else { return false }
            return error.code == .usage && error.message.hasPrefix("invalid JSON at byte ")
                && error.message.contains(expected)
        }
    }

    static let invalidUTF8: [[UInt8]] = [
        [0x22, 0xFF, 0x22], [0x22, 0xC0, 0x80, 0x22], [0x22, 0xE0, 0x80, 0x80, 0x22],
        [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xC3, 0x22],
        [0x22, 0xE4, 0xB8, 0x22], [0xC3, 0xA9],
    ]

    @Test(arguments: invalidUTF8)
    func malformedUTF8IsRejected(_ bytes: [UInt8]) {
        #expect(throws: CoreError.self) { try JSON.parse(bytes: bytes) }
    }

    @Test func errorOffsetPointsAtTheProblem() {
        #expect(throws: CoreError(.usage, "invalid JSON at byte 6: unexpected ']', expected a value")) {
            try JSON.parse("[1, 2,]")
        }
    }

    @Test func duplicateKeyMessageStaysOnOneLine() throws {
        let key = "a\nb" + String(repeating: "x", count: 500)
        let text = JSON.object(JSONObject(uniqueKeysWithValues: [(key, JSON.int(1))])).serialized()
        let doubled = "{" + text.dropFirst().dropLast() + "," + text.dropFirst().dropLast() + "}"
        do throws(CoreError) {
            _ = try JSON.parse(doubled)
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.message.contains(#"duplicate key "a\nb"#))
            #expect(!error.message.contains("\n"))
            #expect(error.message.utf8.count < 200)
        }
    }

    // MARK: Depth

    @Test func depthBombIsAnErrorNotACrash() {
        for bomb in [String(repeating: "[", count: 100_000), String(repeating: #"{"a":"#, count: 100_000)] {
            #expect(throws: CoreError.self) { try JSON.parse(bomb) }
        }
    }

    @Test func depthLimitIsExact() throws {
        let ok = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(try JSON.parse(ok).serialized() == ok)
        let deep = "[" + ok + "]"
        #expect(throws: CoreError(.usage, "invalid JSON at byte 32: nesting deeper than 32 levels")) {
            try JSON.parse(deep)
        }
        #expect(try JSON.parse(deep, maxDepth: 33).serialized() == deep)
        #expect(throws: CoreError.self) { try JSON.parse("[]", maxDepth: 0) }
        #expect(try JSON.parse("7", maxDepth: 0) == 7)
    }

    // MARK: Numbers keep their kind

    static let numbers: [(String, JSON)] = [
        ("0", .int(0)), ("-0", .int(0)), ("25", .int(25)), ("-7", .int(-7)),
        ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .double(9223372036854775808)), ("-9223372036854775809", .double(-9223372036854775808.0)),
        ("2.0", .double(2)), ("1e2", .double(100)), ("1.5", .double(1.5)), ("1e-400", .double(0)),
        ("-0.0", .double(-0.0)),
    ]

    @Test(arguments: numbers)
    func integersStayExact(_ text: String, _ expected: JSON) throws {
        let value = try JSON.parse(text)
        #expect(value == expected)
        #expect(String(describing: value) == value.serialized())
        #expect(try JSON.parse(value.serialized()) == value)
    }

    @Test func boolsAreNotNumbers() throws {
        let value = try JSON.parse(#"{"t":true,"one":1,"f":false,"zero":0,"half":0.5,"mins":25.0}"#)
        #expect(value["t"]?.bool == true && value["t"]?.int == nil)
        #expect(value["one"]?.int == 1 && value["one"]?.bool == nil)
        #expect(value["f"]?.bool == false && value["zero"]?.bool == nil)
        #expect(value["half"]?.int == nil && value["half"]?.double == 0.5)
        #expect(value["mins"]?.int == 25)
        #expect(value["missing"] == nil && value["t"]?["x"] == nil)
    }

    @Test(arguments: [(JSON.double(2), "2.0"), (.double(1.5), "1.5"), (.double(1e20), "1e+20"),
                      (.double(.nan), "null"), (.double(.infinity), "null"), (.double(-.infinity), "null"),
                      (.double(0.00001), "1e-05"), (.int(-3), "-3")])
    func numbersSerialize(_ value: JSON, _ expected: String) {
        #expect(value.serialized() == expected)
    }

    // MARK: Writer

    @Test func stringsEscapeOnlyWhatRFC8259Requires() {
        let value: JSON = .string("q\" b\\ s/ n\n r\r t\t \u{0} \u{1F} \u{7F} é 😀 \u{2028}")
        #expect(value.serialized() == "\"q\\\" b\\\\ s/ n\\n r\\r t\\t \\u0000 \\u001f \u{7F} é 😀 \u{2028}\"")
    }

    @Test func objectsKeepInsertionOrder() throws {
        let built: JSON = ["now": "t", "blocked": [], "activities": [["name": "bedtime", "active": true]]]
        #expect(built.serialized() == #"{"now":"t","blocked":[],"activities":[{"name":"bedtime","active":true}]}"#)
        let parsed = try JSON.parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(parsed.object?.keys == ["z", "a", "m"])
        #expect(parsed.serialized() == #"{"z":1,"a":2,"m":3}"#)
        #expect(parsed == (try JSON.parse(#"{"a":2,"m":3,"z":1}"#)), "RFC 8259 §4: unordered")
    }

    @Test func objectMutationKeepsPositions() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = "two"
        object["d"] = nil
        object["a"] = nil
        object["e"] = .null
        #expect(object.keys == ["b", "c", "e"])
        #expect(object.map(\.key) == ["b", "c", "e"])
        #expect(object.insertNew("b", 9) == false && object["b"] == "two")
        #expect(JSON.object(object).serialized() == #"{"b":"two","c":3,"e":null}"#)
    }

    @Test func prettyPrintedIndentsTwoSpaces() {
        let value: JSON = ["a": [1, 2], "b": [:], "c": [], "d": ["e": nil]]
        #expect(value.prettyPrinted() == """
            {
              "a": [
                1,
                2
              ],
              "b": {},
              "c": [],
              "d": {
                "e": null
              }
            }
            """)
    }

    // MARK: Fuzz: every input gives a value or a CoreError, and values round-trip

    @Test func randomBytesNeverCrash() {
        var rng = SplitMix64(seed: 0x6A50_0B10_C4D5)
        let alphabet = Array(#"[]{},:"\ 0123456789-+.eEtrufalsn\/bu"#.utf8)
        var accepted = 0
        for _ in 0..<20_000 {
            let length = Int(rng.next() % 24)
            let bytes: [UInt8] = (0..<length).map { _ in
                rng.next() % 4 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : alphabet[Int(rng.next() % UInt64(alphabet.count))]
            }
            if checkParses(bytes) { accepted += 1 }
        }
        #expect(accepted > 100, "the alphabet should sometimes reach the accepting paths")
    }

    @Test func mutatedDocumentsNeverCrash() {
        var rng = SplitMix64(seed: 42)
        let seeds = Self.validDocuments.map { Array($0.utf8) }
        let interesting = Array(#"[]{},:"\0-.e"#.utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xED, 0xFF]
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = seeds[Int(rng.next() % UInt64(seeds.count))]
            for _ in 0...(rng.next() % 3) {
                let position = bytes.isEmpty ? 0 : Int(rng.next() % UInt64(bytes.count))
                let byte = rng.next() % 2 == 0 ? interesting[Int(rng.next() % UInt64(interesting.count))]
                                               : UInt8(truncatingIfNeeded: rng.next())
                switch rng.next() % 4 {
                case 0 where !bytes.isEmpty: bytes[position] = byte
                case 1: bytes.insert(byte, at: position)
                case 2 where !bytes.isEmpty: bytes.remove(at: position)
                default: bytes.removeLast(bytes.count - position)
                }
            }
            if checkParses(bytes) { accepted += 1 }
        }
        #expect(accepted > 2_000 && accepted < 18_000, "mutations should both keep and break documents")
    }

    /// True when `bytes` parsed; either way the outcome must be well-behaved.
    @discardableResult
    private func checkParses(_ bytes: [UInt8]) -> Bool {
        do throws(CoreError) {
            let value = try JSON.parse(bytes: bytes)
            let compact = value.serialized()
            #expect(!compact.contains("\n"))
            #expect((try? JSON.parse(compact)) == value, "round trip of \(bytes)")
            return true
        } catch {
            #expect(error.code == .usage && error.message.hasPrefix("invalid JSON at byte "))
            #expect(!error.message.contains("\n") && !error.message.contains("\r"))
            return false
        }
    }
}

/// Deterministic PRNG (Steele, Lea & Flood 2014) so fuzz failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
