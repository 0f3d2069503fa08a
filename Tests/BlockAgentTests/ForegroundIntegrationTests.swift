import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestTools

/// R1 end to end: the real blockd (unprivileged, in a temp dir) following an app through a
/// limit, the real agent in an X session (Xvfb), and the foreground interval as blockd writes
/// it to its state log.
@Suite("Integration: foreground time from the agent to the real blockd (R1)", .serialized)
struct ForegroundIntegrationTests {
    static let tools = ForegroundWatcherTests.tools

    /// The app runs for its login uid (R1's person) and the agent speaks for its uid: run from
    /// a login session as another user (sudo), the two never meet, as designed.
    static let ownLoginUID: Bool = {
        let loginuid = (try? String(contentsOfFile: "/proc/self/loginuid", encoding: .utf8)).flatMap { UInt32($0) }
        return loginuid == nil || loginuid == UInt32.max || loginuid == getuid()
    }()

    /// What happened last to the foreground interval `key` in the state log, in records of
    /// generation `after` or later: "open", "closed" or nil.
    static func last(_ key: String, log: String, after gen: Int = 0) -> String? {
        var out: String?
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            guard let record = try? JSON.parse(String(line)), (record["gen"]?.int ?? 0) >= gen, let state = record["state"] else { continue }
            if state["historyClosed"]?.array?.contains(.string(key)) == true { out = "closed" }
            if state["historyOpen"]?[key] != nil { out = "open" }
        }
        return out
    }

    static func generation(_ log: String) -> Int {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { (try? JSON.parse(String($0)))?["gen"]?.int }.max() ?? 0
    }

    @Test("R1: the agent tells the real blockd what has the focus: it opens while the app runs, closes when the focus goes or the agent stops, and is told again after a restart",
          .enabled(if: Desktop.can(needs: ForegroundIntegrationTests.tools), Desktop.needsPrograms),
          .enabled(if: ForegroundIntegrationTests.ownLoginUID, "runs only where the login uid is unset or the test's own uid"))
    func endToEnd() throws {
        if Desktop.unavailable(needs: Self.tools) != nil { return }
        let dir = NSTemporaryDirectory() + "blockd-fge2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir + "/etc/selections.d", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/etc/limits.d", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "[Selection]\nName=xm\nApps=\(ForegroundWatcherTests.xmessage)\n".write(toFile: dir + "/etc/selections.d/xm.conf", atomically: true, encoding: .utf8)
        try "[Limit]\nName=xm-daily\nDaily=2h\nSelections=xm\n".write(toFile: dir + "/etc/limits.d/xm.conf", atomically: true, encoding: .utf8)
        try "127.0.0.1\tlocalhost\n".write(toFile: dir + "/hosts", atomically: true, encoding: .utf8)
        let processes = Processes()
        defer { processes.stopAll() }
        let x = try Xvfb.start(processes, log: dir + "/xvfb.log")
        defer { close(x.pipe) }

        let (bin, socket, log) = (Repo.binDir, dir + "/blockd.sock", dir + "/state/state.log")
        func startBlockd() throws -> Child {
            let child = try processes.launch(bin + "/blockd", ["--socket", socket, "--state-dir", dir + "/state", "--config-dir", dir + "/etc",
                                                               "--hosts-file", dir + "/hosts", "--log-target", "console", "--firewall", "no",
                                                               "--cut-sockets", "no", "--policy-root", dir + "/root"],
                                             output: dir + "/blockd.log")
            try #require(Run.eventually { (try? Run.capture(bin + "/blockc", ["--socket", socket, "version"]))?.status == 0 },
                         "blockd did not start: \((try? String(contentsOfFile: dir + "/blockd.log", encoding: .utf8)) ?? "")")
            return child
        }
        var blockd = try startBlockd()

        _ = try Run.capture(ForegroundWatcherTests.xprop, ["-display", x.display, "-root", "-f", "_NET_ACTIVE_WINDOW", "32x", "-set", "_NET_ACTIVE_WINDOW", "0"])
        let (app, window) = try ForegroundWatcherTests.window(named: "fg-e2e", processes: processes, display: x.display, log: dir + "/xmessage.log")
        _ = try Run.capture(ForegroundWatcherTests.xprop, ["-display", x.display, "-id", window, "-f", "_NET_WM_PID", "32c", "-set", "_NET_WM_PID", String(app.pid)])
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(app.pid)/exe")
        let key = "foreground \(getuid()) \(ForegroundWatcherTests.xmessage)"
        func focus(_ on: Bool) throws {
            let args = on ? ["-f", "_NET_ACTIVE_WINDOW", "32x", "-set", "_NET_ACTIVE_WINDOW", window] : ["-remove", "_NET_ACTIVE_WINDOW"]
            _ = try Run.capture(ForegroundWatcherTests.xprop, ["-display", x.display, "-root"] + args)
        }

        let env = ["DISPLAY": x.display, "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": dir, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/no-bus"]
        let agent = try processes.launch(bin + "/blockc", ["--socket", socket, "watch", "--notify"], environment: env, output: dir + "/agent.log")
        let agentLog = { (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "" }
        try focus(true)
        #expect(Run.eventually { Self.last(key, log: log) == "open" }, "\(exe) in the foreground: \(agentLog())")
        try focus(false)
        #expect(Run.eventually { Self.last(key, log: log) == "closed" }, "the focus cleared")
        try focus(true)
        #expect(Run.eventually { Self.last(key, log: log) == "open" })

        let gen = Self.generation(log)
        blockd.stop()
        blockd = try startBlockd()
        #expect(Run.eventually(timeout: 15) { Self.last(key, log: log, after: gen + 1) == "open" },
                "after blockd's restart the agent tells it again: \(agentLog())")
        agent.stop()
        #expect(Run.eventually { Self.last(key, log: log) == "closed" }, "the agent stopped: nothing has the focus")
        #expect(agent.exitStatus == 0)
    }
}
