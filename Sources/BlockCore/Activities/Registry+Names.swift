import FoundationEssentials

/// T10, §6: the names of blocks: the default name of a block started without `--name`, and
/// which names are valid at all.
extension Registry {
    /// Default names are kept short enough to read in a status table and to type.
    public static let defaultNameLimit = 64

    /// The name of a block started without `--name`: its selections joined by `+`
    /// (`instagram+reddit`, `Names.blockName`). A longer list keeps its first characters and ends in `-` and a
    /// hash of the whole list (`a.example.com+b.exam-5f0c2a1e`), so that the name stays
    /// within `defaultNameLimit` and the same selections always give the same name (T10).
    public static func defaultBlockName(for selections: [String]) -> String {
        let joined = Names.blockName(for: selections)
        guard joined.utf8.count > defaultNameLimit else { return joined }
        let suffix = "-" + stableHash(joined)
        // Names are ASCII (Names.validate), so cutting bytes cuts characters.
        var prefix = String(decoding: joined.utf8.prefix(defaultNameLimit - suffix.utf8.count), as: UTF8.self)
        while let last = prefix.last, "+.-_".contains(last) { prefix.removeLast() }
        return prefix + suffix
    }

    /// Eight hex digits of FNV-1a (64-bit, folded): the same on every run and machine, unlike
    /// Swift's seeded `Hasher`, because the name is persisted and compared across restarts.
    static func stableHash(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            h ^= UInt64(byte)
            h &*= 0x0000_0100_0000_01b3
        }
        let folded = UInt32(truncatingIfNeeded: h ^ (h >> 32))
        let hex = String(folded, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func unique(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}

/// Names of activities and selections: they appear in status tables, journal fields and file
/// names, so they are kept to a plain, line-safe alphabet.
public enum Names {
    /// The default name of a block: its selections joined with `+`, with any character a name
    /// may not hold (the `/` of a URL prefix, E8) turned into `_`.
    public static func blockName(for selections: [String]) -> String {
        let joined = selections.joined(separator: "+")
        return String(decoding: joined.utf8.map { isNameByte($0) ? $0 : UInt8(ascii: "_") }, as: UTF8.self)
    }

    static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c == 45 || c == 95 || c == 46 || c == 43
    }

    public static func validate(_ name: String, what: String) throws(CoreError) {
        let ok = !name.isEmpty && name.utf8.count <= 255 && name.utf8.allSatisfy(isNameByte) && name.first != "-" && name.first != "."
        guard ok else {
            throw CoreError(.invalidName, "'\(name)' is not a valid \(what): use 1 to 255 letters, digits, '-', '_', '.' or '+', not starting with '-' or '.'")
        }
    }
}
