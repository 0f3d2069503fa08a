extension StringProtocol {
    /// The text without leading and trailing white space (spaces, tabs, line ends, and the
    /// Unicode spaces). Foundation's `trimmingCharacters(in:)` is not in FoundationEssentials.
    public func trimmed() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
