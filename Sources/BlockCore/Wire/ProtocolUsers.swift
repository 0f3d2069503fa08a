/// Per-user parts of the control protocol: the `users` argument of `start`, `schedule-add`
/// and `limit-add` (an array of user names and `@group`s), and whose view `status` gives.
///
///     start {"selections":["youtube"],"seconds":3600,"users":["kid","@kids"]}
///     status {"user":"kid"}
///     status {"allUsers":true}

/// Whose blocks `status` shows: the caller's (machine-wide ones, theirs and those they
/// created), one user's (root and blockd-admin only), or everyone's.
public enum StatusView: Equatable, Sendable {
    case caller
    case user(String)
    case allUsers

    var arguments: JSONObject {
        switch self {
        case .caller: [:]
        case .user(let name): ["user": .string(name)]
        case .allUsers: ["allUsers": .bool(true)]
        }
    }
}

extension Scope {
    /// On the wire: the names only; the daemon resolves them.
    var json: JSON { .array(names.map { .string($0) }) }

    /// In status, `--json` and events: the names and the uids they stood for.
    public var detail: JSON {
        ["names": .array(names.map { .string($0) }), "uids": .array(uids.map { .int(Int64($0)) })]
    }
}

extension Arguments {
    mutating func users() throws(CoreError) -> Scope? {
        guard let value = optional("users") else { return nil }
        guard case .array(let items) = value, !items.isEmpty else { throw wrongType("users", "a non-empty array of user names and @groups") }
        var names: [String] = []
        for item in items {
            guard case .string(let s) = item else { throw wrongType("users", "an array of user names and @groups") }
            names.append(s)
        }
        try Scope.validate(names)
        return Scope(names: names)
    }

    mutating func statusView() throws(CoreError) -> StatusView {
        let user = optional("user")
        let all = optional("allUsers")
        switch (user, all) {
        case (nil, nil), (nil, .bool(false)?): return .caller
        case (nil, .bool(true)?): return .allUsers
        case (.string(let name)?, nil):
            try Scope.validate([name])
            return .user(name)
        case (_?, _?): throw CoreError(.usage, "status: give 'user' or 'allUsers', not both")
        case (_?, nil): throw wrongType("user", "a user name")
        case (nil, _?): throw wrongType("allUsers", "true or false")
        }
    }
}
