import Foundation
import Testing
@testable import BlockCore

/// Domain names are folded with NFKC (UTS #46) without ICU: the generated compatibility table
/// plus the standard library's NFC. Foundation (with ICU) is the reference, for every scalar.
@Suite("NFKC without ICU")
struct NFKCTests {
    @Test("every Unicode scalar folds as Foundation's NFKC does (else run: swift scripts/gen-nfkc.swift)")
    func everyScalar() {
        var differ: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let s = String(Character(scalar))
            let ours = Domain.nfkc(s), theirs = s.precomposedStringWithCompatibilityMapping
            if ours.unicodeScalars.elementsEqual(theirs.unicodeScalars) { continue }
            differ.append(String(value, radix: 16, uppercase: true))
        }
        #expect(differ.isEmpty, "\(differ.count) scalars fold differently, first U+\(differ.prefix(10).joined(separator: ", U+"))")
    }

    /// Expected values from Python's unicodedata.normalize("NFKC", …). Foundation's own NFKC
    /// leaves halfwidth kana and their sound marks uncomposed (カ U+3099, not ガ); ours composes,
    /// as UAX #15 says, so a name typed with halfwidth kana matches the same name typed whole.
    @Test("strings: composition across scalars, fullwidth, halfwidth kana, ligatures", arguments: [
        ("ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"), ("ﬁle.example", "file.example"), ("e\u{301}cole.fr", "\u{E9}cole.fr"),
        ("\u{C5}\u{30A}", "\u{C5}\u{30A}"), ("ｶﾞｲﾄﾞ.jp", "\u{30AC}\u{30A4}\u{30C9}.jp"), ("①②.example", "12.example"),
        ("㍿.jp", "株式会社.jp"), ("x\u{1E0A}\u{323}y", "x\u{1E0C}\u{307}y"),
    ])
    func strings(text: String, expected: String) {
        #expect(Domain.nfkc(text).unicodeScalars.elementsEqual(expected.unicodeScalars),
                "\(Domain.nfkc(text).unicodeScalars.map { String($0.value, radix: 16) })")
    }
}
