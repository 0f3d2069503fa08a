import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// Per-user blocks in the engine: scopes resolved at the edge, §5 for scopes, the per-user
/// union derived from the reasons, and each caller's view of status.
@Suite("Per-user blocks: scopes, permissions and the per-user union")
struct UserScopeTests {
    /// kid 1001 and parent 1002 (plain members of blockd), admin 1003; group kids = {1001, 1004};
    /// no user nobody-here and no group nogroup.
    static let users = UserDirectory.only(users: ["kid": 1001, "parent": 1002, "admin": 1003, "kid2": 1004],
                                          groups: ["kids": [1001, 1004], "empty": []], absent: ["nobody-here", "@nogroup"])
    static let kid = Peer(uid: 1001, mayModify: true)
    static let parent = Peer(uid: 1002, mayModify: true)
    static let kid2 = Peer(uid: 1004, mayModify: true)
    static var admin: Peer { var p = Peer(uid: 1003, mayModify: true); p.isAdmin = true; return p }

    func harness(_ now: String = "2026-11-29T23:00:00+09:00") -> Harness { Harness(now: now, users: Self.users) }

    @Test("done-when: schedule add bedtime --user kid youtube steam blocks both for kid only")
    func bedtimeForKid() {
        let h = harness()
        let o = ok(h.send(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube","steam"],"users":["kid"]}"#))
        #expect(o?["users"] == .array(["kid"]))
        #expect(o?["userIds"] == .array([.int(1001)]))
        #expect(h.enforcer.current == ["steam", "youtube"])
        #expect(h.enforcer.users == ["steam": [1001], "youtube": [1001]], "blocked for kid only, not machine-wide")
    }

    @Test("a machine-wide reason makes a per-user selection machine-wide while it holds, then it is per-user again")
    func scopeFollowsReasons() {
        let h = harness()
        _ = ok(h.send(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube"],"users":["@kids"]}"#))
        #expect(h.enforcer.users == ["youtube": [1001, 1004]])
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":600}"#))
        #expect(h.enforcer.current == ["youtube"] && h.enforcer.users.isEmpty, "root's block is for everyone")
        h.advance(601)
        #expect(h.enforcer.current == ["youtube"])
        #expect(h.enforcer.users == ["youtube": [1001, 1004]], "back to the kids only once the machine-wide block ended")
    }

    @Test("§5: a plain member blocks only for themselves, by default too; admins and root for anyone")
    func permissions() {
        let h = harness()
        guard case .error(let e) = h.send(#"start {"selections":["reddit"],"seconds":60,"users":["kid"]}"#, as: Self.parent) else {
            Issue.record("a member scoped a block to another user")
            return
        }
        #expect(e.code == .permissionDenied)
        #expect(e.message.contains("only for themselves") && e.message.contains("blockd-admin"))
        let own = ok(h.send(#"start {"selections":["reddit"],"seconds":60}"#, as: Self.parent))
        #expect(own?["users"] == .array(["parent"]), "a member's default scope is themselves")
        #expect(h.enforcer.users["reddit"] == [1002])
        #expect(ok(h.send(#"start {"selections":["instagram"],"seconds":60,"users":["kid"]}"#, as: Self.admin)) != nil)
        #expect(h.enforcer.users["instagram"] == [1001])
    }

    @Test("unknown users and groups, empty groups and URL-path selections are refused with what to do")
    func refusals() {
        let h = harness()
        let cases: [(String, String)] = [
            (#"start {"selections":["reddit"],"seconds":60,"users":["nobody-here"]}"#, "no user named 'nobody-here'"),
            (#"start {"selections":["reddit"],"seconds":60,"users":["@nogroup"]}"#, "no group named 'nogroup'"),
            (#"start {"selections":["reddit"],"seconds":60,"users":["@empty"]}"#, "has no members"),
            (#"start {"selections":["youtube.com/shorts"],"seconds":60,"users":["kid"]}"#, "browsers enforce for every user"),
        ]
        for (line, expected) in cases {
            guard case .error(let e) = h.send(line) else {
                Issue.record("accepted: \(line)")
                continue
            }
            #expect(e.message.contains(expected), "\(e.message)")
        }
        #expect(h.enforcer.current == [])
    }

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

    @Test("a block of the same name for other people is neither widened nor narrowed by a start")
    func sameNameOtherScope() {
        let h = harness()
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":600,"users":["kid"]}"#))
        guard case .error(let e) = h.send(#"start {"selections":["reddit"],"seconds":900}"#) else {
            Issue.record("a machine-wide start extended the kid's block")
            return
        }
        #expect(e.code == .exists && e.message.contains("--name"))
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

    @Test("M3 with U2: kid's more time lifts kid's own view; kid2's homework on the same selection stays, and is neither asked about nor named")
    func moreTimePerUser() {
        let h = harness()
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600,"name":"homework","users":["kid2"],"moreTime":{"mode":"no"}}"#))
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600,"name":"bedtime","users":["kid"]}"#))
        let g = ok(h.send(#"more {"selection":"steam","seconds":60}"#, as: Self.kid))
        #expect(g?["activities"] == .array(["bedtime"]), "granted over kid's own activity only: \(String(describing: g))")
        #expect(h.enforcer.current == ["steam"] && h.enforcer.users == ["steam": [1004]], "still blocked for kid2, no longer for kid")
        #expect(ok(h.send("status", as: Self.kid))?["blocked"]?.array?.isEmpty == true)
        #expect(ok(h.send(#"status {"user":"kid2"}"#, as: Self.admin))?["blocked"]?.array?.count == 1)
        #expect(Self.news(h, "steam").suffix(1) == ["unlock for [1001]"], "the grant is news for kid alone")
        h.advance(61)
        #expect(h.enforcer.users == ["steam": [1001, 1004]], "blocked for kid again at the grant's end")
        #expect(Self.news(h, "steam").suffix(1) == ["lock bedtime for [1001]"])
        // kid2's own ask meets kid2's own policy: homework allows no more time.
        guard case .error(let e) = h.send(#"more {"selection":"steam","seconds":60}"#, as: Self.kid2) else {
            Issue.record("kid2 got more time over homework (MoreTime=no)")
            return
        }
        #expect(e.message.contains("homework") && !e.message.contains("bedtime"), "\(e.message)")
    }

    /// The lock and unlock events the engine published: `lock reasons for whom`.
    static func news(_ h: Harness, _ selection: String) -> [String] {
        h.events.all.filter { $0["selection"]?.string == selection && ["lock", "unlock"].contains($0["event"]?.string ?? "") }.map { e in
            let whom = e["users"].map { "for \($0)" } ?? e["except"].map { "for everyone but \($0)" } ?? "for everyone"
            let reasons = e["reasons"]?.array?.compactMap(\.string).joined(separator: " ")
            return [e["event"]!.string!, reasons, whom].compactMap { $0 }.joined(separator: " ")
        }
    }

    @Test("U2: a machine-wide block over kid's bedtime is news for everyone but kid, and so is its end")
    func machineWideOverPerUser() {
        let h = harness()
        _ = ok(h.send(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube"],"users":["kid"]}"#))
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":600,"name":"focus"}"#))
        #expect(h.entries(.lock).last?.message.hasPrefix("Blocked youtube for everyone but kid: block 'focus', until ") == true,
                "\(h.entries(.lock).map(\.message))")
        h.advance(601)
        #expect(Self.news(h, "youtube") == ["lock bedtime for [1001]", "lock focus for everyone but [1001]", "unlock for everyone but [1001]"])
        #expect(h.entries(.unlock).last?.message == "Unblocked youtube for everyone but kid: timed block 'focus' ended (10m)")
        #expect(h.enforcer.users == ["youtube": [1001]], "kid's bedtime holds")
    }

    @Test("U2: kid is told of kid's own activities only, never of another user's on the same selection")
    func ownReasonsOnly() {
        let h = harness()
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":600,"name":"homework","users":["kid2"]}"#))
        _ = ok(h.send(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["steam"],"users":["kid"]}"#))
        #expect(Self.news(h, "steam") == ["lock homework for [1004]", "lock bedtime for [1001]"])
        #expect(h.entries(.lock).last?.message.hasPrefix("Blocked steam for kid: schedule 'bedtime', until ") == true)
        // kid's lock ends at 07:00, kid2's homework at 23:10: each is told their own end.
        let untils = h.events.all.filter { $0["event"]?.string == "lock" }.map { $0["until"]?.string ?? "none" }
        #expect(untils == ["2026-11-29T23:10:00.000+09:00", "2026-11-30T07:00:00.000+09:00"])
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
}
