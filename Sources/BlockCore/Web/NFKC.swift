extension Domain {
    /// Scalar → its compatibility decomposition, from the generated table.
    private static let compatibility: [UInt32: [Unicode.Scalar]] = {
        var table: [UInt32: [Unicode.Scalar]] = [:]
        table.reserveCapacity(4096)
        for entry in compatibilityTable.split(whereSeparator: { $0 == ";" || $0 == "\n" }) {
            let parts = entry.split(separator: "=")
            guard parts.count == 2, let key = UInt32(parts[0], radix: 16) else { continue }
            table[key] = parts[1].split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
        }
        return table
    }()

    /// Unicode Normalization Form KC: the compatibility decomposition of each scalar (the
    /// generated table), then the standard library's canonical composition (NFC). Equal to
    /// Foundation's `precomposedStringWithCompatibilityMapping`, which needs ICU; the binaries
    /// link FoundationEssentials only. ASCII is its own NFKC.
    static func nfkc(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        var decomposed = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if let mapped = compatibility[scalar.value] {
                decomposed.append(contentsOf: mapped)
            } else {
                decomposed.append(scalar)
            }
        }
        return String(decoding: String(decomposed)._nfcCodeUnits, as: UTF8.self)
    }
}
