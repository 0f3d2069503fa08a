/// URL prefixes that a selection blocks (E8): `youtube.com/shorts` blocks every URL of that
/// host whose path starts with `/shorts`. The hosts file cannot express paths, so these go
/// only into the browsers' managed policies (E7).
///
/// Every prefix a user, a selection file or a `start` argument names goes through `normalize`
/// before it can reach a policy file. The host part is a `Domain.normalize` name; the path part
/// keeps RFC 3986 §3.3 path characters and percent-encodes everything else (UTF-8, upper-case
/// hex, §2.1), so the result is printable ASCII with no quote, backslash, space or control
/// character: nothing can end a JSON string or add syntax to a `URLBlocklist` filter.
public enum URLPrefix {
    /// Chromium ignores `URLBlocklist` filters past a few thousand characters; a prefix this long
    /// is a mistake, not a rule.
    public static let maxLength = 1024

    /// Whether a `start` argument names a URL prefix rather than a whole site: a domain-like
    /// word followed by a `/` and more.
    public static func looksLikePrefix(_ text: String) -> Bool {
        let rest = strippingScheme(text)
        guard let slash = rest.firstIndex(of: "/") else { return false }
        return Domain.looksLikeDomain(String(rest[..<slash])) && rest.index(after: slash) < rest.endIndex
    }

    /// The canonical form `host/path` (no scheme, no trailing slash kept beyond the one given),
    /// or an `.invalidDomain` error that says what is wrong and what to write instead.
    public static func normalize(_ text: String) throws(CoreError) -> String {
        let rest = strippingScheme(text)
        let shown = Domain.quoted(text, limit: 80)
        guard let slash = rest.firstIndex(of: "/") else {
            throw refuse(shown, "it has no path; write the whole site as its domain (example.com) under Domains=, or add a path such as example.com/shorts")
        }
        let host = try Domain.normalize(String(rest[..<slash]))
        let path = try encodePath(rest[slash...], shown: shown)
        guard path != "/" else {
            throw refuse(shown, "its path is only '/', which is the whole site; block the domain \(host) instead")
        }
        let result = host + path
        guard result.utf8.count <= maxLength else {
            throw refuse(shown, "it is \(result.utf8.count) characters long once encoded and a prefix may have at most \(maxLength)")
        }
        return result
    }

    /// The host part of a normalized prefix.
    public static func host(of prefix: String) -> String {
        String(prefix.prefix { $0 != "/" })
    }

    static func strippingScheme(_ text: String) -> Substring {
        for scheme in ["https://", "http://"] where text.lowercased().hasPrefix(scheme) {
            return text.dropFirst(scheme.count)
        }
        return Substring(text)
    }

    /// RFC 3986 §3.3 `pchar`, `/` and the `?` that starts a query (§3.4) pass through
    /// (unreserved, the sub-delims other than `'`, `:` and `@`), a `%` already followed by two hex digits is kept (upper-cased), any other
    /// byte is percent-encoded. Whitespace, controls, quotes and backslashes are refused: they
    /// are never part of a URL someone means, and refusing says so instead of guessing.
    static func encodePath(_ path: Substring, shown: String) throws(CoreError) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        let bytes = Array(path.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x21 || b == 0x7F || b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") || b == UInt8(ascii: "\\") {
                let what = b == 0x20 ? "a space" : b < 0x20 || b == 0x7F ? "a control character" : "'\(Character(Unicode.Scalar(b)))'"
                throw refuse(shown, "its path contains \(what); percent-encode it (a space is %20)")
            }
            if b == UInt8(ascii: "%"), i + 2 < bytes.count, isHex(bytes[i + 1]), isHex(bytes[i + 2]) {
                out += [b, upper(bytes[i + 1]), upper(bytes[i + 2])]
                i += 3
                continue
            }
            if isPathByte(b) {
                out.append(b)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0x0F)]]
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isPathByte(_ b: UInt8) -> Bool {
        if PercentEncoding.isUnreserved(b) { return true }
        return "/!$&()*+,;=:@?".utf8.contains(b)
    }

    static func isHex(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(b)
    }

    static func upper(_ b: UInt8) -> UInt8 { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b) ? b - 32 : b }

    static func refuse(_ shown: String, _ why: String) -> CoreError {
        CoreError(.invalidDomain, "\(shown) is not a URL prefix: \(why)")
    }
}
