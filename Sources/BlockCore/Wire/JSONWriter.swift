extension JSON {
    /// Compact, single-line JSON: the form for the line protocol (§8) and the state
    /// file. It never contains a raw LF or CR, because every control character in a string is
    /// escaped and no whitespace is added. Object keys come out in insertion order.
    public func serialized() -> String {
        var writer = JSONWriter(indent: nil)
        writer.write(self, level: 0)
        return writer.text
    }

    /// The same document indented by two spaces per level, for people (`--json` on a TTY,
    /// logs). Empty arrays and objects stay `[]` and `{}`. No trailing newline.
    public func prettyPrinted() -> String {
        var writer = JSONWriter(indent: "  ")
        writer.write(self, level: 0)
        return writer.text
    }
}

extension JSON: CustomStringConvertible {
    public var description: String { serialized() }
}

struct JSONWriter {
    let indent: String?
    var text = ""

    init(indent: String?) { self.indent = indent }

    mutating func write(_ value: JSON, level: Int) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .int(let number): text += String(number)
        case .double(let number): text += Self.format(number)
        case .string(let string): Self.appendQuoted(string, to: &text)
        case .array(let elements):
            writeContainer(open: "[", close: "]", count: elements.count, level: level) { writer, index in
                writer.write(elements[index], level: level + 1)
            }
        case .object(let object):
            let keys = object.keys
            writeContainer(open: "{", close: "}", count: keys.count, level: level) { writer, index in
                Self.appendQuoted(keys[index], to: &writer.text)
                writer.text += writer.indent == nil ? ":" : ": "
                // keys and values come from the same object, so the member exists.
                writer.write(object[keys[index]] ?? .null, level: level + 1)
            }
        }
    }

    private mutating func writeContainer(
        open: String, close: String, count: Int, level: Int,
        element: (inout JSONWriter, Int) -> Void
    ) {
        text += open
        guard count > 0 else { text += close; return }
        for index in 0..<count {
            if index > 0 { text += "," }
            newline(level: level + 1)
            element(&self, index)
        }
        newline(level: level)
        text += close
    }

    private mutating func newline(level: Int) {
        guard let indent else { return }
        text += "\n"
        for _ in 0..<level { text += indent }
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
    static func appendQuoted(_ string: String, to text: inout String) {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(string.utf8.count + 2)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        text += String(decoding: out, as: UTF8.self)
    }

    /// A quoted, escaped and shortened copy of untrusted text for error messages, which end
    /// up on one protocol line.
    static func quoted(_ string: String, limit: Int) -> String {
        // Count scalars, not Characters: one Character can hold thousands of combining marks.
        var text = ""
        let scalars = string.unicodeScalars
        var shown = String(String.UnicodeScalarView(scalars.prefix(limit)))
        if scalars.count > limit { shown += "…" }
        appendQuoted(shown, to: &text)
        return text
    }
}
