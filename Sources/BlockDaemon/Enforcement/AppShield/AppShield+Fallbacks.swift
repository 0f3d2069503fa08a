import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// E2's first fallback, where fanotify is unavailable: the kernel's proc connector announces
/// every exec over netlink (CAP_NET_ADMIN); a process that just exec'ed a blocked executable
/// is killed at once. The launch is not prevented, only cut short, and reported `.killed`.
final class ProcConnectorReader: @unchecked Sendable {
    private let sock: Int32
    private let thread = ReaderThread()
    private let table: ShieldTable
    private let killer: ProcessKiller
    private let log: any LogSink

    /// Takes ownership of `sock` (closed by `stop`).
    init(sock: Int32, table: ShieldTable, killer: ProcessKiller, log: any LogSink) {
        self.sock = sock
        self.table = table
        self.killer = killer
        self.log = log
    }

    /// Whether exec events can reach us at all: the kernel silently ignores listeners outside
    /// the initial user and PID namespaces (drivers/connector/cn_proc.c), so ask before relying on it.
    static func inInitialNamespaces() -> Bool {
        // PROC_USER_INIT_INO and PROC_PID_INIT_INO (include/linux/proc_ns.h).
        let user = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/user")
        let pid = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")
        return user == "user:[4026531837]" && pid == "pid:[4026531836]"
    }

    func start() { thread.start(name: "blockd.shield.proc-connector") { [self] in run() } }

    func stop() {
        thread.stop()
        close(sock)
    }

    private func run() {
        var tgids = [Int32](repeating: 0, count: 256)
        var lastError: Int32 = 0
        while true {
            let ready = blockd_poll2(sock, thread.wake, -1)
            if ready == 2 { break }
            var lost: Int32 = 0
            let n = ready == 1 ? tgids.withUnsafeMutableBufferPointer { blockd_proc_connector_read(sock, $0.baseAddress, Int32($0.count), &lost) } : 0
            if ready < 0 || n < 0 {
                // Keep listening: giving up would silently stop enforcement.
                let code = errno
                if code != lastError {
                    lastError = code
                    log.log(JournalEntry("The app shield's proc connector reader hit an error and keeps trying: \(String(cString: strerror(code))).", priority: .error, event: .failure))
                }
                usleep(10_000)
                continue
            }
            if lost != 0 {
                // Events were dropped under load: a blocked launch may be among them.
                let snapshot = table.snapshot()
                killer.stopAll(byID: snapshot.byID, byPath: snapshot.byPath, immediately: true)
            }
            guard n > 0 else { continue }
            for i in 0..<Int(n) {
                let pid = tgids[i]
                guard let id = ProcessKiller.executable(of: pid), let targets = table.lookup(id),
                      let target = ShieldTarget.denying(targets, pid: pid) else { continue }
                killer.stop(pid: pid, target: target, expected: id, immediately: true)
            }
        }
    }
}

/// The last resort (E2): scan /proc on a timer, only while something is blocked, and kill
/// what matches. Needs no capability beyond being allowed to signal the processes.
final class ProcScanner: @unchecked Sendable {
    private let interval: TimeInterval
    private let queue: DispatchQueue
    private let table: ShieldTable
    private let killer: ProcessKiller
    private var timer: DispatchSourceTimer?

    init(interval: TimeInterval, queue: DispatchQueue, table: ShieldTable, killer: ProcessKiller) {
        self.interval = interval
        self.queue = queue
        self.table = table
        self.killer = killer
    }

    /// Arms or disarms the timer to match whether anything is blocked. On the shield's queue.
    func update(active: Bool) {
        dispatchPrecondition(condition: .onQueue(queue))
        if active, timer == nil {
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
            t.setEventHandler { [weak self] in self?.scanOnce() }
            t.resume()
            timer = t
        } else if !active, let t = timer {
            t.cancel()
            timer = nil
        }
    }

    func scanOnce() {
        let snapshot = table.snapshot()
        killer.stopAll(byID: snapshot.byID, byPath: snapshot.byPath, immediately: true)
    }
}
