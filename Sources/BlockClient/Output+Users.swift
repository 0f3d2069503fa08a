import BlockCore

extension Output {
    /// " for kid, @kids" after what a per-user activity blocks; "" for the whole machine.
    func forWhom(_ users: [String]?) -> String {
        guard let users, !users.isEmpty else { return "" }
        return " for \(users.map(Output.clean).joined(separator: ", "))"
    }

    /// " (only for kid)" after a per-user schedule's or limit's selections.
    func onlyFor(_ users: [String]?) -> String {
        guard let users, !users.isEmpty else { return "" }
        return " (only for \(users.map(Output.clean).joined(separator: ", ")))"
    }
}
