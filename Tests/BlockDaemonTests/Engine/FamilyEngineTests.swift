import BlockCore
import Foundation
import Testing
@testable import BlockDaemon
import BlockTestSupport

/// A1 through the engine, as a family would meet it: kid and kid2 (members of blockd), parent
/// (blockd-admin): what a member sees of `failures` and `status`, which the engine renders.
/// What A1 decides is proved on the core (BlockCoreTests' CoreFamilyTests).
@Suite("A1: a parent's block is the parent's, through the engine")
struct FamilyEngineTests {
    static let users = UsersTable.holding(users: ["kid": 1001, "parent": 1000, "kid2": 1003],
                                          groups: ["blockd-admin": [1000], "kids": [1001, 1003]])
    static let kid = Peer(uid: 1001, mayModify: true)
    static let kid2 = Peer(uid: 1003, mayModify: true)
    static var parent: Peer { var p = Peer(uid: 1000, mayModify: true); p.isAdmin = true; return p }

    func harness(config: ConfigSet = .builtIn) -> Harness { Harness(now: "2026-11-29T20:00:00+09:00", config: config, users: Self.users) }

    @Test("A1: a member sees and clears only their own (kid2 used to read kid's request and reason, and everyone's failures)")
    func views() throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 8
        let h = harness(config: config)
        _ = try #require(ok(h.send(#"schedule-add {"name":"games","window":"19:00-23:00","selections":["steam"],"users":["kid"]}"#, as: Self.parent)))
        _ = try #require(ok(h.send(#"more {"selection":"steam","seconds":300,"reason":"my secret"}"#, as: Self.kid)))
        for i in 0..<4 { _ = h.send(#"start {"selections":["reddit"],"seconds":60,"name":"k\#(i)"}"#, as: Self.kid) }  // the 4th passes half the cap
        let kid2Requests = try #require(ok(h.send("requests", as: Self.kid2)))
        #expect(kid2Requests["requests"] == .array([]), "\(kid2Requests)")
        let kid2Failures = try #require(ok(h.send("failures", as: Self.kid2)))
        #expect(kid2Failures["failures"] == .array([]), "kid's are kid's: \(kid2Failures)")
        // kid's own failure (T4: kid's refusals past the quota are not failures at all).
        h.run { h.engine.recordFailure(CoreError(.internal, "kid's own"), uid: Self.kid.uid, activity: nil, now: h.clock.wallNow()) }
        let kidFailures = try #require(ok(h.send("failures", as: Self.kid)))
        #expect(kidFailures["failures"]?.array?.count == 1)
        let parentRequests = try #require(ok(h.send("requests", as: Self.parent)))
        #expect(parentRequests["requests"]?.array?.first?["user"] == "kid")
        _ = try #require(ok(h.send("failures-clear", as: Self.kid2)))
        #expect(ok(h.send("failures", as: Self.kid))?["failures"]?.array?.count == 1, "kid2's clear leaves kid's")
        let status = try #require(ok(h.send("status", as: Self.kid2)))
        #expect(status["requests"] == .array([]) && status["counts"]?["activities"] == .int(0), "\(status["counts"] ?? .null)")
    }
}
