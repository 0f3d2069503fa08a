import BlockCore

/// Per-user blocks on blockc's command line: `--user NAME` (repeatable; a group as `@NAME`)
/// on start, schedule add and limit add, and `status --user NAME` / `status --all-users`.
extension CommandParser {
    /// The `--user` names and `@group`s, as the request's `users` (nil: none given, the
    /// daemon's default scope for the caller).
    mutating func takeUsers() throws(CoreError) -> Scope? {
        var users: [String] = []
        while let name = value("--user") { users.append(name) }
        guard !users.isEmpty else { return nil }
        try Scope.validate(users)
        return Scope(names: users)
    }

    /// Whose view `status` and `report` give: `--user NAME`, `--all-users`, or the caller's.
    mutating func takeView() throws(CoreError) -> StatusView {
        let all = take("--all-users")
        var names: [String] = []
        while let name = value("--user") { names.append(name) }
        switch (names.count, all) {
        case (0, false): return .caller
        case (0, true): return .allUsers
        case (1, false):
            try Scope.validate(names)
            return .user(names[0])
        default: throw scanner.usage("give one --user NAME or --all-users")
        }
    }
}
