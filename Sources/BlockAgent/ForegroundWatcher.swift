import BlockClient
import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// R1: which app has the focus in this X11 session, for blockd's foreground time. blockd is
/// root and outside the session, so it cannot ask the X server; this agent can.
///
/// `xprop -root -spy _NET_ACTIVE_WINDOW` runs as a child for the agent's whole life and prints
/// a line only when the window manager changes the property (EWMH): the thread reading it
/// sleeps in read(2) meanwhile, so nothing wakes up while nothing changes. On each change the
/// window's `_NET_WM_PID` (another xprop) gives a process; when it is this user's own, its
/// executable (`/proc/PID/exe`) is what blockd hears (`foreground`), else none. blockd keeps
/// the last word per uid and counts it only while that app runs for this user.
///
/// Wayland has no standard way for a client to learn the focused window, so in a Wayland
/// session (and without DISPLAY or xprop) the watcher does nothing and says so once.
public final class ForegroundWatcher: Sendable {
    /// Sends what has the focus now (nil: none of ours); true when blockd answered.
    public typealias Send = @Sendable (String?) -> Bool

    let xprop: String
    let environment: [String: String]
    let uid: uid_t
    let log: @Sendable (String) -> Void
    let send: Send
    let backoff: Backoff

    private struct State {
        /// What has the focus, once the first line was read (nil inside: none of ours).
        var focus: String??
        /// Whether blockd has `focus`.
        var delivered = false
        var child: pid_t?
        var stopped = false
    }
    private let state = Mutex(State())
    /// One request at a time, so that blockd hears the changes in order.
    private let sending = Mutex(())
    /// Ends a pause between two xprop runs at once on `stop` (no polling meanwhile).
    private let stopping = DispatchSemaphore(value: 0)

    /// Nil, after logging why once, when this session cannot say what has the focus.
    public static func make(environment: [String: String], uid: uid_t = getuid(), backoff: Backoff = Backoff(first: 1, cap: 300),
                            log: @escaping @Sendable (String) -> Void, send: @escaping Send) -> ForegroundWatcher? {
        switch ForegroundWatcher.xprop(in: environment) {
        case .failure(let why):
            log("no foreground time for blockd's report: \(why)")
            return nil
        case .success(let path):
            return ForegroundWatcher(xprop: path, environment: environment, uid: uid, backoff: backoff, log: log, send: send)
        }
    }

    init(xprop: String, environment: [String: String], uid: uid_t, backoff: Backoff, log: @escaping @Sendable (String) -> Void, send: @escaping Send) {
        (self.xprop, self.environment, self.uid, self.backoff, self.log, self.send) = (xprop, environment, uid, backoff, log, send)
    }

    /// xprop's path in an X11 session, or why there is nothing to watch.
    static func xprop(in environment: [String: String]) -> Result<String, AgentError> {
        if environment["XDG_SESSION_TYPE"] == "wayland" || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
            return .failure(.noFocus("this is a Wayland session, where no standard interface tells a client which window has the focus"))
        }
        guard !(environment["DISPLAY"] ?? "").isEmpty else { return .failure(.noFocus("no X11 display (DISPLAY is not set)")) }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where dir.hasPrefix("/") && access("\(dir)/xprop", X_OK) == 0 {
            return .success("\(dir)/xprop")
        }
        return .failure(.noFocus("xprop is not installed (Debian package x11-utils)"))
    }

    /// The running xprop -spy, for tests.
    var xpropPID: pid_t? { state.withLock { $0.child } }

    /// Starts the reading thread.
    public func start() {
        NotifyAgent.detach { [self] in run() }
    }

    /// Stops xprop, and tells blockd nothing has the focus any more (the session is ending).
    public func stop() {
        let child: pid_t? = state.withLock { s in
            s.stopped = true
            return s.child
        }
        if let child { kill(child, SIGTERM) }
        stopping.signal()
        report(nil)
    }

    /// blockd (re)subscribed: it may have restarted and forgotten; tells it again.
    public func resend() {
        state.withLock { $0.delivered = false }
        deliver()
    }

    /// Runs xprop -spy until `stop`; when it exits by itself (the display went away, no
    /// window manager yet), starts it again after a growing pause, saying so once.
    func run() {
        var backoff = self.backoff
        var failing = false
        while !state.withLock({ $0.stopped }) {
            let arguments = ["-root", "-notype", "-spy", "-f", "_NET_ACTIVE_WINDOW", "32x", " $0\\n", "_NET_ACTIVE_WINDOW"]
            guard let child = Spawned.start(xprop, arguments, environment: environment) else {
                log("cannot start \(xprop); no foreground time for blockd's report")
                return
            }
            let stopped = state.withLock { s in
                s.child = child.pid
                return s.stopped
            }
            if stopped { kill(child.pid, SIGTERM) }
            var reader = LineReader(fd: child.output)
            var lines = 0
            while let line = reader.next() {
                lines += 1
                if failing { log("following the focused window again") }
                failing = false
                backoff.reset()
                report(focusedApp(line))
            }
            close(child.output)
            child.wait()
            state.withLock { $0.child = nil }
            if state.withLock({ $0.stopped }) { return }
            report(nil)  // nothing known: nothing counted
            if !failing { log("\(xprop) -spy stopped\(lines == 0 ? " without output" : ""); trying again with backoff (up to \(Int(backoff.cap))s)") }
            failing = true
            _ = stopping.wait(timeout: .now() + backoff.delay())
        }
    }

    /// The executable of this user's process behind the window a spy line names, if any.
    func focusedApp(_ line: String) -> String? {
        guard let window = ForegroundWatcher.window(in: line) else { return nil }
        let arguments = ["-notype", "-id", "0x" + String(window, radix: 16), "-f", "_NET_WM_PID", "32c", " $0\\n", "_NET_WM_PID"]
        guard let text = Spawned.output(xprop, arguments, environment: environment),
              let pid = ForegroundWatcher.pid(in: text) else { return nil }
        return ForegroundWatcher.executable(of: pid, uid: uid)
    }

    /// A new focus: sent unless blockd already has it.
    func report(_ app: String?) {
        let changed = state.withLock { s in
            if s.focus == .some(app) { return false }
            s.focus = .some(app)
            s.delivered = false
            return true
        }
        if changed { deliver() }
    }

    func deliver() {
        sending.withLock { _ in
            guard let focus = state.withLock({ s in s.delivered ? nil : s.focus }) else { return }
            let ok = send(focus)
            state.withLock { s in if s.focus == .some(focus) { s.delivered = ok } }
        }
    }

    // MARK: Reading xprop and /proc

    /// The window in `_NET_ACTIVE_WINDOW 0x1e00007` (what `-f ... 32x ' $0\n'` prints); nil
    /// for none (0, "not found.", anything else).
    static func window(in line: String) -> UInt32? {
        let words = line.split(separator: " ")
        guard words.count == 2, words[0] == "_NET_ACTIVE_WINDOW", words[1].hasPrefix("0x"),
              let id = UInt32(words[1].dropFirst(2), radix: 16), id != 0 else { return nil }
        return id
    }

    /// The pid in `_NET_WM_PID 4242`; nil for none.
    static func pid(in text: String) -> pid_t? {
        let words = text.split(separator: " ")
        guard words.count == 2, words[0] == "_NET_WM_PID", let pid = pid_t(words[1]), pid > 0 else { return nil }
        return pid
    }

    /// `/proc/PID/exe` of a process that is `uid`'s own (after a package upgrade the kernel
    /// adds " (deleted)": the path is still the app's); nil for another user's or a gone one.
    static func executable(of pid: pid_t, uid: uid_t, proc: String = "/proc") -> String? {
        var st = stat()
        guard stat("\(proc)/\(pid)", &st) == 0, st.st_uid == uid else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("\(proc)/\(pid)/exe", &buffer, Int(PATH_MAX))
        guard n > 0 else { return nil }
        var path = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        return path.hasPrefix("/") ? path : nil
    }
}

extension NotifyAgent {
    /// R1: the foreground watcher of an X11 session (nil elsewhere, said once in the log). It
    /// reaches blockd like the more-time buttons (M4): a short connection of its own per word,
    /// as this user, so blockd counts it for the uid SO_PEERCRED gives and no other.
    static func foregroundWatcher(path: String, environment: [String: String], log: @escaping @Sendable (String) -> Void) -> ForegroundWatcher? {
        let refusalLogged = Mutex(false)
        return ForegroundWatcher.make(environment: environment, log: log) { app in
            guard let connection = try? ControlConnection(path: path, timeout: 2) else { return false }
            defer { connection.close() }
            switch try? connection.send(.foreground(app: app)) {
            case .ok?: return true
            case .error(let e)?:
                // An older blockd knows no `foreground`: one line, not one per focus change.
                let first = refusalLogged.withLock { logged in
                    defer { logged = true }
                    return !logged
                }
                if first {
                    log("blockd refused 'foreground' (\(e.code.rawValue)): \(e.message); the report shows no foreground time")
                }
                return true
            case .event?, nil: return false
            }
        }
    }
}
