import Foundation
import Glibc
import Testing
@testable import BlockDaemon

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
    let dir: String
    let app: String
    var appName: String { (app as NSString).lastPathComponent }
    private var children: [pid_t] = []

    init() throws {
        var template = Array("/tmp/bd-shield-XXXXXX".utf8CString)
        dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        app = dir + "/blockd-test-app-\(UInt32.random(in: 0...UInt32.max))"
        try ShieldScratch.copySleep(to: app)
    }

    deinit {
        // Only children not reaped yet: their pids cannot have been reused by anyone else.
        for pid in children {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(atPath: dir)
    }

    static func copySleep(to path: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: "/bin/sleep"))
        guard FileManager.default.createFile(atPath: path, contents: bytes, attributes: [.posixPermissions: 0o755]) else {
            throw POSIXError(.EIO)
        }
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
        let rc = posix_spawn(&pid, path, nil, &attr, &argv, environ)
        guard rc == 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO)) }
        children.append(pid)
        return .success(pid)
    }

    /// Starts the app with SIGTERM ignored: `trap '' TERM` survives exec, and the shell execs
    /// the app itself so that /proc/PID/exe is the app, not the shell. Waits for the exec.
    func spawnIgnoringTERM(seconds: Int) throws -> pid_t {
        let pid = try spawn("/bin/sh", ["-c", "trap '' TERM; exec '\(app)' \(seconds)"]).get()
        let id = ShieldScratch.fileID(app)
        _ = waitUntil { ProcessKiller.executable(of: pid) == id }
        return pid
    }

    /// Runs the app for a moment and says how it ended: nil when the exec itself failed.
    func runsToCompletion() -> Bool {
        guard case .success(let pid) = spawn(app, ["0"]) else { return false }
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

/// Polls `condition` every 5 ms until it holds or `timeout` passes.
@discardableResult
func waitUntil(timeout: TimeInterval = 3, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
