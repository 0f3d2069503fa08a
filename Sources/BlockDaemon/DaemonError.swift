import Glibc

/// The one error type of BlockDaemon (one error type per layer; BlockCore's is `CoreError`):
/// what the machine refused at the edge. Its description is a sentence for people that says
/// what happened, and, where blockd cannot know better, what to do next.
public enum DaemonError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed: what blockd was doing, and the errno.
    case system(String, Int32)
    /// Another blockd holds the state directory (§7: one daemon per state directory); its pid
    /// when the lock file names one.
    case held(directory: String, pid: Int32?)
    /// Anything else blockd cannot go on with, said whole.
    case refused(String)

    /// The errno behind the failure, when a system call gave one.
    public var errno: Int32? {
        if case .system(_, let code) = self { code } else { nil }
    }

    public var description: String {
        switch self {
        case .system(let what, let code): "\(what): \(String(cString: strerror(code)))"
        case .held(let dir, let pid):
            "another blockd\(pid.map { " (pid \($0))" } ?? "") is already running on the state directory \(dir); stop it first (systemctl stop blockd), or give this one another --state-dir"
        case .refused(let text): text
        }
    }
}
