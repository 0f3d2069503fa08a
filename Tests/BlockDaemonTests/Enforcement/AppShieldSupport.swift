import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon
import BlockTestTools

/// Shield hits as the engine would receive them, from any thread.
final class HitRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [ShieldHit] = []

    var sink: ShieldHitSink { { [self] hit in lock.withLock { stored.append(hit) } } }
    var all: [ShieldHit] { lock.withLock { stored } }
    func of(_ kind: ShieldHit.Kind) -> [ShieldHit] { all.filter { $0.kind == kind } }
}

/// A temp directory holding the test's own copy of /bin/sleep under a random name: the only
/// file any shield in these tests marks, and the only processes they can kill are the ones
/// the test started from it. Every process started here is killed and reaped on deinit,
/// whether the test passed or not.
final class ShieldScratch {
    private let temp: TempDir
    var dir: String { temp.path }
    let app: String
    var appName: String { (app as NSString).lastPathComponent }
    private var children: [pid_t] = []

    init() throws {
        temp = try TempDir(prefix: "bd-shield-")
        app = temp.path + "/blockd-test-app-\(UInt32.random(in: 0...UInt32.max))"
        try ShieldScratch.copySleep(to: app)
    }

    deinit {
        // Only children not reaped yet: their pids cannot have been reused by anyone else.
        for pid in children {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    /// A copy of /bin/sleep, made by cp(1) rather than in this process: a write descriptor held
    /// here while another test thread forks is inherited by that child, and the copy cannot be
    /// run (ETXTBSY) until it execs.
    static func copySleep(to path: String) throws {
        guard ThrowawayUsers.run("/bin/cp", ["/bin/sleep", path]), chmod(path, 0o755) == 0 else { throw POSIXError(.EIO) }
    }

    /// Replaces the app the way a package manager does: a new file renamed over the old one.
    func replaceApp() throws {
        let temp = dir + "/.upgrade-\(UInt32.random(in: 0...UInt32.max))"
        try ShieldScratch.copySleep(to: temp)
        guard rename(temp, app) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// posix_spawn; returns the pid, or the errno the exec failed with (EPERM when denied).
    func spawn(_ path: String, _ args: [String]) -> Result<pid_t, POSIXError> {
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + args).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // Test threads (and libdispatch's) block signals, and a spawned child inherits the
        // mask: start it with nothing blocked and SIGTERM at its default, as a user's app is.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var term = sigset_t()
        sigemptyset(&term)
        sigaddset(&term, SIGTERM)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &term)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // ETXTBSY: another test thread forked while this file was still open for writing (the
        // copy), and its child holds that descriptor until it execs. It passes; try again.
        var rc = posix_spawn(&pid, path, nil, &attr, &argv, environ)
        for _ in 0..<100 where rc == ETXTBSY {
            usleep(10_000)
            rc = posix_spawn(&pid, path, nil, &attr, &argv, environ)
        }
        guard rc == 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO)) }
        children.append(pid)
        return .success(pid)
    }

    /// Starts the app with SIGTERM ignored: `trap '' TERM` survives exec, and the shell execs
    /// the app itself so that /proc/PID/exe is the app, not the shell. Waits for the exec.
    func spawnIgnoringTERM(seconds: Int) throws -> pid_t {
        let pid = try spawn("/bin/sh", ["-c", "trap '' TERM; exec '\(app)' \(seconds)"]).get()
        let id = ShieldScratch.fileID(app)
        _ = Run.eventually(timeout: 3) { ProcessKiller.executable(of: pid) == id }
        return pid
    }

    /// Runs the app (or `path`) for a moment and says whether it ran and exited 0.
    func runsToCompletion(path: String? = nil) -> Bool {
        guard case .success(let pid) = spawn(path ?? app, ["0"]) else { return false }
        return wait(pid, timeout: 5).map { $0 == 0 } ?? false
    }

    static func fileID(_ path: String) -> FileID? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileID(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino))
    }

    /// The raw wait status once the child `pid` ended (and is reaped), or nil on timeout.
    func wait(_ pid: pid_t, timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        repeat {
            if waitpid(pid, &status, WNOHANG) == pid {
                children.removeAll { $0 == pid }
                return status
            }
            usleep(5_000)
        } while Date() < deadline
        return nil
    }

    /// The signal that ended a process (0 when it exited normally).
    static func termSignal(_ status: Int32) -> Int32 { status & 0x7f }
}

/// Two throwaway system users (no home, no shell) for per-user tests, created with useradd
/// and removed with userdel on deinit, pass or fail, as torture/perms.py does. Root only.
final class ThrowawayUsers {
    struct User {
        var name: String
        var uid: UInt32
        var gid: UInt32
    }

    let kid: User
    let other: User
    private var created: [String] = []

    init() throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        var made: [User] = []
        for role in ["k", "o"] {
            let name = "bdsh-\(role)-\(tag)"
            guard ThrowawayUsers.run("/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name]) else {
                for n in made.map(\.name) { _ = ThrowawayUsers.run("/usr/sbin/userdel", [n]) }
                throw POSIXError(.EPERM)
            }
            guard let pw = getpwnam(name) else { throw POSIXError(.ENOENT) }
            made.append(User(name: name, uid: pw.pointee.pw_uid, gid: pw.pointee.pw_gid))
        }
        (kid, other) = (made[0], made[1])
        created = made.map(\.name)
    }

    deinit {
        for name in created { _ = ThrowawayUsers.run("/usr/sbin/userdel", [name]) }
    }

    static func run(_ tool: String, _ args: [String]) -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }
}

extension ShieldScratch {
    /// Lets other users execute the copy (mkdtemp makes the directory 0700).
    func openToEveryone() {
        chmod(dir, 0o755)
    }

    /// Runs the app as `user` (real and effective uid and gid, no supplementary groups), through
    /// setpriv, which execs the app in the same process: the exec is the user's own.
    func spawn(as user: ThrowawayUsers.User, _ args: [String]) -> Result<pid_t, POSIXError> {
        spawn("/usr/bin/setpriv", ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--", app] + args)
    }

    /// Runs the app as root with the login uid of `user`, as `sudo APP` run in `user`'s login
    /// session is: real uid 0, /proc/PID/loginuid the user's.
    func spawnSudo(loginOf user: ThrowawayUsers.User, _ args: [String]) -> Result<pid_t, POSIXError> {
        spawn("/bin/sh", ["-c", "echo \(user.uid) > /proc/self/loginuid && exec '\(app)' \(args.joined(separator: " "))"])
    }

    /// Waits until `pid` runs the app (after setpriv's or the shell's exec).
    func waitForApp(_ pid: pid_t) -> Bool {
        let id = ShieldScratch.fileID(app)
        return Run.eventually(timeout: 3) { ProcessKiller.executable(of: pid) == id }
    }

    /// Whether the child `pid` still runs (not exited, not killed).
    func stillRuns(_ pid: pid_t) -> Bool { wait(pid, timeout: 0) == nil }
}
