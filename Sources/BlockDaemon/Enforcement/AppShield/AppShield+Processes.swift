import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// Finding and stopping running instances of blocked executables (E2: SIGTERM, then SIGKILL
/// after `KillGrace=`). Signals go through pidfds, re-checked after opening, so a pid reused
/// by an unrelated process between the scan and the signal is never hit.
final class ProcessKiller: @unchecked Sendable {
    let grace: TimeInterval
    let hits: ShieldHitSink
    /// Waits out the grace period off the caller's thread: apply() never blocks for seconds.
    private let graceQueue = DispatchQueue(label: "blockd.shield.kill")
    private let ownPID = getpid()
    /// Processes between SIGTERM and the grace deadline: a scan or exec event that sees them
    /// again must not cut KillGrace short or report them twice.
    private let lock = Lock()
    private var terminating: Set<Int32> = []

    init(grace: TimeInterval, hits: @escaping ShieldHitSink) {
        self.grace = grace
        self.hits = hits
    }

    /// The executable behind a running process, by inode; nil for kernel threads, zombies
    /// and processes that already went away.
    static func executable(of pid: Int32) -> FileID? {
        var st = stat()
        guard stat("/proc/\(pid)/exe", &st) == 0 else { return nil }
        return FileID(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino))
    }

    /// `/proc/PID/exe` as a path, without the ` (deleted)` the kernel appends once the file
    /// was replaced.
    static func executablePath(of pid: Int32) -> String? {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/\(pid)/exe", &buf, Int(PATH_MAX))
        guard n > 0 else { return nil }
        var path = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        return path
    }

    static func allPIDs() -> [Int32] {
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var pids: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if let pid = Int32(name), pid > 0 { pids.append(pid) }
        }
        return pids
    }

    /// Running processes of blocked executables, of users the block is for: by inode, or by
    /// path for instances still running a replaced (deleted) older file.
    func scan(byID: [FileID: [ShieldTarget]], byPath: [String: [ShieldTarget]]) -> [(pid: Int32, target: ShieldTarget, id: FileID?)] {
        guard !byID.isEmpty else { return [] }
        var found: [(Int32, ShieldTarget, FileID?)] = []
        for pid in ProcessKiller.allPIDs() where pid != ownPID {
            guard let id = ProcessKiller.executable(of: pid) else { continue }
            if let targets = byID[id] {
                if let target = ShieldTarget.denying(targets, pid: pid) { found.append((pid, target, id)) }
            } else if !byPath.isEmpty, let path = ProcessKiller.executablePath(of: pid), let targets = byPath[path],
                      let target = ShieldTarget.denying(targets, pid: pid) {
                found.append((pid, target, nil))
            }
        }
        return found
    }

    /// Scans and stops every match (see `stop`).
    func stopAll(byID: [FileID: [ShieldTarget]], byPath: [String: [ShieldTarget]], immediately: Bool) {
        for (pid, target, id) in scan(byID: byID, byPath: byPath) {
            stop(pid: pid, target: target, expected: id, immediately: immediately)
        }
    }

    /// Stops `pid` if it still runs `target`: SIGTERM and SIGKILL after the grace period, or
    /// SIGKILL at once (`immediately`: a launch caught right after exec has nothing to save).
    /// Reports a `.killed` hit (S5) once the first signal was delivered.
    @discardableResult
    func stop(pid: Int32, target: ShieldTarget, expected: FileID?, immediately: Bool = false) -> Bool {
        // Claimed atomically: the scan timer, the exec reader and apply() may all see it.
        guard lock.withLock({ terminating.insert(pid).inserted }) else { return false }
        let pidfd = blockd_pidfd_open(pid)
        // Re-check through the live pid now that the pidfd pins the process we will signal.
        let stillMatches = pidfd >= 0 && (expected.map { ProcessKiller.executable(of: pid) == $0 }
            ?? (ProcessKiller.executablePath(of: pid) == target.path))
        let first = immediately || grace <= 0 ? SIGKILL : SIGTERM
        let person = stillMatches ? ProcessUsers.of(pid)?.person : nil  // whose app it was (U3)
        guard stillMatches, blockd_pidfd_signal(pidfd, first) == 0 else {
            if pidfd >= 0 { close(pidfd) }
            release(pid)
            return false
        }
        hits(ShieldHit(kind: .killed, selection: target.selection, path: target.path, app: target.app, pid: pid, uid: person))
        let deadline = first == SIGKILL ? nil : DispatchTime.now() + grace
        graceQueue.asyncAfter(deadline: .now() + min(grace, 0.02)) { [self] in follow(pid: pid, pidfd: pidfd, killAt: deadline) }
        return true
    }

    /// Until the process is gone it stays claimed (no second signal, no second hit); SIGKILL
    /// once the grace period is over.
    private func follow(pid: Int32, pidfd: Int32, killAt: DispatchTime?, checks: Int = 0) {
        // Bounded after SIGKILL (an unkillable D-state process must not be followed forever).
        if blockd_pidfd_exited(pidfd) != 0 || checks > 500 {
            close(pidfd)
            release(pid)
            return
        }
        var next = killAt
        if let killAt, DispatchTime.now() >= killAt {
            _ = blockd_pidfd_signal(pidfd, SIGKILL)
            next = nil
        }
        let killAtNext = next
        let wait = killAtNext.map { min($0, .now() + 0.02) } ?? .now() + 0.02
        let count = killAtNext == nil ? checks + 1 : 0
        graceQueue.asyncAfter(deadline: wait) { [self] in follow(pid: pid, pidfd: pidfd, killAt: killAtNext, checks: count) }
    }

    private func release(_ pid: Int32) {
        lock.withLock { _ = terminating.remove(pid) }
    }
}
