import BlockCore
import Glibc

/// The daemon's edge to the user database (per-user blocks, A1): the whole of it read into a
/// `UsersTable` (getpwent, getgrent), then whatever a directory that does not enumerate (sssd's
/// default, LDAP) left out looked up one by one (getpwnam, getpwuid, getgrnam) before the core
/// needs it. Not thread-safe (getpwent's position is the process's): the engine's queue only.
extension UsersTable {
    /// Every user and group the system's database lists, the authority groups by name too.
    public static func system() -> UsersTable {
        var users: [UInt32: User] = [:], groups: [String: Group] = [:]
        var pw = passwd(), entry: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        setpwent()
        while getpwent_r(&pw, &buffer, buffer.count, &entry) == 0, entry != nil, let name = pw.pw_name {
            if users[pw.pw_uid] == nil { users[pw.pw_uid] = User(name: String(cString: name), gid: pw.pw_gid) }  // the first, as getpwuid finds it
        }
        endpwent()
        // getgrent, not getgrent_r (which Glibc's module does not export): its entry is copied
        // out at once, and only the engine's queue enumerates.
        setgrent()
        while let entry = getgrent() {
            guard let name = entry.pointee.gr_name else { continue }
            let group = String(cString: name)
            if groups[group] == nil { groups[group] = Group(gid: entry.pointee.gr_gid, listed: listed(entry.pointee)) }
        }
        endgrent()
        return UsersTable(users: users, groups: groups, daemonUID: geteuid()).lookingUp(names: ["@" + adminGroup, "@" + memberGroup], uids: [])
    }

    /// This table with the `names` (users, `@groups`) and `uids` it lacks looked up one by one,
    /// as far as the system knows them.
    public func lookingUp(names: [String], uids: [UInt32]) -> UsersTable {
        let (names, uids) = lacking(names: names, uids: uids)
        guard !names.isEmpty || !uids.isEmpty else { return self }
        var found = UsersTable()
        var pw = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        for name in names where !name.hasPrefix("@") {
            if getpwnam_r(name, &pw, &buffer, buffer.count, &result) == 0, result != nil {
                found.add(uid: pw.pw_uid, name: name, gid: pw.pw_gid)
            }
        }
        for uid in uids {
            if getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil, let name = pw.pw_name {
                found.add(uid: uid, name: String(cString: name), gid: pw.pw_gid)
            }
        }
        var gr = Glibc.group(), groupResult: UnsafeMutablePointer<Glibc.group>?
        var groupBuffer = [CChar](repeating: 0, count: 65536)
        for name in names where name.hasPrefix("@") {
            let group = String(name.dropFirst())
            if getgrnam_r(group, &gr, &groupBuffer, groupBuffer.count, &groupResult) == 0, groupResult != nil {
                found.add(group: group, gid: gr.gr_gid, listed: Self.listed(gr))
            }
        }
        // A listed member a directory did not enumerate is looked up too, so that it counts.
        let members = found.groups.values.flatMap(\.listed).filter { self.uid($0) == nil && found.uid($0) == nil }
        for name in Set(members) where getpwnam_r(name, &pw, &buffer, buffer.count, &result) == 0 && result != nil {
            found.add(uid: pw.pw_uid, name: name, gid: pw.pw_gid)
        }
        guard !found.users.isEmpty || !found.groups.isEmpty else { return self }  // nobody by those names: nothing to merge
        var out = self
        out.merge(found)
        return out
    }

    private static func listed(_ gr: Glibc.group) -> [String] {
        var names: [String] = []
        if var p = gr.gr_mem {
            while let m = p.pointee {
                names.append(String(cString: m))
                p += 1
            }
        }
        return names
    }
}

/// Where the engine's users table comes from: read whole at start, on a reload and when
/// /etc/passwd or /etc/group change; what it lacks looked up before a request or a
/// configuration that names it is decided on. The daemon gives the system's; a test a table
/// of its own people (`fixed`).
public struct UserDatabase: Sendable {
    public var read: @Sendable () -> UsersTable
    public var lookUp: @Sendable (_ table: UsersTable, _ names: [String], _ uids: [UInt32]) -> UsersTable

    public init(read: @escaping @Sendable () -> UsersTable,
                lookUp: @escaping @Sendable (_ table: UsersTable, _ names: [String], _ uids: [UInt32]) -> UsersTable) {
        (self.read, self.lookUp) = (read, lookUp)
    }

    public static let system = UserDatabase(read: { UsersTable.system() }, lookUp: { $0.lookingUp(names: $1, uids: $2) })

    /// Exactly `table`, whatever is asked.
    public static func fixed(_ table: UsersTable) -> UserDatabase { UserDatabase(read: { table }, lookUp: { t, _, _ in t }) }

    /// The files whose change means the table must be read again.
    public static let files = ["/etc/passwd", "/etc/group"]
}
