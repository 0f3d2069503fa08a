import Testing
@testable import BlockCore

/// The error `Domain.normalize` throws for `input`, or nil if it accepts it.
private func refusal(_ input: String) -> CoreError? {
    do {
        _ = try Domain.normalize(input)
        return nil
    } catch {
        return error
    }
}

private let label63 = String(repeating: "a", count: 63)
/// 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 octets: the longest name allowed.
private let name253 = [label63, label63, label63, String(repeating: "b", count: 61)].joined(separator: ".")

@Suite struct DomainTests {
    @Test("E1: nothing that could inject a hosts line is accepted", arguments: [
        "a.com\n1.2.3.4 evil.com", "a.com\r\nevil.com", "a.com#x", "evil.com ", " evil.com", "a b.com",
        "a.com\tb", "\u{0}", "a.com\u{0}", "a.com\u{2028}evil.com", "a\u{3000}b.com", "a\u{200B}b.com",
        "a\u{202E}b.com", "ａ＃b.com", "ａ／b.com",
        String(repeating: "a", count: 64) + ".com", name253 + "c", name253 + ".c",
        "1.2.3.4", "127.0.0.1", "0.0.0.0", "10.0.0.1.", "::1", "fe80::1", "[::1]", "example.com:443",
        "-a.com", "a-.com", "a.-com", "*.a.com", "a.*", "a..com", ".a.com", "", ".", "..",
        "localhost", "localhost.", "localhost.localdomain", "foo.localhost", "com", "a.123",
        "http://example.com", "example.com/path", "user@example.com", "under_score.com", "a'b.com",
        "a\"b.com", "a;b.com", "a,b.com", "a=b.com", "a\\b.com", "😀.com", "a♥b.com", "\u{301}a.com",
        "xn--.com", "xn--a-.com", "xn--99999999.com", String(repeating: "ä", count: 60) + ".de",
    ])
    func injectionRefused(_ input: String) throws {
        let error = try #require(refusal(input), "accepted \(input.debugDescription)")
        #expect(error.code == .invalidDomain)
        // The message goes onto one line of the wire protocol and the journal.
        #expect(!error.message.contains(where: { $0.isNewline }))
        #expect(!error.message.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(error.message.contains("is not a domain: "))
        #expect(error.message.contains("; "), "says what to write instead: \(error.message)")
    }

    @Test("E1: valid names come out as lowercase ASCII hosts-file names", arguments: [
        ("example.com", "example.com"),
        ("Example.COM", "example.com"),
        ("www.example.com.", "www.example.com"),
        ("a-b.co.uk", "a-b.co.uk"),
        ("1password.com", "1password.com"),
        ("xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("XN--BCHER-KVA.DE", "xn--bcher-kva.de"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("BÜCHER.de", "xn--bcher-kva.de"),
        ("ＢÜCHER．de", "xn--bcher-kva.de"),
        ("bücher。de", "xn--bcher-kva.de"),
        ("münchen.de", "xn--mnchen-3ya.de"),
        ("例え.テスト", "xn--r8jz45g.xn--zckzah"),
        ("インスタ.jp", "xn--eckzbs0s.jp"),
        ("ÖBB.at", "xn--bb-eka.at"),
        ("cafe\u{301}.fr", "xn--caf-dma.fr"),  // NFC: e + combining acute is é
        ("faß.de", "xn--fa-hia.de"),  // IDNA2008 keeps ß (IDNA2003 mapped it to ss)
        ("пример.рф", "xn--e1afmkfd.xn--p1ai"),
        (label63 + ".com", label63 + ".com"),
        (name253, name253),
        (name253 + ".", name253),
    ])
    func normalizes(_ input: String, _ expected: String) throws {
        let output = try Domain.normalize(input)
        #expect(output == expected)
        #expect(output.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E })
        #expect(try Domain.normalize(output) == output, "normalizing is idempotent")
    }

    @Test("E1: each refusal says what is wrong and what to write instead", arguments: [
        ("a b.com", "'a b.com' is not a domain: it contains a space; write a host name such as example.com"),
        ("a.com\n1.2.3.4 evil.com", "'a.com\\n1.2.3.4 evil.com' is not a domain: it contains a line break"),
        ("a.com#x", "which starts a comment in the hosts file"),
        ("https://Example.com/page", "write only the host name, such as example.com"),
        ("*.a.com", "the hosts file has no wildcards; list each host name instead"),
        ("1.2.3.4", "it is an IP address"),
        ("::1", "it is an IPv6 address"),
        ("localhost", "it names this machine"),
        ("instagram", "write the full host name, such as instagram.com"),
        ("a..com", "empty label"),
        ("-a.com", "'-a' starts with a hyphen"),
        ("a-.com", "'a-' ends with a hyphen"),
        ("😀.com", "U+1F600"),
        ("a\u{200B}b.com", "'a\\u{200b}b.com' is not a domain: it contains an invisible"),
        (String(repeating: "a", count: 64) + ".com", "64 characters long and a label may have at most 63"),
        (name253 + "c", "254 characters long and a host name may have at most 253"),
        (String(repeating: "ä", count: 60) + ".de", "becomes 66 characters in punycode"),
        ("", "'' is not a domain: it is empty"),
    ])
    func refusalMessages(_ input: String, _ fragment: String) throws {
        let error = try #require(refusal(input))
        #expect(error.message.contains(fragment), "\(error.message)")
    }

    @Test("§1: an argument with a dot and no whitespace is meant as a domain", arguments: [
        ("example.com", true), ("a..com", true), ("例え。テスト", true), ("1.2.3.4", true),
        ("instagram", false), ("a b.com", false), ("a.com\nb", false), ("", false), ("x", false),
    ])
    func looksLikeDomain(_ input: String, _ expected: Bool) {
        #expect(Domain.looksLikeDomain(input) == expected)
    }

    /// RFC 3492 §7.1 sample strings (A, B, I, J, L, M, S) and well-known labels; the ASCII
    /// forms were computed independently with Python's `punycode` codec.
    @Test("RFC 3492: encode and decode the sample strings", arguments: [
        ("\u{644}\u{64A}\u{647}\u{645}\u{627}\u{628}\u{62A}\u{643}\u{644}\u{645}\u{648}\u{634}\u{639}\u{631}\u{628}\u{64A}\u{61F}",
         "egbpdaj6bu4bxfgehfvwxn"),
        ("\u{4ED6}\u{4EEC}\u{4E3A}\u{4EC0}\u{4E48}\u{4E0D}\u{8BF4}\u{4E2D}\u{6587}", "ihqwcrb4cv8a8dqg056pqjye"),
        ("porquénopuedensimplementehablarenEspañol", "porqunopuedensimplementehablarenEspaol-fmd56a"),
        ("tạisaohọkhôngthểchỉnóitiếngViệt", "tisaohkhngthchnitingVit-kjcr8268qyxafd2f1b9g"),
        ("3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"),
        ("安室奈美恵-with-SUPER-MONKEYS", "-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n"),
        ("-> $1.00 <-", "-> $1.00 <--"),
        ("bücher", "bcher-kva"),
        ("münchen", "mnchen-3ya"),
        ("例え", "r8jz45g"),
        ("インスタ", "eckzbs0s"),
        ("ドメイン名例", "eckwd4c7cu47r2wf"),
        ("日本語", "wgv71a119e"),
        ("παράδειγμα", "hxajbheg2az3al"),
        ("правительство", "80aealotwbjpid2k"),
        ("ñandú", "and-6ma2c"),
        ("ü", "tda"),
    ])
    func punycodeSamples(_ unicode: String, _ ascii: String) {
        #expect(Punycode.encode(unicode) == ascii)
        #expect(Punycode.decode(ascii) == unicode)
    }

    @Test("RFC 3492 §6.2: invalid Punycode does not decode", arguments: [
        "a-!", "abc-99999999999999", "zzzzzzzzzzzzzzzzzzzzzzzz", "ü", "bcher-kv$",
    ])
    func punycodeRejects(_ ascii: String) {
        #expect(Punycode.decode(ascii) == nil)
    }
}

@Suite("E1: the canonical fast path agrees with normalize")
struct DomainFastPathTests {
    @Test("isCanonical accepts only what normalize would return unchanged", arguments: [
        "example.com", "www.instagram.com", "a-b.example", "xn--bcher-kva.de", "1.example", "d99.example.com",
        "Example.com", "a..b", "-a.com", "a-.com", "example", "1.2.3.4", "localhost", "localhost.localdomain",
        "a.b-", "a_b.com", "ex ample.com", "bücher.de", String(repeating: "a", count: 64) + ".com", "com.", ".com",
        "a.123", "a.1b", "foo.localhost", "xn--99999999.com", "xn--bcher-kva.de",
    ])
    func agrees(text: String) {
        if Domain.isCanonical(text) {
            // The fast path may only accept what the full path accepts unchanged.
            #expect((try? Domain.normalizeFully(text)) == text, "\(text) is canonical, so the full path must return it unchanged")
        }
        if let normalized = try? Domain.normalize(text) { #expect((try? Domain.normalize(normalized)) == normalized) }
    }

    @Test("the fast path leaves punycode and *.localhost to the full path, and takes plain names")
    func fastPathChoices() {
        for text in ["xn--bcher-kva.de", "a.xn--p1ai", "axn--b.example", "foo.localhost", "a.b.localhost"] {
            #expect(!Domain.isCanonical(text), "\(text) must take the full path")
        }
        for text in ["example.com", "d99.example.com", "localhostx.com", "xn-a.example", "localhost.example"] {
            #expect(Domain.isCanonical(text), "\(text) is canonical")
        }
    }
}

