import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// R1 in the engine: the ledger kept in the state file and its log across a restart and a stop
/// (T8). What it records is proved on the core (BlockCoreTests' CoreUsageTests).
@Suite("R1, T8: the usage ledger in the engine's state")
struct UsageHistoryEngineTests {
    static let today = "2026-11-29"  // the harness starts at 13:05 in Tokyo

    func day(_ h: Harness, _ date: String = today) -> UsageHistory.Day { h.run { h.engine.core.state.history.days[date] } ?? UsageHistory.Day() }

    @Test("R1, T8: what was blocked when blockd stopped stays counted across the restart, from the saved state")
    func restart() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":3600,"name":"focus"}"#))
        h.advance(600)
        let saved = try #require({ () -> DaemonState? in
            if case .loaded(let s) = StateStore(directory: h.dir).load(now: h.clock.wallNow()) { return s }
            return nil
        }())
        #expect(saved.history.open.keys.sorted() == ["blocked all youtube"], "the open interval is in the state file")
        h.advance(600)
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        h.advance(2400)
        #expect(day(h).blocked == ["all": ["youtube": 3600]], "the whole hour: the hosts file kept it while blockd was down")
    }

    @Test("R1, §9, T8: a stop (SIGTERM) keeps what ran since the last minute's checkpoint, in the ledger and the limit's use")
    func stopKeepsRunningTime() throws {
        let h = Harness()
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#))
        h.run {
            h.engine.appsRunning([UsageMonitor.Running(uid: 1001, app: "steam")])
            h.engine.usageChanged(running: [LimitUse(limit: "games", uid: 0)])
        }
        h.clock.advance(40)  // no checkpoint yet: that comes at the minute
        h.run { h.engine.saveBeforeExit() }
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(day(h).running == ["1001": ["steam": 40]], "the 40 s before the stop")
        #expect(h.run { h.engine.core.state.usage.used[Self.today]?[UsageLedger.key("games", 0)] } == 40)
    }

    @Test("R1, T8: a state-log record carries only the users whose figures changed, and replays onto the old state to the new one")
    func delta() throws {
        let clock = LocalClock.utc
        var old = DaemonState()
        for (user, n) in [("0", 3), ("1001", 2)] { for _ in 0..<n { old.history.count(.started, user: user, at: Date(timeIntervalSince1970: 1_796_000_000), clock: clock) } }
        old.history.days["2026-10-01"] = UsageHistory.Day()
        var new = old
        new.history.count(.started, user: "1001", at: Date(timeIntervalSince1970: 1_796_000_100), clock: clock)
        new.history.blocked("games", from: [], to: ["1001"], at: Date(timeIntervalSince1970: 1_796_000_100), clock: clock)
        new.history.days["2026-10-01"] = nil
        let d = StateDelta(from: old, to: new)
        let day = try #require(d.historyDays?.values.first)
        #expect(day.counts == ["1001": ["started": 3]], "only kid's count, not root's")
        #expect(d.historyDaysRemove == ["2026-10-01"] && d.historyOpen?.keys.sorted() == ["blocked 1001 games"])
        var replayed = old
        try JSONDecoder().decode(StateDelta.self, from: JSONEncoder().encode(d)).apply(to: &replayed)
        #expect(replayed.history == new.history)
    }
}
