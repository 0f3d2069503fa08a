import BlockCore

/// Per-user blocks on blockc's command line: `--user NAME` (repeatable; a group as `@NAME`)
/// on start, schedule add and limit add, and `status --user NAME` / `status --all-users`.
extension CommandParser {
    mutating func takeUsers() throws(CoreError) {
        while let name = value("--user") { users.append(name) }
        if !users.isEmpty { try Scope.validate(users) }
    }

    mutating func takeView() throws(CoreError) {
        let all = take("--all-users")
        var names: [String] = []
        while let name = value("--user") { names.append(name) }
        switch (names.count, all) {
        case (0, false): view = .caller
        case (0, true): view = .allUsers
        case (1, false):
            try Scope.validate(names)
            view = .user(names[0])
        default: throw scanner.usage("give one --user NAME or --all-users")
        }
    }
}

extension Request {
    /// The request with the invocation's `--user` names or status view.
    func forUsers(_ invocation: BlockcInvocation) -> Request {
        let scope = invocation.users.isEmpty ? nil : Scope(names: invocation.users)
        switch self {
        case .start(var s):
            s.users = scope
            return .start(s)
        case .scheduleAdd(var s):
            s.users = scope
            return .scheduleAdd(s)
        case .limitAdd(var l):
            l.users = scope
            return .limitAdd(l)
        case .status(let all, _): return .status(all: all, view: invocation.view)
        default: return self
        }
    }
}
