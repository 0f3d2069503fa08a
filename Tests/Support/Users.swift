import BlockCore
import BlockDaemon
import Testing

extension UserDirectory {
    /// A user database that holds only what a test gives it (U3, A1): root, `users` by name,
    /// `groups` with their members' uids, and `admins` besides root. It fails closed: a lookup of
    /// a user, group or uid it was not given records an issue that names it, so no test's outcome
    /// depends on who has an account on the machine it runs on. A test that looks up someone
    /// absent on purpose says so: `absent` names (`@name` for a group), `nameless` uids (an
    /// account without a name, shown as `#1000`).
    public static func only(users: [String: UInt32] = [:], groups: [String: [UInt32]] = [:], admins: Set<UInt32> = [],
                            absent: Set<String> = [], nameless: Set<UInt32> = []) -> UserDirectory {
        let users = users.merging(["root": 0]) { given, _ in given }
        let names = Dictionary(users.map { ($0.value, $0.key) }) { a, b in min(a, b) }
        let known = Set(names.keys).union(nameless)
        return UserDirectory(
            uid: { name in
                if let uid = users[name] { return uid }
                if !absent.contains(name) { Unlisted.lookup("user '\(name)'", give: "users: or absent:") }
                return nil
            },
            members: { group in
                if let members = groups[group] { return members }
                if !absent.contains("@" + group) { Unlisted.lookup("group '\(group)'", give: "groups: or absent: as @\(group)") }
                return nil
            },
            name: { uid in
                if let name = names[uid] { return name }
                if !nameless.contains(uid) { Unlisted.lookup("uid \(uid)", give: "users: or nameless:") }
                return nil
            },
            isAdmin: { uid in
                if !known.contains(uid) { Unlisted.lookup("whether uid \(uid) is an administrator", give: "users: or nameless:") }
                return uid == 0 || admins.contains(uid) || groups[UserDirectory.adminGroup]?.contains(uid) == true
            })
    }

    /// A user database nobody gave: every lookup records an issue (`Engine.Collaborators.unsupplied`).
    public static let unsupplied = UserDirectory(
        uid: { Unsupplied.used("users (the user database: user '\($0)')"); return nil },
        members: { Unsupplied.used("users (the user database: group '\($0)')"); return nil },
        name: { Unsupplied.used("users (the user database: uid \($0))"); return nil },
        isAdmin: { Unsupplied.used("users (the user database: whether uid \($0) is an administrator)"); return $0 == 0 })
}

private enum Unlisted {
    static func lookup(_ what: String, give: String) {
        Issue.record("the engine looked up \(what), which this test's user database does not hold; give it in UserDirectory.only(\(give)), or use UserDirectory.system if the test is about the machine's own")
    }
}
