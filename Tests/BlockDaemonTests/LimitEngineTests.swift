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
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.advance(20 * 60)  // a checkpoint happens on each wake-up
        h.clock.advance(30 * 60)  // blockd dies; 30 minutes pass
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        let used = try #require(ok(h.send("limit-list"))?["limits"]?[0]?["used"]?.int)
        #expect(used == 20 * 60)
        h.run { h.engine.usageChanged(running: ["games"]) }
        h.advance(40 * 60)
        #expect(h.enforcer.current == ["steam"])
    }
}
