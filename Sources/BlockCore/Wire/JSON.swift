/// A JSON value (RFC 8259) with integers kept apart from other numbers.
///
/// Our own type rather than Foundation's because the daemon parses untrusted socket input:
/// `JSONSerialization` on Linux hands back `NSNumber`, where `true` and `1` are hard to tell
/// apart, and it does not keep object key order, which the `--json` shapes document (§6).
///
/// Numbers: a literal with no fraction and no exponent that fits `Int64` is `.int`; every
/// other number is `.double` (RFC 8259 §6 leaves range and precision to implementations).
/// The writer keeps that split stable: an integral double is written as `2.0`, never `2`,
/// so parse → serialize → parse gives back the same case.
///
/// Equality is structural; objects compare as unordered collections (RFC 8259 §4) even though
/// they remember insertion order for output. `.double(.nan)` is not equal to itself and is
/// written as `null`.
public enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

// MARK: - Convenience accessors

extension JSON {
    /// The member named `key`, or nil when this is not an object or has no such member.
    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index`, or nil when this is not an array or the index is out of range.
    public subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Only `true`/`false`; a number is never read as a bool (the reason this type exists).
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// An `.int`, or a `.double` that is integral and fits exactly (`25.0`, `1e3`); `1.5` is nil.
    public var int: Int? {
        switch self {
        case .int(let value): return Int(exactly: value)
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// Any number as a `Double` (an `.int` beyond 2^53 rounds to the nearest double).
    public var double: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    public var array: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var object: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }
}

// MARK: - Literals, so that tests and reply builders read like the documented shapes

extension JSON: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension JSON: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSON: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSON: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSON: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSON: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

extension JSON: ExpressibleByDictionaryLiteral {
    /// Keys keep the order written; a repeated key traps, as it does for `Dictionary` literals.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(uniqueKeysWithValues: elements))
    }
}

// MARK: - Object

/// A JSON object that remembers the order its keys were first inserted, so that output has a
/// stable, documented key order ("now" first in `status --json`, §6).
public struct JSONObject: Hashable, Sendable, Sequence {
    /// Keys in insertion order.
    public private(set) var keys: [String] = []
    private var storage: [String: JSON] = [:]

    public init() {}

    /// Traps on a repeated key: for literals and builders, where a repeat is a programming
    /// error. The parser checks duplicates itself and reports them as a `CoreError`.
    public init(uniqueKeysWithValues pairs: some Sequence<(String, JSON)>) {
        for (key, value) in pairs {
            precondition(storage[key] == nil, "duplicate key \"\(key)\" in JSON object literal")
            keys.append(key)
            storage[key] = value
        }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// Reading gives the member or nil. Assigning a new key appends it; assigning an existing
    /// key keeps its position; assigning nil removes the key.
    public subscript(key: String) -> JSON? {
        get { storage[key] }
        set {
            if let newValue {
                if storage.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if storage.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }

    /// Adds `key` at the end unless it is already present; returns false (and changes
    /// nothing) for a duplicate.
    @discardableResult
    public mutating func insertNew(_ key: String, _ value: JSON) -> Bool {
        guard storage[key] == nil else { return false }
        storage[key] = value
        keys.append(key)
        return true
    }

    public func makeIterator() -> AnyIterator<(key: String, value: JSON)> {
        var index = 0
        let keys = keys
        let storage = storage
        return AnyIterator {
            guard index < keys.count else { return nil }
            defer { index += 1 }
            let key = keys[index]
            return (key, storage[key]!)
        }
    }

    // RFC 8259 §4: an object is an unordered collection, so order does not affect equality.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool { lhs.storage == rhs.storage }
    public func hash(into hasher: inout Hasher) { hasher.combine(storage) }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(uniqueKeysWithValues: elements)
    }
}
