import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// Screen time's allowed hours: a schedule with `session` keeps the people it is for off the
/// screen during its window (their sessions locked or ended whenever they are at one), more
/// time lifts it for the asker alone, and A1 decides who may set it. With the screen-time
/// ledger across a DST night.
struct AllowedHoursTests {
    static let kid: UInt32 = 1001, kid2: UInt32 = 1002, parent: UInt32 = 1000
    static let family = FakeEdge.users(["kid": kid, "kid2": kid2, "parent": parent], admins: [parent])
    static let asKid = Peer(uid: kid, mayModify: true)
    static let asParent = { var p = Peer(uid: parent, mayModify: true); p.isAdmin = true; return p }()

    static func actions(_ d: FakeEdge) -> [Effect] { d.effects.filter { if case .sessionAction = $0 { true } else { false } } }

    static func desk(_ id: String, _ uid: UInt32 = kid, locked: Bool = false, idle: Date? = nil, graphical: Bool = true, remote: Bool = false) -> LoginSession {
        LoginSession(id: id, uid: uid, active: true, locked: locked, idleSince: idle, remote: remote, graphical: graphical)
    }

    @Test("allowed hours: at the window's start kid's unlocked desktop is locked and the text session ended (it has no screen lock); ssh and kid2 are left alone; once while it stays locked; unlocking acts again; after the window nothing")
    func lockInTheWindow() throws {
        var d = FakeEdge(at: "2026-11-29T20:59:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","session":"lock","users":["kid"]}"#)))
        d.sessions([Self.desk("x1"), Self.desk("tty2", graphical: false), Self.desk("s9", remote: true), Self.desk("x2", Self.kid2)])
        d.advance(59)
        #expect(Self.actions(d).isEmpty, "before 21:00 nothing is done")
        d.advance(1)
        #expect(Self.actions(d) == [.sessionAction(.lock, uid: Self.kid, sessions: ["x1"]), .sessionAction(.logout, uid: Self.kid, sessions: ["tty2"])],
                "at 21:00 exactly, on kid's local sessions only: \(Self.actions(d))")
        #expect(d.entries(.session).map(\.message) == ["Allowed hours 'bedtime' keep kid off the screen until Mon 30 Nov 07:00:00: locking their desktop session and ending their text session (a text session has no screen lock) (Action=lock)"],
                "\(d.entries(.session).map(\.message))")
        d.sessions([Self.desk("x1", locked: true), Self.desk("s9", remote: true), Self.desk("x2", Self.kid2)])
        d.advance(600)
        #expect(Self.actions(d).count == 2, "held: nothing more while the screen stays locked")
        d.sessions([Self.desk("x1"), Self.desk("s9", remote: true), Self.desk("x2", Self.kid2)])
        #expect(Self.actions(d).last == .sessionAction(.lock, uid: Self.kid, sessions: ["x1"]), "unlocked during the window: locked again at once")
        d.advance(10 * 3600)  // 07:10 the next morning
        d.sessions([Self.desk("x1", locked: true)])
        d.sessions([Self.desk("x1")])
        #expect(Self.actions(d).count == 3, "after the window an unlock is left alone: \(Self.actions(d))")
    }

    @Test("before allowed hours begin, as before Downtime: a warning 5 minutes and 1 minute before, once each, saying what will happen; the timer wakes for them; none in the window")
    func warnings() throws {
        var d = FakeEdge(at: "2026-11-29T20:50:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","session":"logout","users":["kid"]}"#, as: Self.asParent)))
        #expect(d.arms.last.map { $0! <= at("2026-11-29T20:55:00+09:00") } == true, "the timer is armed for the first warning: \(String(describing: d.arms.last))")
        d.advance(299)
        #expect(d.events("warning").isEmpty)
        d.advance(1)  // 20:55
        d.advance(30)
        d.advance(210)  // 20:59
        let warnings = d.events("warning")
        #expect(warnings.map { $0["remaining"]?.string ?? "" } == ["5m", "1m"], "\(warnings)")
        #expect(warnings.allSatisfy { $0["session"] == "logout" && $0["activity"] == "bedtime" && $0["users"] == [.int(Int64(Self.kid))] }, "\(warnings)")
        #expect(d.entries(.warning).map(\.message).first == "Allowed hours 'bedtime' begin in 5m for kid, at 21:00:00: off the screen then (Action=logout)",
                "\(d.entries(.warning).map(\.message))")
        d.advance(3600)  // 21:59, in the window
        #expect(d.events("warning").count == 2, "nothing more in the window")
    }

    @Test("a desktop asked to lock that does not say it is locked within 10 s has no screen locker: it is ended; one that locks in time is let be")
    func lockGrace() throws {
        var d = FakeEdge(at: "2026-11-29T22:00:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"night","window":"21:00-07:00","session":"lock","users":["kid","kid2"]}"#)))
        d.sessions([Self.desk("x1"), Self.desk("x2", Self.kid2)])
        #expect(Self.actions(d) == [.sessionAction(.lock, uid: Self.kid, sessions: ["x1"]), .sessionAction(.lock, uid: Self.kid2, sessions: ["x2"])])
        #expect(d.arms.last.map { $0! <= d.now + Core.lockGrace } == true, "the timer wakes at the grace's end")
        d.advance(2)
        d.sessions([Self.desk("x1"), Self.desk("x2", Self.kid2, locked: true)])  // kid2's locker answered; kid's has none
        d.advance(7)
        #expect(Self.actions(d).count == 2, "within the grace")
        d.advance(1)
        #expect(Self.actions(d).last == .sessionAction(.logout, uid: Self.kid, sessions: ["x1"]) && Self.actions(d).count == 3, "\(Self.actions(d))")
        #expect(d.entries(.session).last?.message.hasPrefix("Session x1 of kid did not lock within 10 s") == true, "\(d.entries(.session).map(\.message))")
        d.advance(60)
        #expect(Self.actions(d).count == 3, "kid2's locked session is let be")
    }

    @Test("a login in the window is acted on at once, even while another session of the same person is still open (asked to lock, not locked yet)")
    func newLoginWhileOpen() throws {
        var d = FakeEdge(at: "2026-11-29T22:00:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"night","window":"21:00-07:00","session":"lock","users":["kid"]}"#)))
        d.sessions([Self.desk("x1")])
        d.advance(3)
        d.sessions([Self.desk("x1"), Self.desk("tty3", graphical: false)])
        #expect(Self.actions(d) == [.sessionAction(.lock, uid: Self.kid, sessions: ["x1"]), .sessionAction(.logout, uid: Self.kid, sessions: ["tty3"])],
                "\(Self.actions(d))")
    }

    @Test("allowed hours with Action=logout: a login during the window is ended at once; outside it, it stays")
    func logoutInTheWindow() throws {
        var d = FakeEdge(at: "2026-11-29T22:00:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"night","window":"21:00-07:00","session":"logout","users":["kid"]}"#)))
        #expect(Self.actions(d).isEmpty, "nobody is at a screen")
        d.sessions([Self.desk("c5", idle: d.now - 3600)])
        #expect(Self.actions(d) == [.sessionAction(.logout, uid: Self.kid, sessions: ["c5"])], "idle or not, a session in the window is ended: \(Self.actions(d))")
        d.sessions([])
        d.advance(9 * 3600)  // 07:00
        d.sessions([Self.desk("c6")])
        #expect(Self.actions(d).count == 1, "allowed again from 07:00")
    }

    @Test("allowed hours for everyone hold every person at a screen, but never root: there is always a way in")
    func notRoot() throws {
        var d = FakeEdge(at: "2026-11-29T22:00:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"night","window":"21:00-07:00","session":"logout"}"#)))
        d.sessions([Self.desk("r1", 0), Self.desk("p1", Self.parent), Self.desk("k1")])
        #expect(Self.actions(d) == [.sessionAction(.logout, uid: Self.parent, sessions: ["p1"]), .sessionAction(.logout, uid: Self.kid, sessions: ["k1"])],
                "\(Self.actions(d))")
    }

    @Test("M3: kid's more time over allowed hours (self-service, kid's own) lets kid's session run until the grant ends, then locks it; kid2 stays held")
    func moreTime() throws {
        var d = FakeEdge(at: "2026-11-29T21:30:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","session":"lock","users":["kid","kid2"],"moreTime":{"mode":"self"}}"#)))
        let grant = try #require(ok(d.run(#"more {"selection":"bedtime","seconds":900}"#, as: Self.asKid)))
        #expect(grant["named"] == "hours", "\(grant)")
        d.sessions([Self.desk("x1"), Self.desk("x2", Self.kid2)])
        #expect(Self.actions(d) == [.sessionAction(.lock, uid: Self.kid2, sessions: ["x2"])], "kid has more time, kid2 has not: \(Self.actions(d))")
        d.sessions([Self.desk("x1"), Self.desk("x2", Self.kid2, locked: true)])  // kid2's screen locker answers
        d.advance(899)
        #expect(Self.actions(d).count == 1)
        d.advance(1)
        #expect(Self.actions(d).last == .sessionAction(.lock, uid: Self.kid, sessions: ["x1"]), "the grant's end locks kid's screen: \(Self.actions(d))")
        guard case .error(let e) = d.run(#"more {"selection":"bedtime","seconds":900}"#, as: Self.asParent) else {
            Issue.record("the parent is not held by kid's allowed hours")
            return
        }
        #expect(e.code == .notFound && e.message.contains("do not keep you off the screen now"), "\(e.message)")
    }

    @Test("M1, A1: allowed hours a parent set for kid take the family default: kid's more time is a request for the parent, not a grant; so does a screen-time limit's")
    func familyApproval() throws {
        var d = FakeEdge(at: "2026-11-29T21:30:00+09:00", users: Self.family)
        let parent = Self.asParent
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","session":"lock","users":["kid"]}"#, as: parent)))
        let asked = try #require(ok(d.run(#"more {"selection":"bedtime","seconds":900}"#, as: Self.asKid)))
        #expect(asked["expires"] != nil && asked["end"] == nil, "a request waits for the parent: \(asked)")
        var e = FakeEdge(at: "2026-11-29T13:00:00+09:00", users: Self.family)
        _ = try #require(ok(e.run(#"limit-add {"name":"screen","seconds":60,"session":"lock","users":["kid"]}"#, as: parent)))
        e.sessions([Self.desk("x1")])
        e.advance(61)
        let more = try #require(ok(e.run(#"more {"selection":"screen","seconds":600}"#, as: Self.asKid)))
        #expect(more["expires"] != nil && more["end"] == nil, "the screen-time limit's MoreTime=approval decides, not the default: \(more)")
    }

    @Test("A1: kid may keep themselves off the screen (their own allowed hours); suspend or power off are for administrators; kid's hours cannot cover kid2")
    func authority() {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00", users: Self.family)
        guard case .error(let off) = d.run(#"schedule-add {"name":"off","window":"21:00-07:00","session":"poweroff"}"#, as: Self.asKid) else {
            Issue.record("a member's allowed hours may not power off the machine")
            return
        }
        #expect(off.code == .permissionDenied && off.message.contains("use --action lock or logout"), "\(off.message)")
        guard case .ok(let mine) = d.run(#"schedule-add {"name":"mine","window":"21:00-07:00","session":"lock"}"#, as: Self.asKid) else {
            Issue.record("kid's own allowed hours are refused")
            return
        }
        #expect(mine["users"] == ["kid"] && mine["session"] == "lock", "a member's are their own: \(mine)")
        guard case .error(let other) = d.run(#"schedule-add {"name":"theirs","window":"21:00-07:00","session":"lock","users":["kid2"]}"#, as: Self.asKid) else {
            Issue.record("kid may not set kid2's allowed hours")
            return
        }
        #expect(other.code == .permissionDenied, "\(other.message)")
        #expect(d.journal.contains { $0.message == "Schedule 'mine' added by kid: 21:00-07:00 daily, off the screen (Action=lock)" },
                "\(d.journal.map(\.message))")
    }

    @Test("A1: kid cannot remove their own allowed hours during the window, nor their used-up screen-time limit, until it ends; before the window they may, and a parent may at any time")
    func noEarlyLift() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"mine","window":"21:00-07:00","session":"lock"}"#, as: Self.asKid)))
        _ = try #require(ok(d.run(#"schedule-add {"name":"early","window":"20:30-07:00","session":"lock"}"#, as: Self.asKid)))
        _ = try #require(ok(d.run(#"schedule-remove {"name":"early"}"#, as: Self.asKid)))  // before its window
        d.advance(3600)
        guard case .error(let e) = d.run(#"schedule-remove {"name":"mine"}"#, as: Self.asKid) else {
            Issue.record("kid lifted their own allowed hours during the window")
            return
        }
        #expect(e.code == .locked && e.message.contains("until Mon 30 Nov 07:00:00") && e.message.contains("ask an administrator"), "\(e.message)")
        _ = try #require(ok(d.run(#"limit-add {"name":"screen","seconds":60,"session":"lock"}"#, as: Self.asKid)))
        d.sessions([Self.desk("x1")])
        d.advance(61)
        guard case .error(let l) = d.run(#"limit-remove {"name":"screen"}"#, as: Self.asKid) else {
            Issue.record("kid removed their used-up screen-time limit")
            return
        }
        #expect(l.code == .locked && l.message.hasPrefix("screen-time limit 'screen' keeps you off the screen until"), "\(l.message)")
        let parent = d.run(#"schedule-remove {"name":"mine"}"#, as: Self.asParent)
        #expect(parent.line.contains("\"removed\""), "the parent may: \(parent.line)")
    }

    @Test("screen: whether a person may be at the screen now, or what keeps them off it; a member asks of themselves only; root never held")
    func screenRoute() throws {
        var d = FakeEdge(at: "2026-11-29T22:00:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"night","window":"21:00-07:00","session":"lock","users":["kid"]}"#, as: Self.asParent)))
        let kid = try #require(ok(d.run("screen", as: Self.asKid)))
        #expect(ScreenReply(kid) == ScreenReply(user: "kid", uid: Int(Self.kid), held: true, activity: "night", kind: "schedule",
                                                until: "2026-11-30T07:00:00.000+09:00", action: "lock"), "\(kid)")
        let parent = try #require(ok(d.run(#"screen {"user":"kid"}"#, as: Self.asParent)))
        #expect(parent["held"] == true, "the parent asks about kid")
        guard case .error(let e) = d.run(#"screen {"user":"kid2"}"#, as: Self.asKid) else {
            Issue.record("kid may not ask about kid2")
            return
        }
        #expect(e.code == .permissionDenied && !e.message.contains("kid2"), "\(e.message)")
        #expect(ok(d.run(#"screen {"user":"kid2"}"#, as: Self.asParent))?["held"] == false)
        _ = try #require(ok(d.run(#"schedule-add {"name":"all","window":"21:00-07:00","session":"lock"}"#)))
        #expect(ok(d.run("screen"))?["held"] == false, "root is never kept off the screen")
        _ = try #require(ok(d.run(#"schedule-remove {"name":"all"}"#)))
        // More time lifts the hours for the asker: a login then goes through.
        let asked = try #require(ok(d.run(#"more {"selection":"night","seconds":900}"#, as: Self.asKid)))
        _ = try #require(ok(d.run(#"approve {"id":"\#(asked["id"]?.string ?? "")"}"#, as: Self.asParent)))
        #expect(ok(d.run("screen", as: Self.asKid))?["held"] == false, "during the parent's grant")
        d.advance(9 * 3600 + 60)  // 07:01: outside the window
        #expect(ok(d.run("screen", as: Self.asKid))?["held"] == false)
        // A screen-time limit used up today holds too.
        _ = try #require(ok(d.run(#"limit-add {"name":"screen","seconds":60,"session":"logout","users":["kid"]}"#, as: Self.asParent)))
        d.sessions([Self.desk("x1")])
        d.advance(61)
        let used = try #require(ok(d.run("screen", as: Self.asKid)))
        #expect(used["held"] == true && used["kind"] == "limit" && used["activity"] == "screen" && used["action"] == "logout", "\(used)")
    }

    @Test("the protocol: allowed hours have no selections; selections with session, or neither, are refused with what to do")
    func wire() {
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00")
        let rows: [(String, String)] = [
            (#"schedule-add {"name":"b","window":"21:00-07:00","session":"lock","selections":["youtube"]}"#, "give it no selections"),
            (#"schedule-add {"name":"b","window":"21:00-07:00","session":"sleep"}"#, "one of lock, logout, suspend, poweroff"),
        ]
        for (line, says) in rows {
            guard case .error(let e) = d.run(line) else {
                Issue.record("accepted: \(line)")
                continue
            }
            #expect(e.message.contains(says), "\(line): \(e.message)")
        }
        let listed = ok(d.run(#"schedule-add {"name":"b","window":"21:00-07:00","session":"logout"}"#))
        #expect(listed?["session"] == "logout" && listed?["selections"] == [], "\(String(describing: listed))")
    }

    @Test("schedules.d: Session=yes with Action= makes allowed hours; Selections= or Mode=allow-only with it, or Action= alone, are refused by line")
    func configFile() throws {
        let good = try ConfigFiles.parseSchedule(file: "bedtime.conf", text: "[Schedule]\nName=bedtime\nWindow=21:00-07:00\nUsers=kid\nSession=yes\nAction=logout\n")
        #expect(good.session == .logout && good.selections.isEmpty && good.users?.names == ["kid"])
        let plain = try ConfigFiles.parseSchedule(file: "b.conf", text: "[Schedule]\nName=b\nWindow=21:00-07:00\nSession=yes\n")
        #expect(plain.session == .lock, "Action=lock is the default")
        let rows: [(String, String)] = [
            ("Session=yes\nSelections=youtube\n", "drop Selections="),
            ("Session=yes\nMode=allow-only\nSelections=wikipedia\n", "drop Mode="),
            ("Selections=youtube\nAction=lock\n", "Action= without Session=yes"),
            ("Session=yes\nAction=sleep\n", "Action=sleep is not an action"),
            ("", "or Session=yes for allowed hours"),
        ]
        for (body, says) in rows {
            let (schedule, problems) = ConfigFiles.readSchedule(file: "b.conf", text: "[Schedule]\nName=b\nWindow=21:00-07:00\n" + body)
            #expect(schedule == nil && problems.contains { $0.message.contains(says) }, "\(body): \(problems.map(\.message))")
        }
    }

    @Test("IdleSeconds=: how long an idle session still counts, from blockd.conf; the ledger and limits follow it")
    func idleSeconds() throws {
        var config = ConfigSet.builtIn
        config.daemon = config.daemon.applying(try DaemonConfig.parseLayer(file: "blockd.conf", text: "[Daemon]\nIdleSeconds=1m\n"))
        #expect(config.daemon.idleSeconds == 60)
        var d = FakeEdge(at: "2026-11-29T13:00:00+09:00", config: config)
        d.sessions([LoginSession(id: "x11", uid: 1001, active: true, idleSince: d.now)])
        d.advance(600)
        #expect(ScreenTimeTests.screen(d, "2026-11-29") == 60, "a minute of grace, not five")
        for bad in ["IdleSeconds=0", "IdleSeconds=2d", "IdleSeconds=soon"] {
            #expect(throws: CoreError.self, "\(bad)") { try DaemonConfig.parseLayer(file: "blockd.conf", text: "[Daemon]\n\(bad)\n") }
        }
    }

    @Test("T7: screen time across the fall-back night in New York: the 25-hour day gets its 25 hours, the days either side their own")
    func dstNight() {
        let clock = zone("America/New_York")
        var h = UsageHistory()
        h.setScreen([Self.kid: ScreenTime.Presence(counting: true, stoppedAt: nil, until: nil)], at: at("2026-10-31T23:00:00-04:00"), clock: clock)
        h.setScreen([Self.kid: ScreenTime.Presence(counting: false, stoppedAt: at("2026-11-02T00:30:00-05:00"), until: nil)],
                    at: at("2026-11-02T00:30:00-05:00"), clock: clock)
        let days = ["2026-10-31", "2026-11-01", "2026-11-02"].map { h.days[$0]?.screen["1001"]?[UsageHistory.screenName] ?? 0 }
        #expect(days == [3600, 25 * 3600, 1800], "\(days)")
    }

    @Test("status: who is kept off the screen now, and by what: the people allowed hours name and whoever is logged in under hours for everyone, during the window only, root never, someone more time lifts them for no longer; a used-up screen-time limit's person too")
    func screenHolds() throws {
        var d = FakeEdge(at: "2026-11-29T20:59:00+09:00", users: Self.family)
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"21:00-07:00","session":"lock","users":["kid","kid2"],"moreTime":{"mode":"self"}}"#)))
        _ = try #require(ok(d.run(#"schedule-add {"name":"quiet","window":"21:00-22:00","session":"logout","moreTime":{"mode":"self"}}"#)))
        d.sessions([Self.desk("x3", Self.parent), Self.desk("x0", 0)])
        #expect(d.core.screenHolds(now: d.now).isEmpty, "before the window nobody")
        d.advance(60)
        let held = d.core.screenHolds(now: d.now)
        #expect(held.map(\.uid) == [Int(Self.parent), Int(Self.kid), Int(Self.kid2)], "kid and kid2 named, the parent logged in under hours for everyone, root never: \(held)")
        #expect(held.map(\.activity) == ["quiet", "quiet", "quiet"] && held.map(\.action) == ["logout", "logout", "logout"],
                "the strongest action wins, as `screen` says it: \(held)")
        #expect(held.first?.until == d.core.local.iso8601(at("2026-11-29T22:00:00+09:00")))
        _ = try #require(ok(d.run(#"more {"selection":"bedtime","seconds":1800}"#, as: Self.asKid)))
        _ = try #require(ok(d.run(#"more {"selection":"quiet","seconds":1800}"#, as: Self.asKid)))
        #expect(d.core.screenHolds(now: d.now).map(\.uid) == [Int(Self.parent), Int(Self.kid2)], "more time lifts them for kid alone")
        d.advance(3600)  // 22:01: quiet is over, bedtime holds kid2 (and kid once the grant ends)
        #expect(d.core.screenHolds(now: d.now).map { "\($0.user) \($0.activity ?? "") \($0.action ?? "")" } == ["kid bedtime lock", "kid2 bedtime lock"])
        d.advance(9 * 3600)  // 07:01
        #expect(d.core.screenHolds(now: d.now).isEmpty, "after the window nobody")

        var l = FakeEdge(at: "2026-11-29T13:00:00+09:00", users: Self.family)
        _ = try #require(ok(l.run(#"limit-add {"name":"screen","seconds":60,"session":"lock","users":["kid"]}"#)))
        l.sessions([Self.desk("c1")])
        l.advance(60)
        let used = l.core.screenHolds(now: l.now)
        #expect(used.map(\.uid) == [Int(Self.kid)] && used.first?.kind == "limit" && used.first?.activity == "screen", "\(used)")
    }
}
