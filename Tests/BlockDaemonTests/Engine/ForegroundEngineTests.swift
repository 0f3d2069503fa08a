import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// R1 in the engine: foreground figures in the state log and across a restart. What a
/// `foreground` word counts is proved on the core (BlockCoreTests' CoreForegroundTests).
@Suite("R1, T8: foreground time in the engine's state")
struct ForegroundEngineTests {
    static let today = "2026-11-29"  // the harness starts at 13:05 in Tokyo
    static let steam = "/usr/lib/steam/steam"

    func day(_ h: Harness) -> UsageHistory.Day { h.run { h.engine.core.state.history.days[Self.today] } ?? UsageHistory.Day() }

    func counted(_ r: Response) -> [String]? { ok(r)?["counted"]?.array?.compactMap(\.string) }

    @Test("R1, T8: foreground figures ride the state log and replay onto the old state to the new one; a restart forgets the focus")
    func stateLogAndRestart() throws {
        let h = Harness()
        h.run { h.engine.appsRunning([UsageMonitor.Running(uid: 0, app: "supertux2"), UsageMonitor.Running(uid: 0, app: "/usr/games/supertux2")]) }
        #expect(Set(counted(h.send(#"foreground {"app":"/usr/games/supertux2"}"#)) ?? []) == ["supertux2", "/usr/games/supertux2"])
        let before = h.run { h.engine.core.state }
        h.advance(60)
        let after = h.run { h.engine.core.state }
        let d = StateDelta(from: before, to: after)
        #expect(d.historyDays?[Self.today]?.foreground == ["0": ["supertux2": 60, "/usr/games/supertux2": 60]])
        var replayed = before
        try JSONDecoder().decode(StateDelta.self, from: JSONEncoder().encode(d)).apply(to: &replayed)
        #expect(replayed.history == after.history)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(h.run { h.engine.core.state.history.open }.isEmpty, "nothing runs or has the focus until it is seen again")
        #expect(day(h).foreground == ["0": ["supertux2": 60, "/usr/games/supertux2": 60]], "what was counted stays")
    }
}
