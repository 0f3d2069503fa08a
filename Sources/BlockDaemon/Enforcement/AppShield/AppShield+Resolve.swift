import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// An inode, the identity the kernel checks on exec (E2): a package upgrade that replaces the
/// file at the same path gives a new `FileID`, which is why marks are re-made on change.
struct FileID: Hashable, Sendable {
    var dev: UInt64
    var ino: UInt64
}

/// What a blocked executable is reported as in a shield hit (S5).
struct ShieldTarget: Equatable, Sendable {
    var selection: String
    /// The resolved executable (realpath).
    var path: String
    /// The `Apps=` entry's name (`firefox` for `firefox` or `/usr/bin/firefox`).
    var app: String
    /// Whose processes it is blocked for: from `Selection.users`, or login users for an
    /// allow-only window for everyone (W2).
    var users: ShieldScope = .everyone
}

/// The blocked executables by inode, each with the targets that block it (one per selection,
/// in selection-name order: per-user blocks of one file by several selections add up), read
/// by the fanotify and proc-connector readers on their own threads and written by the
/// shield's queue. A lock, not the queue: a permission reply must never wait behind an
/// apply() (E2: nothing slow before the response).
final class ShieldTable: @unchecked Sendable {
    private let lock = Lock()
    private var byID: [FileID: [ShieldTarget]] = [:]

    func lookup(_ id: FileID) -> [ShieldTarget]? {
        lock.lock()
        defer { lock.unlock() }
        return byID[id]
    }

    func set(_ id: FileID, _ targets: [ShieldTarget]?) {
        lock.lock()
        byID[id] = targets
        lock.unlock()
    }

    /// A copy for a /proc scan, which also matches by path (a process still running an older
    /// inode of a replaced executable shows `/proc/PID/exe` as `path (deleted)`).
    func snapshot() -> (byID: [FileID: [ShieldTarget]], byPath: [String: [ShieldTarget]]) {
        lock.lock()
        defer { lock.unlock() }
        return (byID, ShieldTable.byPath(byID))
    }

    static func byPath(_ byID: [FileID: [ShieldTarget]]) -> [String: [ShieldTarget]] {
        var byPath: [String: [ShieldTarget]] = [:]
        for targets in byID.values {
            guard let path = targets.first?.path, byPath[path] == nil else { continue }
            byPath[path] = targets
        }
        return byPath
    }
}

/// One `Apps=` entry resolved to an open executable: the fd is what gets marked, so the mark
/// lands on exactly the inode that was looked up (no window for the path to change).
struct ResolvedApp {
    var id: FileID
    var fd: Int32
    var target: ShieldTarget
    /// Directories whose changes can change what this entry resolves to (E2 re-mark).
    var watchDirs: Set<String>
}

enum AppResolution {
    case found(ResolvedApp)
    /// Not installed: nothing to block now; re-resolved on the next apply or directory change.
    case missing(watchDirs: Set<String>)
    case invalid(String)
}

/// PATH lookup and realpath for `Apps=` entries (§4 E2, Model `Selection.apps`).
struct AppResolver {
    /// Absolute PATH directories only: a daemon's working directory means nothing to the user.
    let searchDirs: [String]

    /// PATH as the daemon has it (systemd's for the service), where bare `Apps=` names are
    /// looked up: the app shield's default (`AppShield.init`'s `path`).
    static var environmentPATH: String {
        ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    }

    init(path: String) {
        var seen = Set<String>()
        searchDirs = path.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") && seen.insert($0).inserted }
    }

    func resolve(_ entry: String, selection: String) -> AppResolution {
        let app = Path.lastComponent(entry)
        if entry.isEmpty || entry.contains("\0") { return .invalid("Apps= entry '\(entry)' is not a name or an absolute path") }
        var candidates: [String]
        if entry.contains("/") {
            guard entry.hasPrefix("/") else {
                return .invalid("Apps= entry '\(entry)' must be a bare name (looked up in PATH) or an absolute path")
            }
            candidates = [entry]
        } else {
            candidates = searchDirs.map { $0 + "/" + entry }
        }
        for candidate in candidates {
            guard AppResolver.isExecutableFile(candidate), let real = AppResolver.realpath(candidate) else { continue }
            let fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)  // never waits on a FIFO swapped in
            guard fd >= 0 else { continue }
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                close(fd)
                continue
            }
            var dirs: Set<String> = [AppResolver.parent(real)]
            dirs.insert(AppResolver.parent(candidate))
            let target = ShieldTarget(selection: selection, path: real, app: app)
            return .found(ResolvedApp(id: FileID(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino)), fd: fd,
                                      target: target, watchDirs: dirs))
        }
        // Watch where it would appear, so an install during a block is caught too.
        let dirs = Set(candidates.map(AppResolver.parent).filter(AppResolver.isDirectory))
        return .missing(watchDirs: dirs)
    }

    static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH) != 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func realpath(_ path: String) -> String? {
        guard let p = Glibc.realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    static func parent(_ path: String) -> String {
        let dir = Path.parent(path)
        return dir.isEmpty ? "/" : dir
    }
}
