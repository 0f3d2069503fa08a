import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockAgent
import ZoneInfo
import BlockTestTools

/// `blockc watch --notify` as users run it: the real binary, a private session bus, a real
/// notification server (dunst under Xvfb, or a Python one without `actions`), a fake blockd
/// on a Unix socket and a fake `xdg-open` on PATH that records what it was asked to open.
@Suite("Integration: blockc watch --notify on a session bus (S1-S4, S6, S7)", .serialized)
struct NotifyIntegrationTests {
    static let tokyo = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    static let minulo = "https://minulo.example/open?app={app}&from={selection}"
    static let selections: [String: JSONObject] = [
        "instagram": ["name": "instagram", "domains": [], "apps": [], "openURL": .string(minulo), "texts": ["OpenLabel": "Open minulo"]],
        "discord": ["name": "discord", "domains": [], "apps": [], "openURL": .null, "texts": [:]],
        "youtube": ["name": "youtube", "domains": [], "apps": [], "openURL": .null, "texts": [:]],
    ]
    static let dunstTools = [Desktop.dbusDaemon, Desktop.busctl, Desktop.dbusSend, Desktop.xvfb, Desktop.dunst, Desktop.dunstctl]
    static let busTools = [Desktop.dbusDaemon, Desktop.busctl, Desktop.python]

    /// The fake daemon and the agent, which is started with only the fake opener on PATH
    /// (or nothing, for S4's "no opener").
    static func start(_ session: DesktopSession, opener: Bool = true, lang: String = "en_US.UTF-8", admin: Bool = false,
                      report: JSONObject? = nil) throws -> (FakeDaemon, Child) {
        let daemon = try FakeDaemon(path: session.dir + "/blockd.sock", selections: selections, admin: admin, report: report)
        let bin = session.dir + (opener ? "/bin" : "/empty")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        if opener {
            try session.write("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(session.dir)/opened'\n", to: "bin/xdg-open", mode: 0o755)
        }
        var env = session.environment
        env["PATH"] = bin
        env["TZ"] = "Asia/Tokyo"
        env["XDG_RUNTIME_DIR"] = session.dir
        (env["LANG"], env["LC_ALL"], env["LC_MESSAGES"], env["LANGUAGE"]) = (lang, "", "", "")
        let agent = try session.processes.launch(Repo.binDir + "/blockc", ["--socket", daemon.path, "watch", "--notify"],
                                                 environment: env, output: session.dir + "/agent.log")
        guard Run.eventually(timeout: 30, { daemon.watcherCount == 1 }) else {
            throw TestFailure("the agent did not subscribe: \(session.read("agent.log"))")
        }
        return (daemon, agent)
    }

    /// Built by the daemon's own constructor, so the fixture cannot drift from what it sends.
    static func denied(_ selection: String, app: String?, until: Date, at time: Date = Date()) -> JSONObject {
        WatchEvent.shieldHit(time: tokyo.iso8601(time), kind: .deniedLaunch, selection: selection, path: "/usr/bin/\(selection)",
                       app: app, until: tokyo.iso8601(until)).json
    }

    /// "Blocked until 13:35 — 30 min left.": the time left is what the two clock minutes say
    /// (as blockc says it), so the end is 30 minutes and 30 seconds past the start of this
    /// minute, and the test first waits out the minute if less than 15 s of it are left: the
    /// agent, reading its clock a moment later, is then still in the same minute.
    static func until() -> (Date, String) {
        let until = thirtyMinutesOn()
        return (until, NotificationPlanner(language: .en, clock: tokyo).display(until, now: Date()))
    }

    static func thirtyMinutesOn() -> Date {
        var now = Date().timeIntervalSince1970
        if now.truncatingRemainder(dividingBy: 60) > 45 {
            usleep(useconds_t((60 - now.truncatingRemainder(dividingBy: 60) + 0.2) * 1_000_000))
            now = Date().timeIntervalSince1970
        }
        return Date(timeIntervalSince1970: (now / 60).rounded(.down) * 60 + 30 * 60 + 30)
    }

    @Test("dunst shows a denied launch; a second one replaces it (S2); its button opens the S7 URL, a forged ActionInvoked does not (S1, S4)", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.dunstTools), Desktop.needsPrograms))
    func dunstDeniedLaunch() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.dunstTools) != nil { return }
        let session = try DesktopSession()
        try session.startDunst()
        let (daemon, _) = try NotifyIntegrationTests.start(session)
        let (until, hm) = NotifyIntegrationTests.until()

        daemon.send(NotifyIntegrationTests.denied("instagram", app: "インスタ", until: until))
        try #require(Run.eventually { session.notifyCalls().count == 1 }, "no Notify: \(session.read("agent.log"))")
        let first = session.notifyCalls()[0]
        #expect(first.args[0] == "blockd")
        #expect(first.args[1] == .int(0), "a new notification")
        #expect(first.args[3] == "インスタ is blocked")
        #expect(first.args[4] == .string("Blocked until \(hm) — 30 min left."))
        #expect(first.args[5] == ["open", "Open minulo"], "OpenURL=, the actions capability and an opener: a button (S4)")

        daemon.send(NotifyIntegrationTests.denied("instagram", app: "インスタ", until: until, at: Date().addingTimeInterval(1)))
        try #require(Run.eventually { session.notifyCalls().count == 2 })
        let replaced = session.notifyCalls()[1].args[1]
        #expect(replaced != .int(0), "S2: the second notification replaces the first")
        #expect(Run.eventually { (try? session.dunstctl(["count", "displayed"]))?.trimmingCharacters(in: .whitespacesAndNewlines) == "1" })

        // S1: an ActionInvoked from anyone but the server is ignored, even sent straight to us.
        let forged = try Run.capture(Desktop.busctl, ["--address=\(session.address)", "emit", "--destination=\(first.sender)",
                                                       "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                                                       "ActionInvoked", "us", "\(replaced.int ?? 0)", "open"])
        #expect(forged.status == 0, "busctl emit: \(forged.output)")
        // dunst invokes the only action of the topmost notification.
        _ = try session.dunstctl(["action", "0"])
        let url = "https://minulo.example/open?app=%E3%82%A4%E3%83%B3%E3%82%B9%E3%82%BF&from=instagram"
        #expect(Run.eventually { session.read("opened") == url + "\n" }, "opened: \(session.read("opened")); log: \(session.read("agent.log"))")

        daemon.send(NotifyIntegrationTests.denied("discord", app: "Discord", until: until))
        try #require(Run.eventually { session.notifyCalls().count == 3 })
        #expect(session.notifyCalls()[2].args[5] == [], "no OpenURL=, no button (S4)")
        #expect(Run.eventually { (try? session.dunstctl(["count", "displayed"]))?.trimmingCharacters(in: .whitespacesAndNewlines) == "2" })

        _ = try session.dunstctl(["close-all"])
        var history: [[String: JSON]] = []
        #expect(Run.eventually {
            history = (try? session.dunstHistory()) ?? []
            return history.count == 2
        }, "S2: one notification per selection: \(history)")
        let instagram = history.first { $0["summary"] == "インスタ is blocked" }
        #expect(instagram?["id"] == replaced)
        #expect(instagram?["body"] == .string("Blocked until \(hm) — 30 min left."))
        #expect(history.contains { $0["summary"] == "Discord is blocked" })
        #expect(session.read("opened") == url + "\n", "the forged signal opened nothing")
    }

    @Test("S4: with no opener on PATH, dunst gets the notification without a button", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.dunstTools), Desktop.needsPrograms))
    func dunstWithoutOpener() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.dunstTools) != nil { return }
        let session = try DesktopSession()
        try session.startDunst()
        let (daemon, _) = try NotifyIntegrationTests.start(session, opener: false)
        daemon.send(NotifyIntegrationTests.denied("instagram", app: "Instagram", until: NotifyIntegrationTests.until().0))
        try #require(Run.eventually { session.notifyCalls().count == 1 }, "no Notify: \(session.read("agent.log"))")
        #expect(session.notifyCalls()[0].args[3] == "Instagram is blocked")
        #expect(session.notifyCalls()[0].args[5] == [])
    }

    @Test("S4, S6: a server without the actions capability gets no button; Japanese texts for a ja_JP locale", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.busTools, pythonDBus: true), Desktop.needsPrograms))
    func serverWithoutActions() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.busTools, pythonDBus: true) != nil { return }
        let session = try DesktopSession()
        try session.startServerWithoutActions()
        let (daemon, _) = try NotifyIntegrationTests.start(session, lang: "ja_JP.UTF-8")
        let until = NotifyIntegrationTests.thirtyMinutesOn()
        daemon.send(NotifyIntegrationTests.denied("instagram", app: "インスタ", until: until))
        try #require(Run.eventually { session.serverCalls().count == 1 }, "no Notify: \(session.read("agent.log"))")
        let call = session.serverCalls()[0]
        let hm = NotificationPlanner(language: .ja, clock: NotifyIntegrationTests.tokyo).display(until, now: Date())
        #expect(call["summary"] == "インスタはブロック中です")
        #expect(call["body"] == .string("\(hm)まで使えません（残り30分）。"))
        #expect(call["actions"] == [])
        #expect(session.read("agent.log").contains("does not support actions"))
    }

    @Test("S4: no notification server: logged once, the agent keeps running and uses one that appears later", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.busTools, pythonDBus: true), Desktop.needsPrograms))
    func noServer() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.busTools, pythonDBus: true) != nil { return }
        let session = try DesktopSession()
        let (daemon, agent) = try NotifyIntegrationTests.start(session)
        let until = Date().addingTimeInterval(600)
        daemon.send(NotifyIntegrationTests.denied("discord", app: "Discord", until: until))
        daemon.send(NotifyIntegrationTests.denied("instagram", app: "Instagram", until: until))
        #expect(Run.eventually { session.read("agent.log").contains("no notification server") })
        // The barrier: the agent handles events one at a time, in order, and asks blockd about a
        // selection new to it before it looks for the server. Once it asks about a third one,
        // the second event has been handled.
        daemon.send(NotifyIntegrationTests.denied("youtube", app: "YouTube", until: until))
        #expect(Run.eventually { daemon.shown.contains("youtube") }, "\(daemon.shown)")
        #expect(session.read("agent.log").components(separatedBy: "no notification server").count == 2, "\(session.read("agent.log"))")
        #expect(agent.isRunning)

        try session.startServerWithoutActions()
        daemon.send(NotifyIntegrationTests.denied("discord", app: "Discord", until: until, at: Date().addingTimeInterval(2)))
        #expect(Run.eventually { session.serverCalls().count == 1 }, "\(session.read("agent.log"))")
        #expect(session.serverCalls().first?["summary"] == "Discord is blocked")
    }

    @Test("a daemon restart: the agent resubscribes with backoff and does not repeat the block it already showed", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.busTools, pythonDBus: true), Desktop.needsPrograms))
    func resubscribe() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.busTools, pythonDBus: true) != nil { return }
        let session = try DesktopSession()
        try session.startServerWithoutActions()
        let (daemon, _) = try NotifyIntegrationTests.start(session)
        let until = Date().addingTimeInterval(3600)
        let tokyo = NotifyIntegrationTests.tokyo
        let lock = WatchEvent.lock(time: tokyo.iso8601(Date()), selection: "discord", until: tokyo.iso8601(until), reasons: ["focus"]).json
        daemon.send(lock)
        try #require(Run.eventually { session.serverCalls().count == 1 }, "\(session.read("agent.log"))")
        #expect(session.serverCalls()[0]["summary"] == "discord is now blocked")

        daemon.restart()
        try #require(Run.eventually { daemon.watchRequests == 2 && daemon.watcherCount == 1 }, "\(session.read("agent.log"))")
        var again = lock
        again["time"] = .string(NotifyIntegrationTests.tokyo.iso8601(Date().addingTimeInterval(5)))
        daemon.send(again)  // a restarted daemon announcing the same block
        daemon.send(NotifyIntegrationTests.denied("discord", app: "Discord", until: until))
        // The barrier: one more event, shown after everything sent before it (the agent shows
        // events one at a time, in order); a repeated block would be among the calls before it.
        daemon.send(NotifyIntegrationTests.denied("instagram", app: "Instagram", until: until))
        try #require(Run.eventually { session.serverCalls().count >= 3 })
        #expect(session.serverCalls().map { $0["summary"] } == ["discord is now blocked", "Discord is blocked", "Instagram is blocked"])
        #expect(session.serverCalls()[1]["id"] == session.serverCalls()[0]["id"], "S2: the same selection's slot")
        let log = session.read("agent.log")
        #expect(log.components(separatedBy: "reconnecting").count == 2 && log.contains("again"), "\(log)")
    }

    @Test("S3: on SIGTERM the agent delivers what it has queued, then exits 0", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.busTools, pythonDBus: true), Desktop.needsPrograms))
    func drainOnTerm() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.busTools, pythonDBus: true) != nil { return }
        let session = try DesktopSession()
        try session.startServerWithoutActions(delay: 0.25)
        let (daemon, agent) = try NotifyIntegrationTests.start(session)
        let until = Date().addingTimeInterval(600)
        for name in ["a", "b", "c", "d", "e"] {
            daemon.send(NotifyIntegrationTests.denied(name, app: name.uppercased(), until: until))
        }
        // The first slow Notify is under way; the reader has long queued the other four.
        try #require(Run.eventually { session.serverCalls().count == 1 })
        kill(agent.pid, SIGTERM)
        #expect(Run.eventually { !agent.isRunning })
        #expect(agent.exitStatus == 0)
        #expect(session.serverCalls().map { $0["summary"] } == ["A is blocked", "B is blocked", "C is blocked", "D is blocked", "E is blocked"],
                "\(session.read("agent.log"))")
    }
}
