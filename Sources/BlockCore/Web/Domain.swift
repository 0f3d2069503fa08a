import FoundationEssentials

/// Host names as blockd writes them into /etc/hosts (E1).
///
/// Every domain a user, a selection file or the built-in catalog names goes through
/// `normalize` before it can reach the hosts file. The output alphabet is only `a-z 0-9 - .`,
/// so nothing anyone types (a newline, `#`, a space, a second address) can add, end or comment
/// out a line of that file.
public enum Domain {
    /// RFC 1035 §2.3.4 / RFC 1123 §2.1: 63 octets a label, 253 for the name without its final dot.
    public static let maxLabelLength = 63
    public static let maxLength = 253

    /// The ASCII, lowercase, hosts-file form of `text`, or an `.invalidDomain` error that says
    /// what is wrong and what to write instead.
    ///
    /// Non-ASCII labels are mapped roughly as IDNA does (UTS #46 / IDNA2003 nameprep): ideographic
    /// full stops become dots, then lowercase and NFKC (which also turns the fullwidth letters an
    /// IME produces into ASCII), then RFC 3492 Punycode with the `xn--` prefix. A label that still
    /// holds anything but letters, marks, digits and hyphens is refused rather than guessed at.
    /// Whether `text` is already in the form `normalize` returns: lower-case LDH labels of 1
    /// to 63 bytes, no leading or trailing hyphen, at least two labels, at most 253 bytes, not
    /// all digits in the last label (an IP address), not localhost. A fast path for the hosts
    /// enforcer, which re-validates every domain it writes (100,000 in a large selection).
    public static func isCanonical(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.count >= 3, bytes.count <= maxLength else { return false }
        var labels = 0, labelLength = 0, previous: UInt8 = 46, lastLabelAllDigits = true
        var window: UInt32 = 0, punycode = false  // the last four bytes; "xn--" seen
        for c in bytes {
            window = window << 8 | UInt32(c)
            if window == 0x786E_2D2D { punycode = true }
            if c == 46 {  // '.'
                guard labelLength > 0, previous != 45 else { return false }
                labels += 1
                labelLength = 0
                lastLabelAllDigits = true
            } else {
                let lower = c >= 97 && c <= 122, digit = c >= 48 && c <= 57
                guard lower || digit || (c == 45 && labelLength > 0) else { return false }
                labelLength += 1
                guard labelLength <= maxLabelLength else { return false }
                if !digit { lastLabelAllDigits = false }
            }
            previous = c
        }
        guard labelLength > 0, previous != 45, labels >= 1, !lastLabelAllDigits else { return false }
        // Punycode labels must be decoded to be checked, and *.localhost names this machine:
        // both take the full path. (Bytes, not Foundation's `contains`: that was a CFString
        // search per name, a fifth of applying a 100,000-domain block.)
        return !punycode && !bytes.reversed().starts(with: ".localhost".utf8.reversed()) && text != "localhost.localdomain"
    }

    public static func normalize(_ text: String) throws(CoreError) -> String {
        isCanonical(text) ? text : try normalizeFully(text)
    }

    /// `normalize` without the fast path.
    static func normalizeFully(_ text: String) throws(CoreError) -> String {
        let shown = quoted(text)
        guard !text.isEmpty else { throw refuse(shown, "it is empty") }

        var mapped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            // UTS #46 maps these label separators to '.'; Japanese input methods produce them.
            switch scalar.value {
            case 0x3002, 0xFF0E, 0xFF61: mapped.append(".")
            default: mapped.append(scalar)
            }
        }
        // NFKC can produce uppercase (fullwidth 'Ａ' → 'A'), hence lowercase on both sides.
        let folded = nfkc(String(mapped).lowercased()).lowercased()

        // Characters are checked after folding so that a fullwidth '＃' or '／' that NFKC turns
        // into ASCII is caught too.
        if folded.contains(":") && folded.unicodeScalars.allSatisfy({ $0 == ":" || $0 == "." || $0.properties.isASCIIHexDigit }) {
            throw refuse(shown, "it is an IPv6 address, and the hosts file blocks names, not addresses")
        }
        for scalar in folded.unicodeScalars {
            if let why = problem(with: scalar) { throw refuse(shown, why, hint: hint(for: scalar, in: text)) }
        }

        var name = folded
        if name.hasSuffix(".") { name.removeLast() }  // the root dot is implied in hosts files
        guard !name.isEmpty else { throw refuse(shown, "it has no labels, only a dot") }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !labels.contains(where: \.isEmpty) else {
            throw refuse(shown, "it has an empty label (a leading dot or two dots in a row)")
        }
        if name == "localhost" || name == "localhost.localdomain" || labels.last == "localhost" {
            throw refuse(shown, "it names this machine, and blocking it would break local services")
        }
        guard labels.count >= 2 else {
            throw refuse(shown, "it is a single label, not a full host name",
                         hint: "write the full host name, such as \(labels[0].count <= 40 ? labels[0] : "example").com")
        }
        let isNumeric = { (label: String) in label.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        if labels.allSatisfy(isNumeric) {
            throw refuse(shown, "it is an IP address, and the hosts file blocks names, not addresses")
        }
        if let last = labels.last, isNumeric(last) {
            throw refuse(shown, "its last label '\(last)' is all digits, so it is not a host name")
        }

        var ascii: [String] = []
        for label in labels { ascii.append(try encode(label, shown: shown)) }
        let result = ascii.joined(separator: ".")
        guard result.utf8.count <= maxLength else {
            throw refuse(shown, "it is \(result.utf8.count) characters long and a host name may have at most \(maxLength)")
        }
        return result
    }

    /// A cheap test for ad-hoc selections (§1): something with a dot and no whitespace is
    /// meant as a domain, so `normalize` decides and its error is the one to show.
    public static func looksLikeDomain(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 == "." || $0.value == 0x3002 || $0.value == 0xFF0E || $0.value == 0xFF61 }
            && !text.contains(where: \.isWhitespace)
    }

    /// One label in its ASCII form, checked against the LDH rule (RFC 1123 §2.1, RFC 5891 §4.2.3.1).
    private static func encode(_ label: String, shown: String) throws(CoreError) -> String {
        let display = quoted(label)
        if label.hasPrefix("-") { throw refuse(shown, "its label \(display) starts with a hyphen") }
        if label.hasSuffix("-") { throw refuse(shown, "its label \(display) ends with a hyphen") }
        var ascii = label
        if label.unicodeScalars.contains(where: { !$0.isASCII }) {
            if let first = label.unicodeScalars.first, isMark(first) {
                throw refuse(shown, "its label \(display) starts with a combining mark")
            }
            guard let encoded = Punycode.encode(label) else {
                throw refuse(shown, "its label \(display) is too long to convert to punycode")
            }
            ascii = "xn--" + encoded
        } else if label.hasPrefix("xn--") {
            // An ACE label given directly must decode, or it is not a name anyone can have.
            guard let decoded = Punycode.decode(String(label.dropFirst(4))), !decoded.isEmpty,
                  decoded.unicodeScalars.contains(where: { !$0.isASCII }) else {
                throw refuse(shown, "its label \(display) starts with 'xn--' but is not valid punycode")
            }
        }
        let length = ascii.utf8.count
        guard length <= maxLabelLength else {
            let how = ascii == label ? "is \(length) characters long" : "becomes \(length) characters in punycode"
            throw refuse(shown, "its label \(quoted(label, limit: 20)) \(how) and a label may have at most \(maxLabelLength)")
        }
        return ascii
    }

    /// Why `scalar` cannot appear in a host name, or nil if it may (after folding).
    private static func problem(with scalar: Unicode.Scalar) -> String? {
        switch scalar {
        case "\0": return "it contains a NUL character"
        case "\n", "\r", "\u{0B}", "\u{0C}", "\u{85}", "\u{2028}", "\u{2029}": return "it contains a line break"
        case " ": return "it contains a space"
        case "\t": return "it contains a tab"
        case "#": return "it contains '#', which starts a comment in the hosts file"
        case "*": return "it contains '*', and the hosts file has no wildcards"
        case "/", "\\", "?": return "it contains '\(scalar)', so it looks like a URL, not a host name"
        case ":": return "it contains ':' (a port, an IPv6 address or a URL scheme)"
        case "@": return "it contains '@', so it looks like an e-mail address, not a host name"
        case "_": return "it contains '_', which host names may not contain"
        case "a"..."z", "0"..."9", "-", ".": return nil
        default: break
        }
        let properties = scalar.properties
        if properties.generalCategory == .control { return "it contains a control character (\(code(scalar)))" }
        if properties.isWhitespace { return "it contains a space character (\(code(scalar)))" }
        if scalar.isASCII { return "it contains '\(scalar)', which host names may not contain" }
        switch properties.generalCategory {
        case .lowercaseLetter, .uppercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber:
            return nil
        case .format, .privateUse, .surrogate, .unassigned, .lineSeparator, .paragraphSeparator:
            return "it contains an invisible or unassigned character (\(code(scalar)))"
        default:
            return "it contains '\(scalar)' (\(code(scalar))), which is not a letter or digit"
        }
    }

    /// A URL gets a hint naming its host, which is almost always what was meant.
    private static func hint(for scalar: Unicode.Scalar, in text: String) -> String {
        if scalar == "*" { return "list each host name instead, such as example.com and www.example.com" }
        guard scalar == "/" || scalar == ":" || scalar == "?", let range = text.firstRange(of: "://") else {
            return defaultHint
        }
        let rest = text[range.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != ":" && $0 != "#" }
        guard let normalized = try? normalize(String(host)) else { return defaultHint }
        return "write only the host name, such as \(normalized)"
    }

    private static let defaultHint = "write a host name such as example.com"

    private static func refuse(_ shown: String, _ why: String, hint: String = defaultHint) -> CoreError {
        CoreError(.invalidDomain, "\(shown) is not a domain: \(why); \(hint)")
    }

    private static func isMark(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }

    private static func code(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// `text` in single quotes, safe to put on one line of the wire protocol or the journal:
    /// line breaks, controls and invisible characters are escaped, long input is cut.
    static func quoted(_ text: String, limit: Int = 80) -> String {
        var out = "'"
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { out += "…"; break }
            count += 1
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\": out += "\\\\"
            default:
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                default:
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "'"
    }
}
