import Foundation
import Testing
@testable import BlockCore

/// §9 per person: a limit gives each person it is for their own allowance, counted from their
/// own processes, and blocks them one by one; what each is told of it is their own. The
/// family: kid and kid2 (members), parent (an administrator), and root's limit for everyone.
/// Each test failed on the code before, where a limit was one pool for everybody (what it did
/// is said in each).
@Suite("§9: each person's own allowance")
struct LimitPerPersonTests {
    static let users = FakeEdge.users(["kid": 1001, "parent": 1000, "kid2": 1003], groups: ["blockd-admin": [1000]])
    static let kid = Peer(uid: 1001, mayModify: true)
    static let kid2 = Peer(uid: 1003, mayModify: true)
    static var parent: Peer { var p = Peer(uid: 1000, mayModify: true); p.isAdmin = true; return p }

    static func use(_ d: inout FakeEdge, _ uids: [UInt32]) {
        d.usage(running: Set(uids.map { LimitUse(limit: "shared", uid: $0) }))
    }

    @Test("§9: a limit for everyone counts each person's own time and blocks only whoever used theirs up (kid's and kid2's use used to use up the parent's allowance too)")
    func eachTheirOwn() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"limit-add {"name":"shared","seconds":20,"selections":["steam"]}"#)))
        Self.use(&d, [1001, 1003])  // both at once
        d.advance(6)
        Self.use(&d, [1001])  // kid2 stops after 6 s
        d.advance(13.999)
        #expect(d.enforced == [], "kid has used 19.999 s of kid's own 20 s; kid2's 6 s are kid2's")
        d.advance(0.001)
        #expect(d.enforced == ["steam"] && d.enforcedUsers == ["steam": [1001]], "blocked for kid alone: \(d.enforcedUsers)")
        Self.use(&d, [])
        let reached = try #require(d.events("limit").first)
        #expect(reached["users"] == [1001], "the event is kid's: \(reached)")
        #expect(d.entries(.limit).first?.message == "Daily limit 'shared' reached (20s of use): steam blocked for kid until Mon 30 Nov 00:00:00")
        // kid2 goes on with kid2's own 14 s left; the parent, who ran nothing, has all 20.
        Self.use(&d, [1003])
        d.advance(13.999)
        #expect(d.enforcedUsers == ["steam": [1001]])
        d.advance(0.001)
        #expect(d.enforcedUsers == ["steam": [1001, 1003]], "kid2 reaches kid2's own: \(d.enforcedUsers)")
        Self.use(&d, [])
        // What each is told of it: their own use, no one else's.
        let kids = try #require(ok(d.run("limit-list", as: Self.kid))?["limits"]?[0])
        #expect(kids["used"] == 20 && kids["left"] == 0 && kids["active"] == true, "\(kids)")
        d.advance(60)
        let parents = try #require(ok(d.run("limit-list", as: Self.parent))?["limits"]?[0])
        #expect(parents["used"] == 0 && parents["people"]?.array?.map { $0["used"] } == [20, 20],
                "the parent's own use (none), and each person's listed: \(parents)")
        let report = try #require(ok(d.run(#"report {"days":1}"#, as: Self.kid2)))
        #expect(report["days"]?[0]?["limits"]?["shared"]?["used"] == 20, "kid2's own 20 s in kid2's report: \(report)")
        // The day ends: everyone's allowance is whole again.
        d.advance(at("2026-11-30T00:00:00+09:00").timeIntervalSince(d.now))
        #expect(d.enforced == [])
    }

    @Test("§9, M3: more time on a limit is the asker's own allowance; the others stay where they were (it used to add to the pool for everyone)")
    func moreTimeIsTheAskers() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"limit-add {"name":"shared","seconds":20,"selections":["steam"],"moreTime":{"mode":"self"}}"#)))
        Self.use(&d, [1001, 1003])
        d.advance(20)
        Self.use(&d, [])
        #expect(d.enforcedUsers == ["steam": [1001, 1003]])
        let g = try #require(ok(d.run(#"more {"selection":"steam","seconds":10}"#, as: Self.kid)))
        #expect(g["state"] == "granted" && g["allowance"] == ["shared"], "\(g)")
        #expect(d.enforcedUsers == ["steam": [1003]], "kid's 10 s more are kid's: \(d.enforcedUsers)")
        Self.use(&d, [1001, 1003])
        d.advance(10)
        #expect(d.enforcedUsers == ["steam": [1001, 1003]], "kid's 10 s used up, kid2 never had them")
    }

    @Test("§9: a limit for some people counts each of them apart; the others are never counted or blocked")
    func scopedPerPerson() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"limit-add {"name":"shared","seconds":20,"selections":["steam"],"users":["kid","kid2"]}"#, as: Self.parent)))
        Self.use(&d, [1001, 1000])  // the parent's use is no one's under this limit
        d.advance(20)
        #expect(d.enforcedUsers == ["steam": [1001]], "\(d.enforcedUsers)")
        #expect(d.core.state.usage.used.values.allSatisfy { $0[UsageLedger.key("shared", 1000)] == nil }, "the parent is not counted")
    }

    @Test("§9: an older state's pool for the whole limit counts for everyone it is for on that day, and once used up blocks them all")
    func olderPool() throws {
        func state(pool: Double) -> DaemonState {
            var state = DaemonState()
            var limit = Limit(name: "shared", selections: ["steam"], seconds: 20)
            limit.origin = .client(uid: 0)
            state.activities = [.limit(limit)]
            state.usage.used["2026-11-29"] = ["shared": pool]  // written by a blockd with one pool per limit
            return state
        }
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users, state: state(pool: 15))
        Self.use(&d, [1001])
        d.advance(4.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforcedUsers == ["steam": [1001]], "the pool's 15 s and kid's own 5 s: kid's 20 s are used up, not kid2's")
        let used = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users, state: state(pool: 20))
        #expect(used.enforced == ["steam"] && used.enforcedUsers["steam"] == nil, "a pool used up blocks everyone, as it did")
    }
}
