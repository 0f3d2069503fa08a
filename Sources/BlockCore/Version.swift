public enum BlockdVersion {
    public static let version = "0.1.0"
    /// The line protocol's version, answered by `hello` (§8).
    public static let protocolVersion = 1
}
