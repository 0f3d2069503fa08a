import Foundation
import Testing
@testable import BlockCore

/// R1, R2 on the core: blocked time and counts recorded as blocks start, stop and end, apps'
/// running and foreground time, and the report answered from the ledger. What is kept across
/// a restart and written to the state log stays with the engine's harness.
@Suite("R1, R2: the usage ledger, decided by the core")
struct CoreUsageTests {
    static let today = "2026-11-29"  // the driver starts at 13:05 in Tokyo
    static let steam = "/usr/lib/steam/steam"
    static let kid = CoreUserScopeTests.kid

    static func day(_ d: FakeEdge, _ date: String = today) -> UsageHistory.Day { d.core.state.history.days[date] ?? UsageHistory.Day() }

    @Test("R1: a block for everyone stopped early: its blocked minutes under `all`, started and stoppedEarly under the one who did it")
    func startStop() {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":600,"name":"focus"}"#))
        d.advance(300)
        _ = ok(d.run(#"stop {"name":"focus"}"#))
        #expect(Self.day(d).blocked == ["all": ["youtube": 300]])
        #expect(Self.day(d).counts == ["0": ["started": 1, "stoppedEarly": 1]])
        #expect(d.core.state.history.open.isEmpty)
    }

    @Test("R1: a per-user block's time is its users', and a block that ends by itself closes at its end")
    func perUser() {
        var d = FakeEdge(users: CoreUserScopeTests.users)
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":120,"users":["@kids"]}"#))
        d.advance(120)  // the timer fires at the block's end
        #expect(Self.day(d).blocked == ["1001": ["youtube": 120], "1004": ["youtube": 120]])
    }

    @Test("R1: more time asked and granted counts for the asker; ReportDays= bounds the days kept")
    func moreTimeAndBound() throws {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":3600}"#))
        _ = d.run(#"more {"selection":"youtube","seconds":300}"#)
        #expect(Self.day(d).counts["0"]?["asked"] == 1)
        var old = UsageHistory.Day()
        old.counts = ["0": ["started": 1]]
        d.core.state.history.days["2026-10-01"] = old
        d.core.state.history.days["2026-10-26"] = old  // 35 days before the 29th of November, today included: the last kept
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":60}"#))
        #expect(d.core.state.history.days.keys.sorted() == ["2026-10-26", Self.today])
    }

    @Test("R2: report answers from the ledger; a member gets their own view, and another's or the machine's is refused")
    func report() throws {
        var d = FakeEdge(users: CoreUserScopeTests.users)
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":600}"#))
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":300,"users":["kid"]}"#))
        d.advance(300)  // the timer fires at each end
        d.advance(300)
        d.shieldHit(ShieldHit(kind: .deniedLaunch, selection: "youtube", path: "/usr/bin/yt", uid: 1001))
        d.shieldHit(ShieldHit(kind: .deniedLaunch, selection: "youtube", path: "/usr/bin/yt", uid: 1002))
        d.shieldHit(ShieldHit(kind: .tamper, selection: "reddit", path: "/etc/hosts"))
        let mine = try #require(ok(d.run(#"report {"days":1}"#, as: Self.kid)))
        #expect(mine["user"] == 1001 && mine["days"]?.array?.first?["blocked"] == ["reddit": 300, "youtube": 600], "\(mine)")
        #expect(mine["days"]?.array?.first?["shieldHits"] == ["youtube": 1], "the shield's hits on kid's own processes only")
        let machine = try #require(ok(d.run(#"report {"days":1,"allUsers":true}"#)))
        #expect(machine["user"] == nil && machine["days"]?.array?.first?["blocked"] == ["youtube": 600])
        #expect(machine["days"]?.array?.first?["counts"] == ["started": 2])
        #expect(machine["days"]?.array?.first?["shieldHits"] == ["reddit": 1, "youtube": 2], "everyone's, an undone edit included")
        for line in [#"report {"allUsers":true}"#, #"report {"user":"parent"}"#] {
            guard case .error(let e) = d.run(line, as: Self.kid) else { Issue.record("\(line) answered for a member"); continue }
            #expect(e.code == .permissionDenied)
        }
    }

    @Test("R1: an app's running time, as the usage monitor reports it, is its person's, and is in the report")
    func appTime() throws {
        var d = FakeEdge()
        d.appsRunning([RunningApp(uid: 1001, app: "steam")])
        d.advance(60)  // the timer armed for the minute's checkpoint fires
        #expect(d.core.state.history.days[Self.today]?.running["1001"]?["steam"] == 60, "checkpointed each minute while it runs")
        d.advance(60)
        d.appsRunning([])
        #expect(Self.day(d).running == ["1001": ["steam": 120]])
        let report = try #require(ok(d.run(#"report {"days":1,"allUsers":true}"#)))
        #expect(report["days"]?.array?.first?["apps"] == ["steam": 120])
    }

    @Test("R1, B2: once login sessions are followed, an app counts only while its person is at the screen: locked, idle past IdleSeconds or logged out stops it; others' sessions do not count for them; without logind every app counts")
    func appTimeAtScreen() throws {
        var d = FakeEdge(users: CoreUserScopeTests.users)
        let kid = LoginSession(id: "3", uid: 1001, active: true)
        d.sessions([kid])
        d.appsRunning([RunningApp(uid: 1001, app: "Firefox ESR"), RunningApp(uid: 1002, app: "steam")])
        d.advance(60)
        var locked = kid
        locked.locked = true
        d.sessions([locked, LoginSession(id: "4", uid: 1000, active: true)])  // a parent at the screen is not 1002
        d.advance(120)  // locked: nothing counts
        d.sessions([kid])
        d.advance(30)
        var idle = kid
        idle.idleSince = d.now
        d.sessions([idle])
        d.advance(ScreenTime.idleSeconds)  // counts through the idle grace: the timer wakes at its end
        d.advance(300)
        d.sessions([])
        d.advance(60)
        d.sessions(nil)  // logind stopped answering: who is at the screen is not known, every app counts
        d.advance(10)
        d.appsRunning([])
        let day = Self.day(d)
        #expect(day.running == ["1001": ["Firefox ESR": 100 + ScreenTime.idleSeconds], "1002": ["steam": 10]], "\(day.running)")
        #expect(day.used["1001"]?[UsageHistory.anyApp] == 100 + ScreenTime.idleSeconds)
    }

    @Test("R1: a named selection's time is its apps' together, not added up; a limit's used time and allowance are in the report")
    func selectionTime() throws {
        var d = FakeEdge(users: CoreUserScopeTests.users)
        _ = ok(d.run(#"limit-add {"name":"chat","seconds":3600,"selections":["discord"]}"#))  // its apps are followed now
        d.usage(running: ["chat"], as: 1001)
        d.appsRunning([RunningApp(uid: 1001, app: "discord"), RunningApp(uid: 1001, app: "Discord")])
        d.advance(60)
        d.appsRunning([RunningApp(uid: 1001, app: "Discord")])
        d.advance(60)
        d.appsRunning([])
        d.usage(running: [], as: 1001)
        #expect(Self.day(d).used == ["1001": ["discord": 120, UsageHistory.anyApp: 120]], "two apps at once count once")
        #expect(Self.day(d).running == ["1001": ["discord": 60, "Discord": 120]])
        let report = try #require(ok(d.run(#"report {"days":1}"#, as: Self.kid)))
        let today = try #require(report["days"]?.array?.first)
        #expect(today["used"] == ["discord": 120] && today["limits"] == ["chat": ["used": 120, "allowance": 3600, "selections": ["discord"]]],
                "\(today)")
        let machine = try #require(ok(d.run(#"report {"period":"week","allUsers":true}"#)))
        #expect(machine["period"] == "week" && machine["days"]?.array?.last?["users"] == ["1001": 120])
    }
}

/// R1: a session agent's `foreground` word counts for the caller only, and only inside the
/// running time the usage monitor reports for them.
@Suite("R1: foreground time, decided by the core")
struct CoreForegroundTests {
    static func counted(_ r: Response) -> [String]? { ok(r)?["counted"]?.array?.compactMap(\.string) }
    static let steam = CoreUsageTests.steam

    @Test("R1: foreground for an app not running is ignored; it counts once the app runs, and ends when it stops")
    func notRunningIgnored() throws {
        var d = FakeEdge(users: CoreUserScopeTests.users)
        let kid = CoreUserScopeTests.kid
        #expect(Self.counted(d.run(#"foreground {"app":"\#(Self.steam)"}"#, as: kid)) == [], "steam does not run: nothing counted")
        #expect(Self.counted(d.run(#"foreground {"app":"/usr/bin/unfollowed"}"#, as: kid)) == [], "no app the monitor follows")
        d.advance(60)
        #expect(CoreUsageTests.day(d).foreground.isEmpty)
        _ = d.run(#"foreground {"app":"\#(Self.steam)"}"#, as: kid)
        d.appsRunning([RunningApp(uid: 1001, app: "steam")])  // it starts under the focus reported
        d.advance(60)  // the minute's checkpoint
        #expect(CoreUsageTests.day(d).foreground == ["1001": ["steam": 60]], "checkpointed with the running time")
        #expect(Self.counted(d.run("foreground {}", as: kid)) == [])
        d.advance(60)
        #expect(Self.counted(d.run(#"foreground {"app":"\#(Self.steam)"}"#, as: kid)) == ["steam"])
        d.advance(30)
        d.appsRunning([])  // steam exits: its focus ends too
        d.advance(60)
        #expect(CoreUsageTests.day(d).running == ["1001": ["steam": 150]])
        #expect(CoreUsageTests.day(d).foreground == ["1001": ["steam": 90]])
        #expect(d.core.state.history.open.isEmpty)
        let report = ok(d.run(#"report {"days":1}"#, as: kid))
        #expect(report?["days"]?.array?.first?["foreground"] == ["steam": 90], "R2: the report's foreground is the ledger's")
    }

    @Test("R1: foreground time is the caller's: another user's word about the same app counts for no one else")
    func callersOwn() throws {
        var d = FakeEdge(users: CoreUserScopeTests.users)
        d.appsRunning([RunningApp(uid: 1001, app: "steam"), RunningApp(uid: 0, app: "steam")])
        #expect(Self.counted(d.run(#"foreground {"app":"\#(Self.steam)"}"#, as: CoreUserScopeTests.kid2)) == [], "steam runs for 1001 and root, not 1004")
        #expect(Self.counted(d.run(#"foreground {"app":"\#(Self.steam)"}"#)) == ["steam"], "root's own steam")
        d.advance(120)
        #expect(CoreUsageTests.day(d).foreground == ["0": ["steam": 120]])
        #expect(d.core.state.history.open.keys.filter { !$0.hasPrefix("used ") }.sorted() == ["foreground 0 steam", "running 0 steam", "running 1001 steam"])
    }

    @Test("R1: a bad foreground word is refused with what is accepted, and records nothing")
    func refused() throws {
        var d = FakeEdge()
        guard case .error(let e) = d.run(#"foreground {"app":"steam"}"#) else { Issue.record("a relative path was accepted"); return }
        #expect(e.code == .usage && e.message.contains("absolute path"))
        #expect(d.core.state.history.open.isEmpty && d.core.state.failures.isEmpty)
    }
}
