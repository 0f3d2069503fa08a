import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// Per-user blocks in the engine: each caller's view of status, which the engine renders. What
/// scopes, permissions and the per-user union decide is proved on the core (BlockCoreTests'
/// CoreUserScopeTests).
@Suite("Per-user blocks (U2): each caller's view of status")
struct UserScopeTests {
    /// kid 1001 and parent 1002 (plain members of blockd), admin 1003; group kids = {1001, 1004};
    /// no user nobody-here and no group nogroup.
    static let users = UsersTable.holding(users: ["kid": 1001, "parent": 1002, "admin": 1003, "kid2": 1004],
                                          groups: ["kids": [1001, 1004], "empty": []])
    static let kid = Peer(uid: 1001, mayModify: true)
    static let parent = Peer(uid: 1002, mayModify: true)
    static let kid2 = Peer(uid: 1004, mayModify: true)
    static var admin: Peer { var p = Peer(uid: 1003, mayModify: true); p.isAdmin = true; return p }

    func harness(_ now: String = "2026-11-29T23:00:00+09:00") -> Harness { Harness(now: now, users: Self.users) }

    @Test("status shows the caller's view; --user and --all-users only for root and blockd-admin")
    func views() {
        let h = harness()
        _ = ok(h.send(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube"],"users":["kid"]}"#))
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":600}"#))
        let mine = ok(h.send("status", as: Self.kid))
        #expect(mine?["blocked"]?.array?.count == 2)
        #expect(mine?["activities"]?.array?.count == 2)
        let other = ok(h.send("status", as: Self.parent))
        #expect(other?["blocked"]?.array?.compactMap { $0["selection"]?.string } == ["reddit"], "the parent is not blocked from youtube")
        #expect(other?["activities"]?.array?.compactMap { $0["name"]?.string } == ["reddit"], "nor sees the kid's schedule")
        #expect(ok(h.send("schedule-list", as: Self.parent))?["schedules"]?.array?.isEmpty == true)
        for line in [#"status {"allUsers":true}"#, #"status {"user":"kid"}"#] {
            guard case .error(let e) = h.send(line, as: Self.parent) else {
                Issue.record("a member saw another user's blocks with \(line)")
                continue
            }
            #expect(e.code == .permissionDenied)
        }
        let asKid = ok(h.send(#"status {"user":"kid"}"#, as: Self.admin))
        #expect(asKid?["blocked"]?.array?.first { $0["selection"] == "youtube" }?["users"] == .array(["kid"]))
        #expect(ok(h.send(#"status {"allUsers":true}"#, as: Self.admin))?["activities"]?.array?.count == 2)
    }

    @Test("U2: status gives kid the end of kid's own view, not that of kid2's longer block on the same selection")
    func statusUntilPerViewer() {
        let h = harness()
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":600,"name":"short","users":["kid"]}"#))
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600,"name":"long","users":["kid2"]}"#))
        let kids = ok(h.send("status", as: Self.kid))?["blocked"]?.array?.first
        #expect(kids?["until"]?.string == "2026-11-29T23:10:00.000+09:00", "\(String(describing: kids))")
        #expect(kids?["reasons"]?.array?.count == 1)
        let kid2s = ok(h.send(#"status {"user":"kid2"}"#, as: Self.admin))?["blocked"]?.array?.first
        #expect(kid2s?["until"]?.string == "2026-11-30T00:00:00.000+09:00")
    }

    @Test("M3 with U2: kid's more time empties kid's status; kid2's view still shows homework")
    func moreTimePerUserStatus() {
        let h = harness()
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600,"name":"homework","users":["kid2"],"moreTime":{"mode":"no"}}"#))
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600,"name":"bedtime","users":["kid"]}"#))
        _ = ok(h.send(#"more {"selection":"steam","seconds":60}"#, as: Self.kid))
        #expect(ok(h.send("status", as: Self.kid))?["blocked"]?.array?.isEmpty == true)
        #expect(ok(h.send(#"status {"user":"kid2"}"#, as: Self.admin))?["blocked"]?.array?.count == 1)
    }

    @Test("M3: during more time the lifted block is still listed as active in plain status (not counted idle), for everyone and per user",
          arguments: [(#"{"selections":["steam"],"seconds":3600,"name":"gaming"}"#, "for everyone: the published snapshot"),
                      (#"{"selections":["steam"],"seconds":3600,"name":"gaming","users":["kid"]}"#, "for kid: the engine's view")])
    func grantKeepsActivityActive(start: String, what: String) {
        let h = harness()
        _ = ok(h.send("start " + start))
        _ = ok(h.send(#"schedule-add {"name":"later","window":"06:00-07:00","selections":["reddit"]}"#))
        let asker = start.contains("users") ? Self.kid : Self.admin  // A1: a lock for everyone is lifted by an administrator
        let asked = ok(h.send(#"more {"selection":"steam","seconds":600}"#, as: asker))
        if asked?["state"] == "pending", let id = asked?["id"]?.string {  // A1: root's block for kid waits for an administrator
            _ = ok(h.send(#"approve {"id":"\#(id)"}"#, as: Self.admin))
        }
        let status = ok(h.send("status", as: asker))
        #expect(status?["blocked"]?.array?.isEmpty == true, "\(what): the grant lifts steam for its asker: \(String(describing: status?["blocked"]))")
        #expect(status?["activities"]?.array?.compactMap { $0["name"]?.string } == ["gaming"], "\(what): \(String(describing: status?["activities"]))")
        #expect(status?["counts"]?["active"] == 1, "\(what): one active, the idle schedule alone left out")
        #expect(status?["moreTime"] != nil || status?["grants"] != nil, "\(what): the grant is shown with it")
    }
}

@Suite("Per-user blocks: the per-user tables as an enforcer (§7 truth)")
struct UserTablesEnforcerTests {
    @Test("per-user selections go to their users' tables, machine-wide ones to `all` (W1); no site blocked creates nothing")
    func splits() throws {
        let temp = try TempDir()
        let dir = temp.path + "/blockd/users"
        let enforcer = UserTablesEnforcer(directory: dir)
        #expect(enforcer.enforce(blocked: [Selection(name: "games", apps: ["/usr/games/x"])]) == EnforcementReport())
        #expect(!FileManager.default.fileExists(atPath: dir), "no site blocked: no directory")
        #expect(enforcer.enforce(blocked: [Selection(name: "reddit", domains: ["reddit.com"])]) == EnforcementReport())
        #expect(try UserTables(directory: dir).present() == [UserTable.everyone])
        let all = try #require(FileManager.default.contents(atPath: dir + "/all"))
        #expect(UserTable.domains(in: Array(all)) == ["reddit.com"], "W1: the module covers the machine-wide block's subdomains")
        var st = stat()
        #expect(stat(dir + "/all", &st) == 0 && st.st_mode & 0o7777 == 0o644, "readable by every user, as the hosts file is")
        var youtube = Selection(name: "youtube", domains: ["youtube.com", "www.youtube.com"])
        youtube.users = [1001, 1004]
        #expect(enforcer.enforce(blocked: [Selection(name: "reddit", domains: ["reddit.com"]), youtube]).failures.isEmpty)
        let table = try #require(FileManager.default.contents(atPath: dir + "/1001"))
        #expect(UserTable.domains(in: Array(table)) == ["www.youtube.com", "youtube.com"])
        #expect(FileManager.default.fileExists(atPath: dir + "/1004"))
        #expect(UserTable.domains(in: Array(FileManager.default.contents(atPath: dir + "/all") ?? Data())) == ["reddit.com"])
        _ = enforcer.enforce(blocked: [])
        #expect(try UserTables(directory: dir).present() == [], "tables go when the block ends")
    }

    @Test("W2: allow-only windows go to their users' tables or to `all`; two at once allow what both allow; a block inside stays blocked")
    func allowOnlyTables() throws {
        let temp = try TempDir()
        let dir = temp.path + "/users"
        let enforcer = UserTablesEnforcer(directory: dir)
        var kid = try Catalog.standard.resolve("only:school.example,wiki.example")
        kid.users = [1001]
        var kidToo = try Catalog.standard.resolve("only:wiki.example,video.example")
        kidToo.users = [1001]
        let everyone = try Catalog.standard.resolve("only:school.example")
        var video = Selection(name: "video", domains: ["video.example"])
        video.users = [1001]
        let report = enforcer.enforce(blocked: [kid, kidToo, video, everyone])
        #expect(report.failures.isEmpty && report.notEnforced.isEmpty, "\(report)")
        let table = Array(FileManager.default.contents(atPath: dir + "/1001") ?? Data())
        #expect(UserTable.domains(in: table) == ["video.example"])
        #expect(UserTable.allowed(in: table) == ["wiki.example"], "the intersection of the two windows")
        let all = Array(FileManager.default.contents(atPath: dir + "/all") ?? Data())
        #expect(UserTable.allowed(in: all) == ["school.example"] && UserTable.domains(in: all).isEmpty)
        _ = enforcer.enforce(blocked: [])
        #expect(try UserTables(directory: dir).present() == [], "the windows' tables go with them")
    }

    @Test("W2, §7: without blockd on the hosts: line an allow-only window is not enforced, machine-wide too, with the cause")
    func allowOnlyUnread() throws {
        let temp = try TempDir()
        let dir = temp.path + "/users", nsswitch = temp.path + "/nsswitch.conf"
        try "hosts: files dns\n".write(toFile: nsswitch, atomically: true, encoding: .utf8)
        let enforcer = UserTablesEnforcer(directory: dir, nsswitch: nsswitch, moduleDirectory: dir)
        let everyone = try Catalog.standard.resolve("only:school.example")
        let report = enforcer.enforce(blocked: [everyone, Selection(name: "reddit", domains: ["reddit.com"])])
        #expect(report.notEnforced[everyone.name]?.contains("allow-only time is kept by the NSS module") == true, "\(report)")
        #expect(report.notEnforced["reddit"] == nil, "a machine-wide block is the hosts file's")
    }

    @Test("a table that cannot be written leaves its selections not enforced, with the cause")
    func truth() throws {
        let temp = try TempDir()
        try Data().write(to: URL(fileURLWithPath: temp.path + "/file"))
        let enforcer = UserTablesEnforcer(directory: temp.path + "/file/users")
        var youtube = Selection(name: "youtube", domains: ["youtube.com"])
        youtube.users = [1001]
        let report = enforcer.enforce(blocked: [youtube])
        #expect(report.notEnforced["youtube"]?.contains("cannot write the per-user tables") == true, "\(report)")
    }

    /// The tables in the module's own directory, but `blockd` not on the hosts: line: no
    /// program asks them, so a per-user web block is not in force (§7 "Truth"), and the
    /// hosts: line is read afresh, so putting blockd there while it runs is seen at once.
    @Test("§7, U3: with blockd off the hosts: line a per-user web block is not enforced, with the cause; put back, it is")
    func unreadTables() throws {
        let temp = try TempDir()
        let dir = temp.path + "/users", nsswitch = temp.path + "/nsswitch.conf"
        try "passwd: files\nhosts:          files dns # blockd was here\n".write(toFile: nsswitch, atomically: true, encoding: .utf8)
        let enforcer = UserTablesEnforcer(directory: dir, nsswitch: nsswitch, moduleDirectory: dir)
        var youtube = Selection(name: "youtube", domains: ["youtube.com"], apps: ["/usr/bin/true"])
        youtube.users = [1001]
        var appsOnly = Selection(name: "games", apps: ["/usr/games/x"])
        appsOnly.users = [1001]
        let off = enforcer.enforce(blocked: [youtube, appsOnly, Selection(name: "reddit", domains: ["reddit.com"])])
        #expect(off.notEnforced["youtube"]?.contains("blockd is not on the hosts: line of \(nsswitch)") == true, "\(off)")
        #expect(off.notEnforced.count == 1, "apps-only and machine-wide selections do not need the module: \(off)")
        #expect(enforcer.off?.contains("not on the hosts: line") == true)
        #expect(!FileManager.default.fileExists(atPath: dir + "/all"), "W1: no machine-wide table where no program asks the module")
        try "passwd: files\nhosts:          blockd files dns\n".write(toFile: nsswitch, atomically: true, encoding: .utf8)
        let on = enforcer.enforce(blocked: [youtube, appsOnly, Selection(name: "reddit", domains: ["reddit.com"])])
        #expect(on.notEnforced.isEmpty && enforcer.off == nil, "\(on)")
        #expect(FileManager.default.fileExists(atPath: dir + "/all"), "W1: with blockd on the hosts: line, `all` is written")
        // Another directory than the module's (a sandbox): said in the mode line, but the
        // tables may be mounted where the module reads them, so the selection is not refused.
        let sandbox = UserTablesEnforcer(directory: temp.path + "/other", nsswitch: nsswitch, moduleDirectory: dir)
        #expect(sandbox.enforce(blocked: [youtube]).notEnforced.isEmpty)
        #expect(sandbox.off?.contains("which the installed NSS module does not read") == true)
    }

    @Test("A1, U1: when /etc/passwd or /etc/group change the engine reads the users table again: a user added after start can be blocked, and a parent added to blockd-admin administers at once")
    func usersRead() throws {
        let system = TableBox(UsersTable.holding(users: ["kid": 1001, "parent": 1002]))
        let h = Harness(database: UserDatabase(read: { system.value }, lookUp: { table, _, _ in table }))
        guard case .error(let e) = h.send(#"start {"selections":["reddit"],"seconds":600,"users":["newkid"]}"#) else {
            Issue.record("a start for a user no one added was accepted")
            return
        }
        #expect(e.message.contains("no user named 'newkid'"))
        #expect(h.run { h.engine.core.users.isAdmin(1002) } == false)
        system.value = UsersTable.holding(users: ["kid": 1001, "parent": 1002, "newkid": 1003], admins: [1002])
        h.inbox.post(.usersChanged)
        h.run {}
        #expect(ok(h.send(#"start {"selections":["reddit"],"seconds":600,"users":["newkid"]}"#))?["userIds"] == [1003])
        #expect(h.run { h.engine.core.users.person(1002) } == Person(rank: .admin, name: "parent"))
    }
}

/// A users table another thread may replace (the system's, as a test gives it).
final class TableBox: @unchecked Sendable {
    private let lock = NSLock()
    private var table: UsersTable
    init(_ table: UsersTable) { self.table = table }
    var value: UsersTable {
        get { lock.lock(); defer { lock.unlock() }; return table }
        set { lock.lock(); table = newValue; lock.unlock() }
    }
}
