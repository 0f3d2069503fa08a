import Foundation
import Testing
@testable import BlockCore

/// Per-user blocks on the core: scopes resolved with the user database, §5 for scopes, the
/// per-user union derived from the reasons, and who is told what (U2). Each caller's view of
/// `status` is worked out here (`statusView`); the engine renders it.
@Suite("Per-user blocks (U1, U2, §5): scopes, permissions and the per-user union, decided by the core")
struct CoreUserScopeTests {
    /// kid 1001 and parent 1002 (plain members of blockd), admin 1003; group kids = {1001, 1004};
    /// no user nobody-here and no group nogroup.
    static let users = FakeEdge.users(["kid": 1001, "parent": 1002, "admin": 1003, "kid2": 1004],
                                        groups: ["kids": [1001, 1004], "empty": []])
    static let kid = Peer(uid: 1001, mayModify: true)
    static let parent = Peer(uid: 1002, mayModify: true)
    static let kid2 = Peer(uid: 1004, mayModify: true)
    static var admin: Peer { var p = Peer(uid: 1003, mayModify: true); p.isAdmin = true; return p }

    static func driver() -> FakeEdge { FakeEdge(at: "2026-11-29T23:00:00+09:00", users: users) }

    /// The lock and unlock events: `lock reasons for whom`.
    static func news(_ d: FakeEdge, _ selection: String) -> [String] {
        d.events.filter { $0["selection"]?.string == selection && ["lock", "unlock"].contains($0["event"]?.string ?? "") }.map { e in
            let whom = e["users"].map { "for \($0)" } ?? e["except"].map { "for everyone but \($0)" } ?? "for everyone"
            let reasons = e["reasons"]?.array?.compactMap(\.string).joined(separator: " ")
            return [e["event"]!.string!, reasons, whom].compactMap { $0 }.joined(separator: " ")
        }
    }

    @Test("U2: a user's status view: the selections blocked for them, with the end as their own activities have it, the activities they see, and their part of applied")
    func statusView() {
        var d = Self.driver()
        _ = ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube"],"users":["kid"]}"#))
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":36000,"name":"long","users":["kid2"]}"#))
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":600,"name":"all"}"#))
        let kid = d.core.statusView(for: 1001, all: false, now: d.now)
        #expect(kid.blocked.map(\.selection) == ["reddit", "youtube"])
        #expect(kid.blocked.first { $0.selection == "youtube" }?.until == at("2026-11-30T07:00:00+09:00"),
                "the end of kid's own bedtime, not kid2's longer block")
        #expect(kid.activities.map(\.name).sorted() == ["all", "bedtime"], "kid2's block is not kid's to see")
        #expect(kid.applied == ["reddit", "youtube"] && kid.notEnforced == [])
        let kid2 = d.core.statusView(for: 1004, all: true, now: d.now)
        #expect(kid2.blocked.map(\.selection) == ["reddit", "youtube"])
        #expect(kid2.activities.map(\.name).sorted() == ["all", "long"], "with all: every activity kid2 may see")
        let other = d.core.statusView(for: 1002, all: false, now: d.now)
        #expect(other.blocked.map(\.selection) == ["reddit"] && other.applied == ["reddit"])
    }

    @Test("U2: whose view a plain status gives: an administrator's and root's is everyone's (the child's block shows), --user NAME is NAME's, a member's is their own",
          arguments: [
              (peer: "admin", view: StatusView.caller, sees: nil as UInt32?),
              (peer: "root", view: .caller, sees: nil),
              (peer: "admin", view: .user("kid"), sees: 1001),
              (peer: "admin", view: .user("admin"), sees: 1003),
              (peer: "admin", view: .allUsers, sees: nil),
              (peer: "kid", view: .caller, sees: 1001),
              (peer: "kid", view: .user("kid"), sees: 1001),
          ])
    func statusViewer(peer: String, view: StatusView, sees: UInt32?) throws {
        let d = Self.driver()
        let who = ["admin": Self.admin, "root": Peer.root, "kid": Self.kid][peer]!
        #expect(try d.core.statusViewer(view, peer: who) == sees)
    }

    @Test("U2: a member may not ask for everyone's view or another user's", arguments: [StatusView.allUsers, .user("parent")])
    func memberViewRefused(view: StatusView) {
        let d = Self.driver()
        #expect(throws: CoreError.self) { try d.core.statusViewer(view, peer: Self.kid) }
    }

    @Test("U1 done-when: schedule add bedtime --user kid youtube steam blocks both for kid only")
    func bedtimeForKid() {
        var d = Self.driver()
        let o = ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube","steam"],"users":["kid"]}"#))
        #expect(o?["users"] == .array(["kid"]))
        #expect(o?["userIds"] == .array([.int(1001)]))
        #expect(d.enforced == ["steam", "youtube"])
        #expect(d.enforcedUsers == ["steam": [1001], "youtube": [1001]], "blocked for kid only, not machine-wide")
    }

    @Test("U1: a machine-wide reason makes a per-user selection machine-wide while it holds, then it is per-user again")
    func scopeFollowsReasons() {
        var d = Self.driver()
        _ = ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube"],"users":["@kids"]}"#))
        #expect(d.enforcedUsers == ["youtube": [1001, 1004]])
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":600}"#))
        #expect(d.enforced == ["youtube"] && d.enforcedUsers.isEmpty, "root's block is for everyone")
        d.advance(601)
        #expect(d.enforced == ["youtube"])
        #expect(d.enforcedUsers == ["youtube": [1001, 1004]], "back to the kids only once the machine-wide block ended")
    }

    @Test("§5: a plain member blocks only for themselves, by default too; admins and root for anyone")
    func permissions() {
        var d = Self.driver()
        guard case .error(let e) = d.run(#"start {"selections":["reddit"],"seconds":60,"users":["kid"]}"#, as: Self.parent) else {
            Issue.record("a member scoped a block to another user")
            return
        }
        #expect(e.code == .permissionDenied)
        #expect(e.message.contains("only for themselves") && e.message.contains("blockd-admin"))
        let own = ok(d.run(#"start {"selections":["reddit"],"seconds":60}"#, as: Self.parent))
        #expect(own?["users"] == .array(["parent"]), "a member's default scope is themselves")
        #expect(d.enforcedUsers["reddit"] == [1002])
        #expect(ok(d.run(#"start {"selections":["instagram"],"seconds":60,"users":["kid"]}"#, as: Self.admin)) != nil)
        #expect(d.enforcedUsers["instagram"] == [1001])
    }

    @Test("U1: unknown users and groups, empty groups and URL-path selections are refused with what to do", arguments: [
        (#"start {"selections":["reddit"],"seconds":60,"users":["nobody-here"]}"#, "no user named 'nobody-here'"),
        (#"start {"selections":["reddit"],"seconds":60,"users":["@nogroup"]}"#, "no group named 'nogroup'"),
        (#"start {"selections":["reddit"],"seconds":60,"users":["@empty"]}"#, "has no members"),
        (#"start {"selections":["youtube.com/shorts"],"seconds":60,"users":["kid"]}"#, "browsers enforce for every user"),
    ])
    func refusals(line: String, expected: String) {
        var d = Self.driver()
        guard case .error(let e) = d.run(line) else { Issue.record("accepted: \(line)"); return }
        #expect(e.message.contains(expected), "\(e.message)")
        #expect(d.enforced == [])
    }

    @Test("U1: a block of the same name for other people is neither widened nor narrowed by a start")
    func sameNameOtherScope() {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":600,"users":["kid"]}"#))
        guard case .error(let e) = d.run(#"start {"selections":["reddit"],"seconds":900}"#) else {
            Issue.record("a machine-wide start extended the kid's block")
            return
        }
        #expect(e.code == .exists && e.message.contains("--name"))
    }

    @Test("M3 with U2: kid's more time lifts kid's own view; kid2's homework on the same selection stays, and is neither asked about nor named")
    func moreTimePerUser() {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["steam"],"seconds":3600,"name":"homework","users":["kid2"],"moreTime":{"mode":"no"}}"#))
        _ = ok(d.run(#"start {"selections":["steam"],"seconds":3600,"name":"bedtime","users":["kid"]}"#))
        let g = ok(d.run(#"more {"selection":"steam","seconds":60}"#, as: Self.kid))
        #expect(g?["activities"] == .array(["bedtime"]), "granted over kid's own activity only: \(String(describing: g))")
        #expect(d.enforced == ["steam"] && d.enforcedUsers == ["steam": [1004]], "still blocked for kid2, no longer for kid")
        #expect(Self.news(d, "steam").suffix(1) == ["unlock for [1001]"], "the grant is news for kid alone")
        d.advance(61)
        #expect(d.enforcedUsers == ["steam": [1001, 1004]], "blocked for kid again at the grant's end")
        #expect(Self.news(d, "steam").suffix(1) == ["lock bedtime for [1001]"])
        // kid2's own ask meets kid2's own policy: homework allows no more time.
        guard case .error(let e) = d.run(#"more {"selection":"steam","seconds":60}"#, as: Self.kid2) else {
            Issue.record("kid2 got more time over homework (MoreTime=no)")
            return
        }
        #expect(e.message.contains("homework") && !e.message.contains("bedtime"), "\(e.message)")
    }

    @Test("U2: a machine-wide block over kid's bedtime is news for everyone but kid, and so is its end")
    func machineWideOverPerUser() {
        var d = Self.driver()
        _ = ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["youtube"],"users":["kid"]}"#))
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":600,"name":"focus"}"#))
        #expect(d.entries(.lock).last?.message.hasPrefix("Blocked youtube for everyone but kid: block 'focus', until ") == true,
                "\(d.entries(.lock).map(\.message))")
        d.advance(601)
        #expect(Self.news(d, "youtube") == ["lock bedtime for [1001]", "lock focus for everyone but [1001]", "unlock for everyone but [1001]"])
        #expect(d.entries(.unlock).last?.message == "Unblocked youtube for everyone but kid: timed block 'focus' ended (10m)")
        #expect(d.enforcedUsers == ["youtube": [1001]], "kid's bedtime holds")
    }

    @Test("U2: kid is told of kid's own activities only, never of another user's on the same selection")
    func ownReasonsOnly() {
        var d = Self.driver()
        _ = ok(d.run(#"start {"selections":["steam"],"seconds":600,"name":"homework","users":["kid2"]}"#))
        _ = ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","selections":["steam"],"users":["kid"]}"#))
        #expect(Self.news(d, "steam") == ["lock homework for [1004]", "lock bedtime for [1001]"])
        #expect(d.entries(.lock).last?.message.hasPrefix("Blocked steam for kid: schedule 'bedtime', until ") == true)
        // kid's lock ends at 07:00, kid2's homework at 23:10: each is told their own end.
        let untils = d.events("lock").map { $0["until"]?.string ?? "none" }
        #expect(untils == ["2026-11-29T23:10:00.000+09:00", "2026-11-30T07:00:00.000+09:00"])
    }

    /// The state as the engine saves it (client activities in it), then a new core on it at
    /// `later`: a restart of blockd.
    static func restarted(_ d: FakeEdge, at later: String) -> FakeEdge {
        var state = d.core.state
        state.activities = d.core.registry.activities.compactMap { if case .client = $0.origin { StoredActivity($0) } else { nil } }
        return FakeEdge(at: later, users: users, state: state)
    }

    @Test("U2, T8: after a restart the news is about whom a selection was blocked for: nothing while kid's block runs on, 'for kid' when it ended while blockd was down, 'for everyone but kid' when only the machine-wide block ended",
          arguments: [
              (blocks: [("kidsite", 3600, ["kid"])], news: [String](), journal: [String](), stillOpen: ["1001"]),
              (blocks: [("kidsite", 300, ["kid"])], news: ["unlock for [1001]"],
               journal: ["Unblocked other.test for kid: timed block 'kidsite' ended (5m)"], stillOpen: []),
              (blocks: [("kidsite", 3600, ["kid"]), ("all", 300, [])], news: ["unlock for everyone but [1001]"],
               journal: ["Unblocked other.test for everyone but kid: timed block 'all' ended (5m)"], stillOpen: ["1001"]),
          ])
    func restartNews(blocks: [(String, Int, [String])], news: [String], journal: [String], stillOpen: [String]) throws {
        var d = Self.driver()
        for (name, seconds, users) in blocks {
            let whom = users.isEmpty ? "" : #","users":["# + users.map { "\"\($0)\"" }.joined(separator: ",") + "]"
            _ = try #require(ok(d.run(#"start {"selections":["other.test"],"seconds":"# + "\(seconds)" + #","name":"# + "\"\(name)\"" + whom + "}")))
        }
        var after = Self.restarted(d, at: "2026-11-29T23:10:00+09:00")
        #expect(Self.news(after, "other.test") == news)
        // T8: what ended while blockd was down is named, though the reasons before the restart are not known.
        #expect(after.entries(.unlock).map(\.message) == journal)
        let open = after.core.state.history.open.keys.compactMap(UsageHistory.Open.init(key:)).filter { $0.kind == .blocked && $0.name == "other.test" }
        #expect(open.map(\.user).sorted() == stillOpen, "R1: the report's blocked interval of whom it is no longer blocked for is closed")
        after.advance(60)
        #expect(Self.news(after, "other.test") == news, "nothing more to tell a minute later")
    }
}
