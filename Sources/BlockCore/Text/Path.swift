/// File path arithmetic on strings, as NSString's path methods did (FoundationEssentials has
/// none): `/a/b/c` → parent `/a/b`, last component `c`. Trailing slashes are ignored.
public enum Path {
    /// The directory part: `/a/b` → `/a`, `/a` → `/`, `a` → ``.
    public static func parent(_ path: String) -> String {
        let trimmed = stripped(path)
        if trimmed.isEmpty { return path.hasPrefix("/") ? "/" : "" }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let head = trimmed[..<slash]
        let parent = stripped(String(head))
        return parent.isEmpty ? "/" : parent
    }

    /// The last component: `/a/b` → `b`, `/` → `/`.
    public static func lastComponent(_ path: String) -> String {
        let trimmed = stripped(path)
        if trimmed.isEmpty { return path.hasPrefix("/") ? "/" : "" }
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    private static func stripped(_ path: String) -> String {
        var s = Substring(path)
        while s.count > 1, s.hasSuffix("/") { s = s.dropLast() }
        return s == "/" ? "" : String(s)
    }
}
