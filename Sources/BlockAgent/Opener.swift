import Dispatch
import FoundationEssentials
import Glibc

/// Opens an alternative in the user's session (S1): `xdg-open URL`, found on PATH when it is
/// needed, so that installing it later works and removing it takes the button away (S4).
struct Opener {
    var name = "xdg-open"
    var environment: [String: String]

    /// The opener's path, or nil when there is none (then no notification offers a button).
    func find() -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where dir.hasPrefix("/") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Starts the opener without a shell (the URL is one argv element, S7 already applied)
    /// and without waiting for it: a slow browser start must not hold up the next
    /// notification. The caller reaps the pid.
    func open(_ url: String) -> Result<pid_t, AgentError> {
        guard let path = find() else { return .failure(.spawn("no \(name) on PATH")) }
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup(url), nil]
        defer { for p in argv { free(p) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, nil, nil, argv, envp)
        guard rc == 0 else { return .failure(.spawn("\(path): \(String(cString: strerror(rc)))")) }
        return .success(pid)
    }
}

/// Children we started and have not reaped yet; reaped without blocking on every loop turn.
struct Children {
    private(set) var pids: [pid_t] = []

    mutating func add(_ pid: pid_t) { pids.append(pid) }

    /// Reaps the exited ones; returns those that failed, with their status, for the log.
    mutating func reap() -> [(pid: pid_t, status: Int32)] {
        var failed: [(pid_t, Int32)] = []
        pids.removeAll { pid in
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == 0 { return false }
            if r == pid, status != 0 { failed.append((pid, status)) }
            return true
        }
        return failed
    }
}
