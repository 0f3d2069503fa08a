import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// R1 in the engine: a session agent's `foreground` word counts for the caller only, and only
/// inside the running time the usage monitor reports for them.
@Suite("R1: foreground time in the engine")
struct ForegroundEngineTests {
    static let today = "2026-11-29"  // the harness starts at 13:05 in Tokyo
    static let steam = "/usr/lib/steam/steam"

    func day(_ h: Harness) -> UsageHistory.Day { h.run { h.engine.core.state.history.days[Self.today] } ?? UsageHistory.Day() }

    func counted(_ r: Response) -> [String]? { ok(r)?["counted"]?.array?.compactMap(\.string) }

    @Test("R1: foreground for an app not running is ignored; it counts once the app runs, and ends when it stops")
    func notRunningIgnored() throws {
        let h = Harness(users: UserScopeTests.users)
        let kid = UserScopeTests.kid
        #expect(counted(h.send(#"foreground {"app":"\#(Self.steam)"}"#, as: kid)) == [], "steam does not run: nothing counted")
        #expect(counted(h.send(#"foreground {"app":"/usr/bin/unfollowed"}"#, as: kid)) == [], "no app the monitor follows")
        h.advance(60)
        #expect(day(h).foreground.isEmpty)
        _ = h.send(#"foreground {"app":"\#(Self.steam)"}"#, as: kid)
        h.run { h.engine.appsRunning([UsageMonitor.Running(uid: 1001, app: "steam")]) }  // it starts under the focus reported
        h.advance(60)  // the minute's checkpoint
        #expect(day(h).foreground == ["1001": ["steam": 60]], "checkpointed with the running time")
        #expect(counted(h.send("foreground {}", as: kid)) == [])
        h.advance(60)
        #expect(counted(h.send(#"foreground {"app":"\#(Self.steam)"}"#, as: kid)) == ["steam"])
        h.advance(30)
        h.run { h.engine.appsRunning([]) }  // steam exits: its focus ends too
        h.advance(60)
        #expect(day(h).running == ["1001": ["steam": 150]])
        #expect(day(h).foreground == ["1001": ["steam": 90]])
        #expect(h.run { h.engine.core.state.history.open }.isEmpty)
        let report = ok(h.send(#"report {"days":1}"#, as: kid))
        #expect(report?["days"]?.array?.first?["foreground"] == ["steam": 90], "R2: the report's foreground is the ledger's")
    }

    @Test("R1: foreground time is the caller's: another user's word about the same app counts for no one else")
    func callersOwn() throws {
        let h = Harness(users: UserScopeTests.users)
        h.run { h.engine.appsRunning([UsageMonitor.Running(uid: 1001, app: "steam"), UsageMonitor.Running(uid: 0, app: "steam")]) }
        #expect(counted(h.send(#"foreground {"app":"\#(Self.steam)"}"#, as: UserScopeTests.kid2)) == [], "steam runs for 1001 and root, not 1004")
        #expect(counted(h.send(#"foreground {"app":"\#(Self.steam)"}"#)) == ["steam"], "root's own steam")
        h.advance(120)
        #expect(day(h).foreground == ["0": ["steam": 120]])
        #expect(h.run { h.engine.core.state.history.open.keys.filter { !$0.hasPrefix("used ") }.sorted() } == ["foreground 0 steam", "running 0 steam", "running 1001 steam"])
    }

    @Test("R1: a bad foreground word is refused with what is accepted, and records nothing")
    func refused() throws {
        let h = Harness()
        guard case .error(let e) = h.send(#"foreground {"app":"steam"}"#) else { Issue.record("a relative path was accepted"); return }
        #expect(e.code == .usage && e.message.contains("absolute path"))
        #expect(h.run { h.engine.core.state.history.open }.isEmpty && h.run { h.engine.core.state.failures }.isEmpty)
    }

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
