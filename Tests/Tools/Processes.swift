import Foundation
import Glibc

/// A program started with posix_spawn and a clean signal mask. Foundation's Process hands
/// its children the spawning thread's mask, with SIGTERM blocked, so they could only be
/// killed; these stop on SIGTERM as they do under systemd.
public final class Child: @unchecked Sendable {
    public let pid: pid_t
    private var status: Int32?

    /// `stdinFD`, `stdoutFD`: descriptors for its stdin (else /dev/null) and stdout (else its
    /// stderr, the `output` file); they should be close-on-exec here, so only the child has them.
    public init(_ path: String, _ arguments: [String], environment: [String: String], output: String, stdoutFD: Int32? = nil,
                stdinFD: Int32? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdinFD { posix_spawn_file_actions_adddup2(&actions, stdinFD, 0) } else { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        posix_spawn_file_actions_addopen(&actions, 2, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let stdoutFD { posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1) } else { posix_spawn_file_actions_adddup2(&actions, 2, 1) }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        guard rc == 0 else { throw TestFailure("cannot start \(path): \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    public var isRunning: Bool {
        guard status == nil else { return false }
        var s: Int32 = 0
        if waitpid(pid, &s, WNOHANG) == pid { status = s }
        return status == nil
    }

    /// The exit status once it has exited (nil while running or if killed by a signal).
    public var exitStatus: Int32? {
        guard !isRunning, let status, status & 0x7f == 0 else { return nil }
        return (status >> 8) & 0xff
    }

    public func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if !Run.eventually(timeout: 3, { !isRunning }) {
            kill(pid, SIGKILL)
            _ = Run.eventually(timeout: 3) { !isRunning }
        }
    }
}

/// Running programs; every one is stopped (TERM, then KILL) when this goes away, pass or fail.
public final class Processes: @unchecked Sendable {
    private var running: [Child] = []

    public init() {}

    deinit { stopAll() }

    @discardableResult
    public func launch(_ path: String, _ arguments: [String], environment: [String: String] = [:], output: String,
                       stdoutFD: Int32? = nil, stdinFD: Int32? = nil) throws -> Child {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let child = try Child(path, arguments, environment: env, output: output, stdoutFD: stdoutFD, stdinFD: stdinFD)
        running.append(child)
        return child
    }

    /// Last started, first stopped: the agent before the server before the bus.
    public func stopAll() {
        for child in running.reversed() { child.stop() }
        running = []
    }
}
