import BlockCore
import CLinux
import Glibc

/// The daemon's edge to the user database (per-user blocks): user names and `@group`s become
/// uids when an activity is accepted (getpwnam, getgrnam; a group's members are its listed
/// members and the users whose primary group it is). Tests give their own tables.
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

    /// The system's user database.
    public static let system = UserDirectory(
        uid: { name in
            var pw = passwd(), result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16384)
            guard getpwnam_r(name, &pw, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
            return pw.pw_uid
        },
        members: systemMembers,
        name: { uid in
            var pw = passwd(), result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16384)
            guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil, let n = pw.pw_name else { return nil }
            return String(cString: n)
        },
        isAdmin: { uid in
            guard uid != 0 else { return true }
            var pw = passwd(), result: UnsafeMutablePointer<passwd>?, admin: UInt32 = 0
            var buffer = [CChar](repeating: 0, count: 16384)
            guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil,
                  blockd_group_id(adminGroup, &admin) == 0 else { return false }
            return blockd_user_in_group(uid, pw.pw_gid, admin) == 1
        })

    @Sendable static func systemMembers(_ group: String) -> [UInt32]? {
        var gr = Glibc.group(), result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        guard getgrnam_r(group, &gr, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        let gid = gr.gr_gid
        var names: [String] = []
        if var p = gr.gr_mem {
            while let m = p.pointee {
                names.append(String(cString: m))
                p += 1
            }
        }
        var uids = names.compactMap { system.uid($0) }
        // Users whose primary group it is are members too, listed or not.
        var pw = passwd(), entry: UnsafeMutablePointer<passwd>?
        var pwBuffer = [CChar](repeating: 0, count: 16384)
        setpwent()
        while getpwent_r(&pw, &pwBuffer, pwBuffer.count, &entry) == 0, entry != nil {
            if pw.pw_gid == gid { uids.append(pw.pw_uid) }
        }
        endpwent()
        return Array(Set(uids)).sorted()
    }
}
