import FoundationEssentials

/// The user database as the core asks it (per-user blocks, A1): user names and `@group`s become
/// uids when an activity is accepted, and uids become people with a rank. The lookups are given:
/// the daemon gives the system's database (`UserDirectory.system`, getpwnam and getgrnam), a
/// test its own table; the core never reads a file itself.
public struct UserDirectory: Sendable {
    public var uid: @Sendable (String) -> UInt32?
    /// A group's members by uid (nil: no such group).
    public var members: @Sendable (String) -> [UInt32]?
    public var name: @Sendable (UInt32) -> String?
    /// A1: whether a uid is an administrator now (root, or a member of group `blockd-admin`).
    public var isAdmin: @Sendable (UInt32) -> Bool

    /// `isAdmin` nil: root and the members of `blockd-admin` by `members`.
    public init(uid: @escaping @Sendable (String) -> UInt32?, members: @escaping @Sendable (String) -> [UInt32]?,
                name: @escaping @Sendable (UInt32) -> String?, isAdmin: (@Sendable (UInt32) -> Bool)? = nil) {
        (self.uid, self.members, self.name) = (uid, members, name)
        self.isAdmin = isAdmin ?? { $0 == 0 || (members(UserDirectory.adminGroup)?.contains($0) ?? false) }
    }

    public static let adminGroup = "blockd-admin"

    /// A1: who a uid is, for the authority table: root, an administrator or a member (an
    /// owner who left group blockd still owns what they set), named by user name.
    public func person(_ uid: UInt32) -> Person {
        if uid == 0 { return Person(rank: .root, name: "root") }
        return Person(rank: isAdmin(uid) ? .admin : .member, name: name(uid) ?? "#\(uid)")
    }

    /// A peer for `uid` with its rank now (a delayed loosening carried out for its asker).
    public func peer(_ uid: UInt32) -> Peer {
        let rank = person(uid).rank
        var p = Peer(uid: uid, mayModify: rank >= .member)
        p.isAdmin = rank >= .admin
        return p
    }

    /// `names` resolved: every uid they stand for. An unknown user or group is an error that
    /// names it; an empty group too (it would block no one).
    public func resolve(_ names: [String]) throws(CoreError) -> Scope {
        var uids: [UInt32] = []
        for name in names {
            if name.hasPrefix("@") {
                let group = String(name.dropFirst())
                guard let members = members(group) else {
                    throw CoreError(.notFound, "no group named '\(group)' on this machine; check the name with 'getent group \(group)'")
                }
                guard !members.isEmpty else {
                    throw CoreError(.notFound, "group '\(group)' has no members, so the block would apply to no one; add users with 'usermod -aG \(group) NAME'")
                }
                uids += members
            } else {
                guard let uid = uid(name) else {
                    throw CoreError(.notFound, "no user named '\(name)' on this machine; check the name with 'getent passwd \(name)'")
                }
                uids.append(uid)
            }
        }
        return Scope(names: names, uids: uids)
    }

    /// The scope of a caller who gave none: themselves (their name, or their uid as `#1000`
    /// when it has no name).
    public func own(_ uid: UInt32) -> Scope { Scope(names: [name(uid) ?? "#\(uid)"], uids: [uid]) }
}
