extension JSON {
    /// Parses one JSON text (RFC 8259), strictly: no comments, trailing commas, NaN/Infinity,
    /// leading zeros, lone surrogates or trailing garbage.
    ///
    /// The parser keeps its own stack instead of recursing, so input from an untrusted client
    /// cannot overflow the thread's stack; `maxDepth` (RFC 8259 §9 lets a parser limit
    /// nesting) bounds how many arrays/objects may be open at once. Keep it small: values
    /// thousands of levels deep are released and written recursively.
    ///
    /// Errors are `CoreError(.usage, "invalid JSON at byte N: ...")` with N the 0-based
    /// offset into the UTF-8 bytes. Messages never contain raw control characters, so they
    /// can go straight onto the line protocol (§8).
    public static func parse(_ text: String, maxDepth: Int = 32) throws(CoreError) -> JSON {
        try parse(bytes: Array(text.utf8), maxDepth: maxDepth)
    }

    /// Parses raw bytes, which must be UTF-8 (RFC 8259 §8.1); a byte-order mark is rejected.
    public static func parse(bytes: [UInt8], maxDepth: Int = 32) throws(CoreError) -> JSON {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        return try parser.parseDocument()
    }
}

private enum Byte {
    static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), slash = UInt8(ascii: "/")
    static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    static let comma = UInt8(ascii: ","), colon = UInt8(ascii: ":")
    static let minus = UInt8(ascii: "-"), plus = UInt8(ascii: "+"), dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0"), nine = UInt8(ascii: "9")
}

private struct JSONParser {
    /// An array or object still open; the innermost is last.
    private enum Frame {
        case array([JSON])
        case object(JSONObject, key: String, keyOffset: Int)
    }

    let bytes: [UInt8]
    let maxDepth: Int
    var offset = 0
    private var stack: [Frame] = []

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = max(0, maxDepth)
    }

    mutating func parseDocument() throws(CoreError) -> JSON {
        var value = try parseValue()
        while !stack.isEmpty {
            skipWhitespace()
            let separator = peek()
            switch stack.removeLast() {
            case .array(var elements):
                elements.append(value)
                if separator == Byte.comma {
                    offset += 1
                    stack.append(.array(elements))
                    value = try parseValue()
                } else if separator == Byte.closeBracket {
                    offset += 1
                    value = .array(elements)
                } else {
                    throw unexpected("',' or ']' after an array element")
                }
            case .object(var object, let key, let keyOffset):
                // RFC 8259 §4 only says names SHOULD be unique; we refuse duplicates, since
                // which one "wins" differs between parsers and so can smuggle a value past a check.
                guard object.insertNew(key, value) else {
                    throw error(at: keyOffset, "duplicate key \(JSONWriter.quoted(key, limit: 40)) in object")
                }
                if separator == Byte.comma {
                    offset += 1
                    let (nextKey, nextOffset) = try parseMemberName()
                    stack.append(.object(object, key: nextKey, keyOffset: nextOffset))
                    value = try parseValue()
                } else if separator == Byte.closeBrace {
                    offset += 1
                    value = .object(object)
                } else {
                    throw unexpected("',' or '}' after an object member")
                }
            }
        }
        skipWhitespace()
        guard offset == bytes.count else { throw unexpected("end of input after the JSON value") }
        return value
    }

    /// Parses a scalar, or opens containers until it reaches a first element that is a scalar
    /// or an empty container. The caller's loop closes containers.
    private mutating func parseValue() throws(CoreError) -> JSON {
        while true {
            skipWhitespace()
            guard let byte = peek() else { throw error(at: offset, "unexpected end of input, expected a value") }
            switch byte {
            case Byte.openBracket:
                try push()
                skipWhitespace()
                if peek() == Byte.closeBracket {
                    offset += 1
                    stack.removeLast()
                    return .array([])
                }
                stack[stack.count - 1] = .array([])
            case Byte.openBrace:
                try push()
                skipWhitespace()
                if peek() == Byte.closeBrace {
                    offset += 1
                    stack.removeLast()
                    return .object(JSONObject())
                }
                let (key, keyOffset) = try parseMemberName()
                stack[stack.count - 1] = .object(JSONObject(), key: key, keyOffset: keyOffset)
            case Byte.quote:
                return .string(try parseString())
            case Byte.minus, Byte.zero...Byte.nine:
                return try parseNumber()
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default:
                throw unexpected("a value")
            }
        }
    }

    private mutating func push() throws(CoreError) {
        guard stack.count < maxDepth else {
            throw error(at: offset, "nesting deeper than \(maxDepth) levels")
        }
        offset += 1
        stack.append(.array([]))  // placeholder, replaced once the container's kind is known
    }

    /// `"name" :` with the whitespace around it (RFC 8259 §4).
    private mutating func parseMemberName() throws(CoreError) -> (String, Int) {
        skipWhitespace()
        guard peek() == Byte.quote else { throw unexpected("a member name in double quotes") }
        let start = offset
        let key = try parseString()
        skipWhitespace()
        guard peek() == Byte.colon else { throw unexpected("':' after a member name") }
        offset += 1
        return (key, start)
    }

    private mutating func literal(_ word: String, _ value: JSON) throws(CoreError) -> JSON {
        let start = offset
        for expected in word.utf8 {
            guard peek() == expected else {
                throw error(at: start, "unknown literal, expected '\(word)'")
            }
            offset += 1
        }
        return value
    }

    // MARK: Numbers (RFC 8259 §6)

    private mutating func parseNumber() throws(CoreError) -> JSON {
        let start = offset
        let negative = peek() == Byte.minus
        if negative { offset += 1 }
        // int = zero / ( digit1-9 *DIGIT ): a leading zero stands alone.
        guard let first = peek(), isDigit(first) else { throw unexpected("a digit") }
        if first == Byte.zero, let next = peek(at: offset + 1), isDigit(next) {
            throw error(at: offset, "leading zeros are not allowed in numbers")
        }
        var magnitudeFits = true
        var integer: Int64 = 0
        while let byte = peek(), isDigit(byte) {
            if magnitudeFits {
                // Accumulate toward the sign so that Int64.min itself fits.
                let digit = Int64(byte - Byte.zero)
                let (shifted, o1) = integer.multipliedReportingOverflow(by: 10)
                let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit)
                                          : shifted.addingReportingOverflow(digit)
                if o1 || o2 { magnitudeFits = false } else { integer = next }
            }
            offset += 1
        }
        var isInteger = true
        if peek() == Byte.dot {
            isInteger = false
            offset += 1
            guard let byte = peek(), isDigit(byte) else { throw unexpected("a digit after '.'") }
            while let byte = peek(), isDigit(byte) { offset += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if peek() == Byte.plus || peek() == Byte.minus { offset += 1 }
            guard let byte = peek(), isDigit(byte) else { throw unexpected("a digit in the exponent") }
            while let byte = peek(), isDigit(byte) { offset += 1 }
        }
        if isInteger && magnitudeFits { return .int(integer) }
        // The grammar above has already been checked, so Double's parser only sees RFC syntax.
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw error(at: start, "number is too large")
        }
        return .double(value)
    }

    // MARK: Strings (RFC 8259 §7, UTF-8 per §8.1)

    private mutating func parseString() throws(CoreError) -> String {
        offset += 1  // opening quote
        var utf8: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error(at: offset, "unexpected end of input inside a string") }
            switch byte {
            case Byte.quote:
                offset += 1
                return String(decoding: utf8, as: UTF8.self)
            case Byte.backslash:
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw error(at: offset, "control character \(hexByte(byte)) must be escaped in a string")
            case 0x20..<0x80:
                utf8.append(byte)
                offset += 1
            default:
                let length = try validUTF8SequenceLength()
                utf8.append(contentsOf: bytes[offset..<offset + length])
                offset += length
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(CoreError) {
        let start = offset
        offset += 1
        guard let byte = peek() else { throw error(at: offset, "unexpected end of input inside a string") }
        offset += 1
        switch byte {
        case Byte.quote, Byte.backslash, Byte.slash: utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xDC00...0xDFFF).contains(scalar) {
                throw error(at: start, "lone low surrogate in \\u escape")
            }
            if (0xD800...0xDBFF).contains(scalar) {
                // §7: characters outside the BMP are a surrogate pair of two \u escapes.
                guard peek() == Byte.backslash, peek(at: offset + 1) == UInt8(ascii: "u") else {
                    throw error(at: start, "lone high surrogate in \\u escape")
                }
                offset += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error(at: start, "high surrogate not followed by a low surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            // Surrogates are resolved above, so every remaining value is a scalar.
            if let unicode = Unicode.Scalar(scalar) { utf8.append(contentsOf: unicode.utf8) }
        default:
            throw error(at: start, "invalid escape sequence in a string")
        }
    }

    private mutating func parseHex4() throws(CoreError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek() else { throw error(at: offset, "unexpected end of input in a \\u escape") }
            let digit: UInt8
            switch byte {
            case Byte.zero...Byte.nine: digit = byte - Byte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error(at: offset, "\\u must be followed by four hex digits")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    /// Length of the well-formed UTF-8 sequence at `offset` (RFC 3629 §4), rejecting
    /// overlong forms, encoded surrogates and code points above U+10FFFF.
    private func validUTF8SequenceLength() throws(CoreError) -> Int {
        let lead = bytes[offset]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw error(at: offset, "invalid UTF-8 byte \(hexByte(lead))")
        }
        for index in 1..<length {
            let range = index == 1 ? secondRange : 0x80...0xBF
            guard let byte = peek(at: offset + index), range.contains(byte) else {
                throw error(at: offset, "invalid UTF-8 sequence")
            }
        }
        return length
    }

    // MARK: Helpers

    private func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }
    private func peek(at index: Int) -> UInt8? { index < bytes.count ? bytes[index] : nil }
    private func isDigit(_ byte: UInt8) -> Bool { (Byte.zero...Byte.nine).contains(byte) }

    /// RFC 8259 §2: only space, tab, LF and CR are whitespace.
    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            offset += 1
        }
    }

    private func unexpected(_ expected: String) -> CoreError {
        guard let byte = peek() else { return error(at: offset, "unexpected end of input, expected \(expected)") }
        let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : hexByte(byte)
        return error(at: offset, "unexpected \(shown), expected \(expected)")
    }

    private func error(at offset: Int, _ message: String) -> CoreError {
        CoreError(.usage, "invalid JSON at byte \(offset): \(message)")
    }

    private func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0xF)])"
    }
}
