import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// R1 in the engine: blocked time and counts recorded as blocks start, stop and end, kept in the
/// state file across a restart (T8), bounded by ReportDays=.
@Suite("R1: the usage ledger in the engine")
struct UsageHistoryEngineTests {
    static let today = "2026-11-29"  // the harness starts at 13:05 in Tokyo

    func day(_ h: Harness, _ date: String = today) -> UsageHistory.Day { h.run { h.engine.core.state.history.days[date] } ?? UsageHistory.Day() }

    @Test("R1: a block for everyone stopped early: its blocked minutes under `all`, started and stoppedEarly under the one who did it")
    func startStop() {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":600,"name":"focus"}"#))
        h.advance(300)
        _ = ok(h.send(#"stop {"name":"focus"}"#))
        #expect(day(h).blocked == ["all": ["youtube": 300]])
        #expect(day(h).counts == ["0": ["started": 1, "stoppedEarly": 1]])
        #expect(h.run { h.engine.core.state.history.open }.isEmpty)
    }

    @Test("R1: a per-user block's time is its users', and a block that ends by itself closes at its end")
    func perUser() {
        let h = Harness(users: UserScopeTests.users)
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":120,"users":["@kids"]}"#))
        h.advance(120)  // the timer fires at the block's end
        #expect(day(h).blocked == ["1001": ["youtube": 120], "1004": ["youtube": 120]])
    }

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

    @Test("R1: more time asked and granted counts for the asker; ReportDays= bounds the days kept")
    func moreTimeAndBound() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":3600}"#))
        _ = h.send(#"more {"selection":"youtube","seconds":300}"#)
        #expect(day(h).counts["0"]?["asked"] == 1)
        var old = UsageHistory.Day()
        old.counts = ["0": ["started": 1]]
        h.run {
            h.engine.core.state.history.days["2026-10-01"] = old
            h.engine.core.state.history.days["2026-10-26"] = old  // 35 days before the 29th of November, today included: the last kept
        }
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":60}"#))
        #expect(h.run { h.engine.core.state.history.days.keys.sorted() } == ["2026-10-26", Self.today])
    }

    @Test("R2: report answers from the ledger; a member gets their own view, and another's or the machine's is refused")
    func report() throws {
        let h = Harness(users: UserScopeTests.users)
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":600}"#))
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":300,"users":["kid"]}"#))
        h.advance(300)  // the timer fires at each end
        h.advance(300)
        h.run {
            h.engine.recordShieldHit(ShieldHit(kind: .deniedLaunch, selection: "youtube", path: "/usr/bin/yt", uid: 1001))
            h.engine.recordShieldHit(ShieldHit(kind: .deniedLaunch, selection: "youtube", path: "/usr/bin/yt", uid: 1002))
            h.engine.recordShieldHit(ShieldHit(kind: .tamper, selection: "reddit", path: "/etc/hosts"))
        }
        let mine = try #require(ok(h.send(#"report {"days":1}"#, as: UserScopeTests.kid)))
        #expect(mine["user"] == 1001 && mine["days"]?.array?.first?["blocked"] == ["reddit": 300, "youtube": 600], "\(mine)")
        #expect(mine["days"]?.array?.first?["shieldHits"] == ["youtube": 1], "the shield's hits on kid's own processes only")
        let machine = try #require(ok(h.send(#"report {"days":1,"allUsers":true}"#)))
        #expect(machine["user"] == nil && machine["days"]?.array?.first?["blocked"] == ["youtube": 600])
        #expect(machine["days"]?.array?.first?["counts"] == ["started": 2])
        #expect(machine["days"]?.array?.first?["shieldHits"] == ["reddit": 1, "youtube": 2], "everyone's, an undone edit included")
        for line in [#"report {"allUsers":true}"#, #"report {"user":"parent"}"#] {
            guard case .error(let e) = h.send(line, as: UserScopeTests.kid) else { Issue.record("\(line) answered for a member"); continue }
            #expect(e.code == .permissionDenied)
        }
    }

    @Test("R1: an app's running time, as the usage monitor reports it, is its person's, and is in the report")
    func appTime() throws {
        let h = Harness()
        h.run { h.engine.appsRunning([UsageMonitor.Running(uid: 1001, app: "steam")]) }
        h.advance(60)  // the timer armed for the minute's checkpoint fires
        #expect(h.run { h.engine.core.state.history.days[Self.today]?.running["1001"]?["steam"] } == 60, "checkpointed each minute while it runs")
        h.advance(60)
        h.run { h.engine.appsRunning([]) }
        #expect(day(h).running == ["1001": ["steam": 120]])
        let report = try #require(ok(h.send(#"report {"days":1,"allUsers":true}"#)))
        #expect(report["days"]?.array?.first?["apps"] == ["steam": 120])
    }

    @Test("R1: a named selection's time is its apps' together, not added up; a limit's used time and allowance are in the report")
    func selectionTime() throws {
        let h = Harness(users: UserScopeTests.users)
        _ = ok(h.send(#"limit-add {"name":"chat","seconds":3600,"selections":["discord"]}"#))  // its apps are followed now
        let kid = UInt32(1001)
        h.run {
            h.engine.usageChanged(running: ["chat"])
            h.engine.appsRunning([UsageMonitor.Running(uid: kid, app: "discord"), UsageMonitor.Running(uid: kid, app: "Discord")])
        }
        h.advance(60)
        h.run { h.engine.appsRunning([UsageMonitor.Running(uid: kid, app: "Discord")]) }
        h.advance(60)
        h.run {
            h.engine.appsRunning([])
            h.engine.usageChanged(running: [])
        }
        #expect(day(h).used == ["1001": ["discord": 120, UsageHistory.anyApp: 120]], "two apps at once count once")
        #expect(day(h).running == ["1001": ["discord": 60, "Discord": 120]])
        let report = try #require(ok(h.send(#"report {"days":1}"#, as: UserScopeTests.kid)))
        let today = try #require(report["days"]?.array?.first)
        #expect(today["used"] == ["discord": 120] && today["limits"] == ["chat": ["used": 120, "allowance": 3600, "selections": ["discord"]]],
                "\(today)")
        let machine = try #require(ok(h.send(#"report {"period":"week","allUsers":true}"#)))
        #expect(machine["period"] == "week" && machine["days"]?.array?.last?["users"] == ["1001": 120])
    }

    @Test("R1, §9, T8: a stop (SIGTERM) keeps what ran since the last minute's checkpoint, in the ledger and the limit's use")
    func stopKeepsRunningTime() throws {
        let h = Harness()
        _ = ok(h.send(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#))
        h.run {
            h.engine.appsRunning([UsageMonitor.Running(uid: 1001, app: "steam")])
            h.engine.usageChanged(running: ["games"])
        }
        h.clock.advance(40)  // no checkpoint yet: that comes at the minute
        h.run { h.engine.saveBeforeExit() }
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        #expect(day(h).running == ["1001": ["steam": 40]], "the 40 s before the stop")
        #expect(h.run { h.engine.core.state.usage.used[Self.today]?["games"] } == 40)
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
