import BlockCore
import Foundation
import Testing
@testable import BlockDaemon

/// §9 in the engine: the day's usage across a restart (T8). What limits decide is proved on
/// the core (BlockCoreTests' CoreLimitTests).
@Suite("§9, T8: limits across a restart of the engine")
struct LimitEngineTests {
    @Test("§9: a restart keeps the day's usage and the reached limit; time while down is not counted")
    func restart() throws {
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00")
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#))
        h.run { h.engine.usageChanged(running: [LimitUse(limit: "games", uid: 0)]) }
        h.advance(20 * 60)  // a checkpoint happens on each wake-up
        h.clock.advance(30 * 60)  // blockd dies; 30 minutes pass
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        let used = try #require(ok(h.send("limit-list"))?["limits"]?[0]?["used"]?.int)
        #expect(used == 20 * 60)
        h.run { h.engine.usageChanged(running: [LimitUse(limit: "games", uid: 0)]) }
        h.advance(40 * 60)
        #expect(h.enforcer.current == ["steam"])
    }

    @Test("§9, A1: through the engine, limit list and status give each person their own use of a limit for everyone, and block only who used theirs up")
    func perPersonViews() throws {
        let users = UsersTable.holding(users: ["kid": 1001, "parent": 1000, "kid2": 1003], groups: ["blockd-admin": [1000]])
        let kid = Peer(uid: 1001, mayModify: true), kid2 = Peer(uid: 1003, mayModify: true)
        let h = Harness(now: "2026-11-29T20:00:00.000+09:00", users: users)
        _ = try #require(ok(h.send(#"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#)))
        h.run { h.engine.usageChanged(running: [LimitUse(limit: "games", uid: 1001), LimitUse(limit: "games", uid: 1003)]) }
        h.advance(20)
        h.run { h.engine.usageChanged(running: [LimitUse(limit: "games", uid: 1001)]) }
        h.advance(40)
        let kids = try #require(ok(h.send("limit-list", as: kid))?["limits"]?[0])
        let kid2s = try #require(ok(h.send("limit-list", as: kid2))?["limits"]?[0])
        #expect(kids["used"] == 60 && kids["active"] == true, "\(kids)")
        #expect(kid2s["used"] == 20 && kid2s["left"] == 40 && kid2s["active"] == false, "kid2's own, not kid's: \(kid2s)")
        let kidStatus = try #require(ok(h.send("status", as: kid)))
        let kid2Status = try #require(ok(h.send("status", as: kid2)))
        #expect(kidStatus["blocked"]?[0]?["selection"] == "steam", "\(kidStatus["blocked"] ?? .null)")
        #expect(kid2Status["blocked"] == .array([]), "steam is not blocked for kid2: \(kid2Status["blocked"] ?? .null)")
        // Root's own use (none) on top, and each person's day listed (an administrator's view).
        let roots = try #require(ok(h.send("limit-list"))?["limits"]?[0])
        #expect(roots["used"] == 0 && roots["left"] == 60, "root's own: \(roots)")
        #expect(roots["people"] == [["user": "kid", "uid": 1001, "used": 60, "left": 0, "blocked": true],
                                    ["user": "kid2", "uid": 1003, "used": 20, "left": 40, "blocked": false]], "\(roots["people"] ?? .null)")
        #expect(kids["people"] == nil && kid2s["people"] == nil, "a member is shown no one else's")
        let all = try #require(ok(h.send(#"status {"allUsers":true}"#)))
        #expect(all["blocked"]?[0]?["users"] == ["kid"], "root sees whom it blocks: \(all["blocked"] ?? .null)")
    }
}
