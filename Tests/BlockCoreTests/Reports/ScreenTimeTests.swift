import Foundation
import Testing
@testable import BlockCore

/// Screen time: a person is at the screen while some local session of theirs is active,
/// unlocked and not idle for longer than ScreenTime.idleSeconds; sessions at once count once;
/// remote sessions and the greeter's do not count. Counted per person and local day.
@Suite("Screen time: login sessions counted per person and day")
struct ScreenTimeTests {
    static let t0 = at("2026-11-29T13:00:00+09:00")

    @Test("one session: active and unlocked counts; locked or in the background does not; idle counts for its grace, then stops at its end; ssh and the greeter are nobody at the screen",
          arguments: [
              (LoginSession(id: "1", uid: 1001, active: true), ScreenTime.Presence(counting: true, stoppedAt: nil, until: nil) as ScreenTime.Presence?),
              (LoginSession(id: "1", uid: 1001, active: true, locked: true), ScreenTime.Presence(counting: false, stoppedAt: t0, until: nil)),
              (LoginSession(id: "1", uid: 1001, active: false), ScreenTime.Presence(counting: false, stoppedAt: t0, until: nil)),
              (LoginSession(id: "1", uid: 1001, active: true, idleSince: t0 - 100), ScreenTime.Presence(counting: true, stoppedAt: nil, until: t0 + 200)),
              (LoginSession(id: "1", uid: 1001, active: true, idleSince: t0 - 400), ScreenTime.Presence(counting: false, stoppedAt: t0 - 100, until: nil)),
              (LoginSession(id: "1", uid: 1001, active: true, remote: true), nil),
              (LoginSession(id: "1", uid: 1001, active: true, isUser: false), nil),
          ])
    func oneSession(session: LoginSession, presence: ScreenTime.Presence?) {
        #expect(ScreenTime.presence([session], now: Self.t0)[1001] == presence)
    }

    @Test("two sessions of one person count once: at the screen if either is, until the later grace; stopped since the later stop; another person is apart")
    func union() {
        let locked = LoginSession(id: "a", uid: 1001, active: true, locked: true)
        let idle1 = LoginSession(id: "b", uid: 1001, active: true, idleSince: Self.t0 - 100)
        let idle2 = LoginSession(id: "c", uid: 1001, active: true, idleSince: Self.t0 - 50)
        let gone = LoginSession(id: "d", uid: 1001, active: true, idleSince: Self.t0 - 500)
        let other = LoginSession(id: "e", uid: 1002, active: true)
        let p = ScreenTime.presence([locked, idle1, idle2, other], now: Self.t0)
        #expect(p[1001] == ScreenTime.Presence(counting: true, stoppedAt: nil, until: Self.t0 + 250))
        #expect(p[1002]?.counting == true && p[1002]?.until == nil)
        #expect(ScreenTime.presence([gone, locked], now: Self.t0)[1001] == ScreenTime.Presence(counting: false, stoppedAt: Self.t0, until: nil))
        #expect(ScreenTime.presence([idle1, LoginSession(id: "f", uid: 1001, active: true)], now: Self.t0)[1001]?.until == nil,
                "a session in use keeps the person at the screen with no end in sight")
    }

    static func screen(_ d: FakeEdge, _ day: String, _ uid: UInt32 = 1001) -> Double {
        d.core.state.history.days[day]?.screen[String(uid)]?[UsageHistory.screenName] ?? 0
    }

    @Test("R2: the report gives each person's screen time per day, the running session included; a person's view has theirs alone")
    func inTheReport() throws {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true), LoginSession(id: "tty3", uid: 1002, active: true)])
        d.advance(600)
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true)])
        d.advance(300)  // kid's session still runs: its open interval counts up to now
        let machine = try #require(ok(d.run(#"report {"days":1,"allUsers":true}"#)))
        #expect(machine["days"]?[0]?["screen"] == ["1001": 900, "1002": 600], "\(String(describing: machine["days"]?[0]))")
        let asKid = Peer(uid: 1001, mayModify: true)
        let kid = try #require(ok(d.run(#"report {"days":1}"#, as: asKid)))
        #expect(kid["days"]?[0]?["screen"] == ["1001": 900])
        let yesterday = try #require(ok(d.run(#"report {"days":2}"#, as: asKid)))
        #expect(yesterday["days"]?[0]?["screen"] == [:] as JSON, "a day without sessions has none, and says so")
    }

    @Test("screen time limit: 60 s at the screen, then the action on the person's local sessions, once; idle and locked time do not count; coming back while over acts again; more time lets the next session run")
    func sessionLimit() throws {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        _ = try #require(ok(d.run(#"limit-add {"name":"screen","seconds":60,"session":"logout"}"#)))
        func actions() -> [Effect] { d.effects.filter { if case .sessionAction = $0 { true } else { false } } }
        let ssh = LoginSession(id: "s9", uid: 1001, active: true, remote: true)
        d.sessions([LoginSession(id: "c1", uid: 1001, active: true), ssh])
        d.advance(40)
        d.sessions([LoginSession(id: "c1", uid: 1001, active: true, locked: true), ssh])
        d.advance(600)
        #expect(actions().isEmpty, "40 s at the screen, then locked: not used up")
        d.sessions([LoginSession(id: "c1", uid: 1001, active: true), ssh])
        d.advance(19)
        #expect(actions().isEmpty)
        d.advance(1)
        #expect(actions() == [.sessionAction(.logout, uid: 1001, sessions: ["c1"])], "at exactly 60 s, on the local session only: \(actions())")
        d.advance(30)
        #expect(actions().count == 1, "once while they stay")
        #expect(d.entries(.session).contains { $0.message == "Screen time limit 'screen' is used up for #1001: ending their session (Action=logout)" },
                "\(d.journal.map(\.message))")
        // Gone (the session ended), then back the same day: acted on again at once.
        d.sessions([ssh])
        d.advance(10)
        d.sessions([LoginSession(id: "c2", uid: 1001, active: true), ssh])
        #expect(actions().count == 2 && actions().last == .sessionAction(.logout, uid: 1001, sessions: ["c2"]))
        // More time (M3) is allowance: the next session runs until it is used.
        _ = try #require(ok(d.run(#"more {"selection":"screen","seconds":120}"#, as: Peer(uid: 1001, mayModify: true))))
        d.sessions([ssh])
        d.sessions([LoginSession(id: "c3", uid: 1001, active: true), ssh])
        d.advance(60)
        #expect(actions().count == 2, "within the two more minutes: \(actions())")
    }

    @Test("A1, screen time: a member's screen-time limit locks their own sessions; one that would power off the machine is refused, with what to do")
    func memberSessionLimit() {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        let member = Peer(uid: 1001, mayModify: true)
        guard case .error(let e) = d.run(#"limit-add {"name":"off","seconds":60,"session":"poweroff"}"#, as: member) else {
            Issue.record("a member's limit may not power off the machine")
            return
        }
        #expect(e.code == .permissionDenied && e.message.contains("use --action lock or logout"), "\(e.message)")
        #expect(ok(d.run(#"limit-add {"name":"mine","seconds":60,"session":"lock"}"#, as: member)) != nil)
        #expect(d.journal.contains { $0.message.hasSuffix("1m daily at the screen, then lock") }, "\(d.journal.map(\.message))")
    }

    @Test("screen time limit: its warning is about the limit itself (it has no selection), and the journal speaks of time at the screen")
    func sessionLimitWords() throws {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        _ = try #require(ok(d.run(#"limit-add {"name":"screen","seconds":600,"session":"lock"}"#)))
        d.sessions([LoginSession(id: "c1", uid: 1001, active: true)])
        d.advance(300)
        let warning = d.events("warning").first
        #expect(warning?["selection"] == "screen" && warning?["activity"] == "screen", "a warning the agent can show: \(d.events("warning"))")
        #expect(d.journal.contains { $0.message.hasPrefix("Daily limit 'screen': 5m of") && $0.message.hasSuffix("use left today at the screen") },
                "\(d.journal.map(\.message))")
        d.advance(300)
        #expect(d.journal.contains { $0.message.hasPrefix("Daily limit 'screen' reached (10m at the screen): time at the screen is over") },
                "\(d.journal.map(\.message))")
    }

    @Test("screen time limit: warnings 10, 5 and 1 minute before (time to save one's work), each saying what the action is; a limit of apps keeps 5 and 1")
    func sessionWarnings() throws {
        var screen = Limit(name: "screen", selections: [], seconds: 7200)
        screen.session = .logout
        #expect(screen.warnings.map(\.seconds) == [600, 300, 60])
        #expect(Limit(name: "games", selections: ["steam"], seconds: 7200).warnings.map(\.seconds) == [300, 60])
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        _ = try #require(ok(d.run(#"limit-add {"name":"screen","seconds":1200,"session":"logout"}"#)))
        d.sessions([LoginSession(id: "c1", uid: 1001, active: true)])
        d.advance(600)
        let first = d.events("warning").first
        #expect(first?["remaining"] == "10m" && first?["session"] == "logout", "\(d.events("warning"))")
        d.advance(300)
        d.advance(240)
        #expect(d.events("warning").map { $0["remaining"]?.string ?? "" } == ["10m", "5m", "1m"], "\(d.events("warning"))")
    }

    @Test("the ledger: two overlapping sessions count their union once; a lock stops the count at once; an idle session stops at its grace's end, by the timer, with no new report")
    func ledger() {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true)])
        d.advance(300)
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true), LoginSession(id: "tty2", uid: 1001, active: true)])
        d.advance(300)
        #expect(Self.screen(d, "2026-11-29") == 600, "10 minutes, not 15: the second session overlapped")
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true, locked: true)])
        d.advance(600)
        #expect(Self.screen(d, "2026-11-29") == 600, "locked: nothing more")
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true, idleSince: d.now)])
        #expect(d.core.screenDeadline == d.now + ScreenTime.idleSeconds && d.arms.last.map { $0! <= d.now + ScreenTime.idleSeconds } == true,
                "the timer is armed no later than the grace's end")
        d.advance(ScreenTime.idleSeconds + 120)
        #expect(Self.screen(d, "2026-11-29") == 600 + ScreenTime.idleSeconds, "the grace counts, the rest of the idle time does not")
    }

    @Test("T6: a step of the wall clock, ahead or back, adds no screen time and takes none away; a screen-time limit counts on as before", arguments: [3600.0, -3600.0])
    func clockStep(step: TimeInterval) throws {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        _ = try #require(ok(d.run(#"limit-add {"name":"screen","seconds":1800,"session":"lock"}"#)))
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true)])
        d.advance(600)
        d.stepWall(step)
        d.advance(600)
        #expect(Self.screen(d, "2026-11-29") == 1200, "20 minutes at the screen, whatever the clock said: \(Self.screen(d, "2026-11-29"))")
        let people = ok(d.run("limit-list"))?["limits"]?[0]?["people"]
        #expect(people?[0]?["used"] == 1200 && people?[0]?["uid"] == 1001, "the limit counted kid's 20 minutes: \(String(describing: people))")
    }

    @Test("T7, R1: the count is split at local midnight; a checkpoint each minute keeps all but the last minute across a kill")
    func midnight() {
        var d = FakeEdge(at: "2026-11-29T23:50:00+09:00")
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true)])
        #expect(d.arms.last.map { $0! <= d.now + 60 } == true, "a checkpoint within the minute while someone is at the screen")
        d.advance(60)
        #expect(d.core.state.history.open[UsageHistory.Open(.screen, user: "1001", name: UsageHistory.screenName).key] == d.now,
                "checkpointed: a kill -9 now loses nothing before this instant")
        d.advance(1140)
        d.sessions([])
        #expect(Self.screen(d, "2026-11-29") == 600 && Self.screen(d, "2026-11-30") == 600)
    }
}
