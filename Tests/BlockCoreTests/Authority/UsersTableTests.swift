import Testing
@testable import BlockCore

/// The user database as a value (U1, A1): members, ranks and what the edge must still look up,
/// decided by the table alone.
@Suite("U1, A1: the users table")
struct UsersTableTests {
    /// kid 1001 and kid2 1004 (group kids lists kid; kid2's primary group is kids), parent 1002
    /// (listed in blockd-admin), member 1005 (listed in blockd), blockd runs as 990.
    static var table: UsersTable {
        var t = UsersTable(daemonUID: 990)
        t.add(uid: 0, name: "root", gid: 0)
        t.add(uid: 1001, name: "kid", gid: 1001)
        t.add(uid: 1002, name: "parent", gid: 1002)
        t.add(uid: 1004, name: "kid2", gid: 3000)
        t.add(uid: 1005, name: "member", gid: 1005)
        t.add(uid: 990, name: "blockd", gid: 990)
        t.add(group: "kids", gid: 3000, listed: ["kid"])
        t.add(group: UsersTable.adminGroup, gid: 3001, listed: ["parent", "gone"])
        t.add(group: UsersTable.memberGroup, gid: 3002, listed: ["member", "kid"])
        return t
    }

    @Test("U1: a group's members are the users it lists and those whose primary group it is; a listed name with no account is no one")
    func members() throws {
        let t = Self.table
        #expect(t.members("kids") == [1001, 1004])
        #expect(t.members(UsersTable.adminGroup) == [1002])
        #expect(t.members("nogroup") == nil)
        #expect(try Set(t.resolve(["@kids", "parent"]).uids) == [1001, 1002, 1004])
        #expect(throws: CoreError.self) { try t.resolve(["nosuchuser"]) }
    }

    @Test("A1: ranks in one place: root, blockd's own user and blockd-admin administer; they and blockd's members may modify; the process's group counts too",
          arguments: [
              (uid: 0 as UInt32, gid: nil as UInt32?, admin: true, modify: true),
              (uid: 990, gid: nil, admin: true, modify: true),
              (uid: 1002, gid: nil, admin: true, modify: true),
              (uid: 1005, gid: nil, admin: false, modify: true),
              (uid: 1001, gid: nil, admin: false, modify: true),
              (uid: 1004, gid: nil, admin: false, modify: false),
              (uid: 1004, gid: 3002, admin: false, modify: true),
              (uid: 1004, gid: 3001, admin: true, modify: true),
              (uid: 4242, gid: nil, admin: false, modify: false),
          ])
    func ranks(uid: UInt32, gid: UInt32?, admin: Bool, modify: Bool) {
        let peer = Self.table.peer(uid, processGID: gid)
        #expect(peer.isAdmin == admin && peer.mayModify == modify)
        #expect(Self.table.isAdmin(uid, processGID: gid) == admin && Self.table.mayModify(uid, processGID: gid) == modify)
    }

    @Test("A1: a person as the authority table names them: root, an administrator or a member, by name or #uid")
    func people() {
        #expect(Self.table.person(0) == Person(rank: .root, name: "root"))
        #expect(Self.table.person(1002) == Person(rank: .admin, name: "parent"))
        #expect(Self.table.person(1001) == Person(rank: .member, name: "kid"))
        #expect(Self.table.person(4242) == Person(rank: .member, name: "#4242"))
        #expect(Self.table.own(4242) == Scope(names: ["#4242"], uids: [4242]))
    }

    @Test("U1: what the edge must look up is what the table lacks; a lookup merged in makes a listed name count")
    func lackingAndMerge() {
        var t = Self.table
        #expect(t.lacking(names: ["kid", "gone", "@kids", "@ldapgroup"], uids: [1001, 5000]) == (["gone", "@ldapgroup"], [5000]))
        var found = UsersTable()
        found.add(uid: 5000, name: "gone", gid: 5000)
        t.merge(found)
        #expect(t.members(UsersTable.adminGroup) == [1002, 5000], "gone, listed in blockd-admin, is an administrator once known")
        #expect(t.lacking(names: ["gone"], uids: [5000]) == ([], []))
        #expect(t.daemonUID == 990, "a merge keeps whom blockd runs as")
    }

    @Test("a whole database at once is the same table as one built entry by entry; two uids of one name: the lower, as getpwnam finds the first")
    func bulk() {
        let t = Self.table
        let bulk = UsersTable(users: t.users, groups: t.groups, daemonUID: 990)
        #expect(bulk == t)
        var twice = UsersTable()
        twice.add(uid: 2000, name: "dup", gid: 1)
        twice.add(uid: 1999, name: "dup", gid: 1)
        #expect(twice.uid("dup") == 1999)
    }
}
