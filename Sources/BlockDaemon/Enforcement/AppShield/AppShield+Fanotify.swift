import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// A dedicated thread that waits on one descriptor and a wake-up eventfd, and can be stopped
/// by signalling the eventfd and waiting for the thread to finish (both shield readers).
final class ReaderThread: @unchecked Sendable {
    let wake = blockd_eventfd()
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    func start(name: String, _ body: @escaping @Sendable () -> Void) {
        guard !started else { return }
        started = true
        startThread(name: name) { [finished] in
            body()
            finished.signal()
        }
    }

    /// Wakes the thread, waits for it to leave its loop, and closes the eventfd.
    func stop() {
        if started {
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
            finished.wait()
            started = false
        }
        close(wake)
    }
}

/// The dedicated thread that answers fanotify permission events (E2). Every exec of a marked
/// inode waits in the kernel until this thread writes FAN_ALLOW or FAN_DENY, so the path from
/// read() to the response holds only: fstat (done in the C shim), a locked dictionary lookup,
/// the write and a close. Logging and shield-hit delivery happen after the batch is answered.
final class FanotifyReader: @unchecked Sendable {
    let group: Int32
    private let thread = ReaderThread()
    private let table: ShieldTable
    private let hits: ShieldHitSink
    private let log: any LogSink

    /// Takes ownership of `group` (closed by `stop`).
    init(group: Int32, table: ShieldTable, hits: @escaping ShieldHitSink, log: any LogSink) {
        self.group = group
        self.table = table
        self.hits = hits
        self.log = log
    }

    func start() { thread.start(name: "blockd.shield.fanotify") { [self] in run() } }

    /// Stops the thread and closes the group. Closing a fanotify group makes the kernel allow
    /// whatever is still pending, so nothing is left hanging (fanotify(7)).
    func stop() {
        thread.stop()
        close(group)
    }

    private func run() {
        // Allocated once: nothing on the answering path allocates per event.
        var events = [blockd_fan_event](repeating: blockd_fan_event(), count: 64)
        var denied: [(ShieldTarget, Int32, UInt32?)] = []
        denied.reserveCapacity(64)
        let execPerm = blockd_fan_open_exec_perm()
        var overflows = 0
        var lastError: Int32 = 0
        // Leaves only when told to: while marks exist, a reader that gave up would leave every
        // launch of a blocked app hanging in the kernel. Errors are logged once and retried.
        while true {
            let ready = blockd_poll2(group, thread.wake, -1)
            if ready == 2 { break }
            let n = ready == 1 ? events.withUnsafeMutableBufferPointer { blockd_fanotify_read(group, $0.baseAddress, Int32($0.count)) } : 0
            if ready < 0 || n < 0 {
                let code = errno
                if code != lastError {
                    lastError = code
                    let what = code == EPROTO ? "events of an unknown fanotify metadata version (they were allowed)" : String(cString: strerror(code))
                    log.log(JournalEntry("The app shield's fanotify reader hit an error and keeps trying: \(what).", priority: .error, event: .failure))
                }
                usleep(10_000)
                continue
            }
            for i in 0..<Int(n) {
                let event = events[i]
                if event.overflow != 0 { overflows += 1 }
                guard event.fd >= 0 else { continue }
                var target: ShieldTarget?
                if event.stat_ok != 0, event.mask & execPerm != 0, let targets = table.lookup(FileID(dev: event.dev, ino: event.ino)) {
                    // The pid is the process calling execve, still with its own credentials
                    // (the check runs before a setuid bit takes effect) and waiting for us.
                    target = ShieldTarget.denying(targets, pid: event.pid)
                }
                // Whose launch it was (U3), read while the caller still waits in execve.
                let person = target == nil ? nil : ProcessUsers.of(event.pid)?.person
                _ = blockd_fanotify_respond(group, event.fd, target == nil ? 1 : 0)
                close(event.fd)
                if let target { denied.append((target, event.pid, person)) }
            }
            // Only now, with every exec in this batch answered: report (S5) and log.
            for (target, pid, person) in denied {
                hits(ShieldHit(kind: .deniedLaunch, selection: target.selection, path: target.path, app: target.app, pid: pid, uid: person))
            }
            denied.removeAll(keepingCapacity: true)
            if overflows > 0 {
                log.warning("The app shield's fanotify queue overflowed \(overflows) time(s); some events were lost.")
                overflows = 0
            }
        }
    }
}
