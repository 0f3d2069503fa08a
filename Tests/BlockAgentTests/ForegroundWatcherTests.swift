import BlockCore
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BlockAgent
import BlockTestTools

/// R1 on the agent's side: the focused window's app, from a real X server (Xvfb) through
/// xprop, as the watcher would tell blockd.
@Suite("R1: the agent's foreground watcher", .serialized)
struct ForegroundWatcherTests {
    static let xprop = "/usr/bin/xprop", xmessage = "/usr/bin/xmessage", xwininfo = "/usr/bin/xwininfo"
    static let tools = [Desktop.xvfb, xprop, xmessage, xwininfo, "/usr/bin/setpriv"]

    /// What the watcher sent, in order (nil: nothing of ours has the focus).
    final class Sent: Sendable {
        let words = Mutex<[String?]>([])
        var all: [String?] { words.withLock { $0 } }
        var last: String?? { words.withLock { $0.last } }
        func send(_ app: String?) -> Bool {
            words.withLock { $0.append(app) }
            return true
        }
    }

    @Test("R1: xprop's lines: a window id, a pid; 0, 'not found' and anything else are none")
    func lines() {
        #expect(ForegroundWatcher.window(in: "_NET_ACTIVE_WINDOW 0x1e00007") == 0x1e00007)
        #expect(ForegroundWatcher.window(in: "_NET_ACTIVE_WINDOW(CARDINAL) 0x1e00007") == nil, "-notype: the type is never there")
        for line in ["_NET_ACTIVE_WINDOW 0x0", "_NET_ACTIVE_WINDOW:  not found.", "_NET_ACTIVE_WINDOW:  no such atom on any window.", "", "_NET_ACTIVE_WINDOW 0xzz"] {
            #expect(ForegroundWatcher.window(in: line) == nil, "\(line)")
        }
        #expect(ForegroundWatcher.pid(in: "_NET_WM_PID 4242") == 4242)
        for text in ["_NET_WM_PID:  not found.", "_NET_WM_PID 0", "_NET_WM_PID -1", "_NET_WM_PID 12 13"] {
            #expect(ForegroundWatcher.pid(in: text) == nil, "\(text)")
        }
    }

    @Test("R1: a process's executable only when it is the session user's own")
    func executable() throws {
        let mine = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(ForegroundWatcher.executable(of: getpid(), uid: getuid()) == mine)
        #expect(ForegroundWatcher.executable(of: getpid(), uid: getuid() &+ 1) == nil, "another user's process")
        #expect(ForegroundWatcher.executable(of: 0, uid: getuid()) == nil)
    }

    @Test("R1: in a Wayland session, without DISPLAY or without xprop the watcher does nothing and says why once",
          arguments: [
              (["DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"], "Wayland session"),
              (["DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland"], "Wayland session"),
              (["PATH": "/usr/bin"], "DISPLAY is not set"),
              (["DISPLAY": ":0", "PATH": "/nonexistent"], "x11-utils"),
          ] as [([String: String], String)])
    func nothingToWatch(environment: [String: String], why: String) {
        let logged = Mutex<[String]>([])
        let watcher = ForegroundWatcher.make(environment: environment, log: { line in logged.withLock { $0.append(line) } }, send: { _ in true })
        #expect(watcher == nil)
        #expect(logged.withLock { $0.count } == 1 && logged.withLock { $0[0].contains(why) }, "\(logged.withLock { $0 })")
    }

    @Test("R1: with a real X server, the focused window's process's executable; none when the focus is cleared, on a window without a pid, or on another user's process",
          .enabled(if: Desktop.can(needs: ForegroundWatcherTests.tools), Desktop.needsPrograms))
    func realX() throws {
        if Desktop.unavailable(needs: Self.tools) != nil { return }
        let dir = NSTemporaryDirectory() + "blockd-fg-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let processes = Processes()
        defer { processes.stopAll() }
        let x = try Xvfb.start(processes, log: dir + "/xvfb.log")
        defer { close(x.pipe) }
        let env = ["DISPLAY": x.display, "PATH": "/usr/bin:/bin"]
        func xprop(_ arguments: [String]) throws {
            let r = try Run.capture(Self.xprop, ["-display", x.display] + arguments)
            try #require(r.status == 0, "xprop \(arguments): \(r.output)")
        }
        // A window manager would keep _NET_ACTIVE_WINDOW on the root window (EWMH); the test does.
        try xprop(["-root", "-f", "_NET_ACTIVE_WINDOW", "32x", "-set", "_NET_ACTIVE_WINDOW", "0"])
        let (app, window) = try Self.window(named: "fg-app", processes: processes, display: x.display, log: dir + "/xmessage.log")
        try xprop(["-id", window, "-f", "_NET_WM_PID", "32c", "-set", "_NET_WM_PID", String(app.pid)])
        let (_, noPID) = try Self.window(named: "fg-nopid", processes: processes, display: x.display, log: dir + "/xmessage2.log")
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(app.pid)/exe")

        let stranger = try Self.othersProcess(processes, log: dir + "/other.log")
        let (_, others) = try Self.window(named: "fg-other", processes: processes, display: x.display, log: dir + "/xmessage3.log")
        try xprop(["-id", others, "-f", "_NET_WM_PID", "32c", "-set", "_NET_WM_PID", String(stranger)])

        let sent = Sent()
        let logged = Mutex<[String]>([])
        let made = ForegroundWatcher.make(environment: env, backoff: Backoff(first: 0.1, cap: 0.2), log: { line in logged.withLock { $0.append(line) } },
                                          send: { sent.send($0) })
        let watcher = try #require(made)
        watcher.start()
        try #require(Run.eventually { sent.all == [nil] }, "the focus at the start: none; sent \(sent.all)")
        let spy = try #require(watcher.xpropPID)
        var expected: [String?] = [nil]
        func focus(_ window: String?, _ app: String?, _ why: String) throws {
            if let window {
                try xprop(["-root", "-f", "_NET_ACTIVE_WINDOW", "32x", "-set", "_NET_ACTIVE_WINDOW", window])
            } else {
                try xprop(["-root", "-remove", "_NET_ACTIVE_WINDOW"])
            }
            expected.append(app)
            #expect(Run.eventually { sent.all == expected }, "\(why); sent \(sent.all)")
        }
        try focus(window, exe, "the focused window's executable")
        try focus(nil, nil, "the focus cleared: none")
        try focus(window, exe, "focused again")
        try focus(noPID, nil, "a window without _NET_WM_PID: none")
        try focus(window, exe, "focused again")
        try focus(others, nil, "another user's process: none")

        watcher.resend()  // blockd resubscribed: it hears the focus again
        expected.append(nil)
        #expect(sent.all == expected)
        try focus(window, exe, "focused again")

        kill(spy, SIGTERM)  // xprop went away by itself: none meanwhile, started again, the focus read anew
        expected += [nil, exe]
        #expect(Run.eventually { sent.all == expected }, "sent \(sent.all)")
        #expect(Run.eventually { kill(spy, 0) != 0 }, "the old xprop is reaped")
        let respawned = try #require(watcher.xpropPID)
        #expect(respawned != spy)
        #expect(logged.withLock { $0.filter { $0.contains("-spy stopped") }.count } == 1, "\(logged.withLock { $0 })")
        watcher.stop()
        #expect(Run.eventually { kill(respawned, 0) != 0 }, "xprop -spy is stopped and reaped")
        #expect(sent.all == expected + [nil], "on stop: nothing has the focus any more")
    }

    /// A process of another user than the one running the test: pid 1 (root's) for a user,
    /// a process started as nobody for root.
    static func othersProcess(_ processes: Processes, log: String) throws -> pid_t {
        guard getuid() == 0 else { return 1 }
        let sleeper = try processes.launch("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sleep", "600"], output: log)
        try #require(Run.eventually { (try? String(contentsOfFile: "/proc/\(sleeper.pid)/status", encoding: .utf8))?.contains("Uid:\t65534") == true })
        return sleeper.pid
    }

    /// An xmessage window and its id, found by name.
    static func window(named name: String, processes: Processes, display: String, log: String) throws -> (Child, String) {
        let child = try processes.launch(xmessage, ["-name", name, name], environment: ["DISPLAY": display], output: log)
        var id: String?
        _ = Run.eventually {
            let r = try? Run.capture(xwininfo, ["-display", display, "-name", name])
            id = r?.output.firstMatch(of: /Window id: (0x[0-9a-f]+)/).map { String($0.1) }
            return id != nil
        }
        return (child, try #require(id, "no window named \(name): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"))
    }
}
