extension JSON {
    /// Compact, single-line JSON: the form for the line protocol (§8) and the state
    /// file. It never contains a raw LF or CR, because every control character in a string is
    /// escaped and no whitespace is added. Object keys come out in insertion order.
    public func serialized() -> String {
        var writer = JSONWriter(indent: nil)
        writer.write(self, level: 0)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The same text as `serialized()`, appended to `bytes` as UTF-8: for answers assembled
    /// from parts rendered once (`status` from a snapshot) without a round trip through `String`.
    public func serialize(into bytes: inout [UInt8]) {
        var writer = JSONWriter(indent: nil)
        swap(&writer.bytes, &bytes)
        writer.write(self, level: 0)
        swap(&writer.bytes, &bytes)
    }

    /// The same document indented by two spaces per level, for people (`--json` on a TTY,
    /// logs). Empty arrays and objects stay `[]` and `{}`. No trailing newline.
    public func prettyPrinted() -> String {
        var writer = JSONWriter(indent: "  ")
        writer.write(self, level: 0)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `"key"` as `serialized()` writes an object's key (quoted and escaped), appended to `bytes`.
    public static func serialize(key: String, into bytes: inout [UInt8]) {
        JSONWriter.appendQuoted(key, to: &bytes)
    }
}

extension JSON: CustomStringConvertible {
    public var description: String { serialized() }
}

/// Writes UTF-8 bytes, not a `String`: appending to a byte array is a copy, where appending
/// to a `String` checks and grows its storage for every piece (most of `status`'s cost before).
struct JSONWriter {
    let indent: [UInt8]?
    var bytes: [UInt8] = []

    init(indent: String?) { self.indent = indent.map { Array($0.utf8) } }

    mutating func write(_ value: JSON, level: Int) {
        switch value {
        case .null: bytes += "null".utf8
        case .bool(let flag): bytes += (flag ? "true" : "false").utf8
        case .int(let number): bytes += String(number).utf8
        case .double(let number): bytes += Self.format(number).utf8
        case .string(let string): Self.appendQuoted(string, to: &bytes)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, level: level) { writer, index in
                writer.write(elements[index], level: level + 1)
            }
        case .object(let object):
            let keys = object.keys
            writeContainer(open: "{", close: "}", count: keys.count, level: level) { writer, index in
                Self.appendQuoted(keys[index], to: &writer.bytes)
                writer.bytes.append(UInt8(ascii: ":"))
                if writer.indent != nil { writer.bytes.append(UInt8(ascii: " ")) }
                // keys and values come from the same object, so the member exists.
                writer.write(object[keys[index]] ?? .null, level: level + 1)
            }
        }
    }

    private mutating func writeContainer(
        open: Unicode.Scalar, close: Unicode.Scalar, count: Int, level: Int,
        element: (inout JSONWriter, Int) -> Void
    ) {
        bytes.append(UInt8(ascii: open))
        guard count > 0 else { bytes.append(UInt8(ascii: close)); return }
        for index in 0..<count {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            newline(level: level + 1)
            element(&self, index)
        }
        newline(level: level)
        bytes.append(UInt8(ascii: close))
    }

    private mutating func newline(level: Int) {
        guard let indent else { return }
        bytes.append(10)
        for _ in 0..<level { bytes += indent }
    }

    /// RFC 8259 §6 has no NaN or Infinity, so those become `null`. Finite values use Swift's
    /// shortest round-tripping form (`1.5`, `2.0`, `1e+20`, `1e-05`), all valid §6 syntax; the
    /// `.0` keeps an integral double from reading back as `.int`.
    static func format(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        let text = number.description
        if text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            return text
        }
        return text + ".0"
    }

    /// RFC 8259 §7: `"` and `\` and the controls below U+0020 must be escaped; everything else,
    /// including `/` and non-ASCII, is written as UTF-8 unchanged.
    static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            // Runs with nothing to escape (nearly every string) are copied whole.
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                out += UnsafeBufferPointer(rebasing: utf8[start..<index])
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
                case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                }
            }
            out += UnsafeBufferPointer(rebasing: utf8[start...])
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A quoted, escaped and shortened copy of untrusted text for error messages, which end
    /// up on one protocol line.
    static func quoted(_ string: String, limit: Int) -> String {
        // Count scalars, not Characters: one Character can hold thousands of combining marks.
        var bytes: [UInt8] = []
        let scalars = string.unicodeScalars
        var shown = String(String.UnicodeScalarView(scalars.prefix(limit)))
        if scalars.count > limit { shown += "…" }
        appendQuoted(shown, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
