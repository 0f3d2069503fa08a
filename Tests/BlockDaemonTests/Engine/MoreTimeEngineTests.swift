import BlockCore
import Foundation
import Testing
@testable import BlockDaemon

/// M3 in the engine: grants across a restart (T8). What more time decides is proved on the
/// core (BlockCoreTests' CoreMoreTimeTests).
@Suite("M3, T8: more time across a restart of the engine")
struct MoreTimeEngineTests {
    static let asker = Peer(uid: 1000, mayModify: true)
    /// The asker as the user database has them: an account without a name.
    static let users = UsersTable.holding()

    @Test("M3, T8: a grant that ended while blockd was down is not extended; a running one survives a restart")
    func restart() throws {
        let h = Harness(now: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = ok(h.send(#"start {"selections":["steam"],"seconds":3600}"#, as: Self.asker))
        _ = ok(h.send(#"more {"selection":"steam","seconds":300}"#, as: Self.asker))
        h.clock.advance(100)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == [])
        h.clock.advance(400)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == ["steam"])
        #expect(h.entries(.moreEnded).count == 1)
    }
}
