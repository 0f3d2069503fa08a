import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// E3: runs a selection's `ExecOnBlock=` / `ExecOnUnblock=` when it is locked or unlocked,
/// with `/bin/sh -c`, the selection and its targets in the environment, and a timeout.
/// Hooks run on their own queue, one at a time in order; enforcement never waits for them.
public protocol HookRunning: Sendable {
    func run(_ event: HookRunner.Event, selection: Selection, until: String?)
}

/// The real hooks: `/bin/sh -c` with a timeout; failures are posted to the engine's inbox.
public final class HookRunner: HookRunning, @unchecked Sendable {
    public typealias Event = HookEvent

    let queue = DispatchQueue(label: "blockd.hooks")
    let timeout: TimeInterval
    /// Where failures go (from the hook queue): the engine records them (T4).
    let inbox: EngineInbox

    public init(timeout: TimeInterval = 30, inbox: EngineInbox) {
        self.timeout = timeout
        self.inbox = inbox
    }

    public func run(_ event: Event, selection: Selection, until: String?) {
        guard let command = event == .block ? selection.execOnBlock : selection.execOnUnblock else { return }
        let key = event == .block ? "ExecOnBlock" : "ExecOnUnblock"
        var environment = [
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "BLOCKD_EVENT": event.rawValue,
            "BLOCKD_SELECTION": selection.name,
            "BLOCKD_DOMAINS": selection.domains.joined(separator: " "),
            "BLOCKD_APPS": selection.apps.joined(separator: " "),
        ]
        if let until { environment["BLOCKD_UNTIL"] = until }
        let env = environment
        queue.async { [self] in
            if let problem = execute(command, environment: env) {
                let error = CoreError(.hookFailed, "\(key)= of '\(selection.name)' (\(command)) \(problem)")
                inbox.post(.hookFailed(error, selection: selection.name))
            }
        }
    }

    /// Runs `command` to completion or the timeout; nil on success, else what went wrong.
    /// The hook gets its own process group, so a timeout kills everything it started.
    func execute(_ command: String, environment: [String: String]) -> String? {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return "could not be started: no pipe" }
        let (readEnd, writeEnd) = (pipeFDs[0], pipeFDs[1])
        let (pid, spawned) = spawn(command, environment: environment, stderr: writeEnd, closing: readEnd)
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            return "could not be started: \(String(cString: strerror(spawned)))"
        }
        return outcome(of: pid, stderr: readEnd)
    }

    /// `/bin/sh -c command` in its own process group, stdin and stdout on /dev/null, stderr
    /// into `stderr`: its pid, and 0 or the errno of a failed start.
    private func spawn(_ command: String, environment: [String: String], stderr writeEnd: Int32, closing readEnd: Int32) -> (pid_t, Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own process group; default signal dispositions (blockd ignores SIGPIPE, and ignored
        // signals would survive exec); nothing blocked.
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, envp)
        return (pid, spawned)
    }

    /// Waits for the hook (at most `timeout`), then kills what is left of its group; nil on
    /// success, else what went wrong with the start of its stderr.
    private func outcome(of pid: pid_t, stderr readEnd: Int32) -> String? {
        // Keep the start of stderr for the failure message; drain the rest so a chatty hook
        // never blocks on a full pipe. `kept` is read only after `drained`.
        final class Kept: @unchecked Sendable { var data: [UInt8] = [] }
        let kept = Kept()
        let drained = DispatchSemaphore(value: 0)
        // Queues of their own, not the global pool, whose thread monitor kills the process in
        // a PID namespace with the host's /proc (Connection.queue says more); each one blocks.
        DispatchQueue(label: "blockd.hooks.stderr").async {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                if kept.data.count < 512 { kept.data += buffer[0..<min(n, 512 - kept.data.count)] }
            }
            close(readEnd)
            drained.signal()
        }
        final class Status: @unchecked Sendable { var value: Int32 = 0 }
        let status = Status()
        let exited = DispatchSemaphore(value: 0)
        let child = pid
        DispatchQueue(label: "blockd.hooks.wait").async {
            while waitpid(child, &status.value, 0) < 0 && errno == EINTR {}
            exited.signal()
        }
        var timedOut = false
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(-pid, SIGKILL)
            exited.wait()
        }
        // Whatever the hook left running in its group goes too, so the pipe closes.
        kill(-pid, SIGKILL)
        drained.wait()
        if timedOut { return "did not finish within \(timeout == timeout.rounded() ? String(Int(timeout)) : String(timeout)) s and was killed" }
        let code = status.value
        let exitedNormally = code & 0x7f == 0
        let exitStatus = (code >> 8) & 0xff
        guard exitedNormally, exitStatus == 0 else {
            let what = exitedNormally ? "exited with status \(exitStatus)" : "was killed by signal \(code & 0x7f)"
            let detail = String(decoding: kept.data, as: UTF8.self).trimmed()
            return detail.isEmpty ? what : "\(what): \(detail)"
        }
        return nil
    }
}
