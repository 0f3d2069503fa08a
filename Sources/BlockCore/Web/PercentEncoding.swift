/// Percent-encoding for values put into URLs (S7).
///
/// Only the RFC 3986 §2.3 unreserved set passes through: ASCII letters, digits, `-._~`.
/// Foundation's `addingPercentEncoding` is not used: its sets are built from Unicode
/// categories, so e.g. `.alphanumerics` lets `インスタ` through unencoded (seed 004 lesson 7),
/// and the URL-component sets keep `&`, `=`, `/`, `?` that would split a query value.
public enum PercentEncoding {
    public static func encode(_ s: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for byte in s.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                // Upper-case hex: RFC 3986 §2.1 says producers should use it.
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 §2.3: ALPHA / DIGIT / "-" / "." / "_" / "~", ASCII only.
    static func isUnreserved(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Checks an `OpenURL=` template at load time with the same rules as texts (S6): an
    /// unknown placeholder, an unclosed `{` or a stray `}` is a config error.
    public static func validate(urlTemplate: String) throws(CoreError) {
        _ = try parse(urlTemplate: urlTemplate)
    }

    public static func parse(urlTemplate: String) throws(CoreError) -> Template {
        do {
            return try Template(urlTemplate)
        } catch {
            throw CoreError(.invalidConfig, "OpenURL: \(error.message)")
        }
    }

    /// The URL with each placeholder replaced by its percent-encoded value (S7). The
    /// template's own text is the user's URL and is kept as written.
    ///
    /// A missing value becomes the empty string, not the S6 prose fallback: "this app" in a
    /// query would look like a real name to whatever receives it.
    public static func expand(urlTemplate: Template, values: TemplateValues) -> String {
        urlTemplate.render { p in values.given(p).map(encode) ?? "" }
    }

    /// As above from the raw `OpenURL=` text. A template that does not parse should have been
    /// rejected at load; if one gets here anyway its braces are encoded (`%7B`, `%7D`) so no
    /// raw placeholder reaches the opener.
    public static func expand(urlTemplate: String, values: TemplateValues) -> String {
        if let t = try? Template(urlTemplate) {
            return expand(urlTemplate: t, values: values)
        }
        return urlTemplate.replacing("{", with: "%7B").replacing("}", with: "%7D")
    }
}
