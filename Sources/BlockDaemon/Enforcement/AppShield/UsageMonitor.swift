import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// §9: which limits have an app running, from exec and exit events. Starts are seen through
/// fanotify FAN_OPEN_EXEC notification marks on exactly the limited executables (an observer
/// only: nothing waits on it), or, where fanotify is unavailable, a scan of /proc every two
/// seconds while limits exist; exits through a pidfd per process (no polling). Reports, for
/// each limit, the people with at least one of its processes running whenever that changes
/// (§9: each person has their own allowance); a process counts for the person it stands for
/// (its login uid, else its real uid), and for a limit with users only when it is one of
/// theirs, as that user (judged when it starts).
///
/// R1: it also follows every app any selection names (`apps`) and, with fanotify, every
/// installed desktop application (`desktop`: the system's `.desktop` files and flatpaks, read
/// again when those directories change), for the report, and says which of them run for whom
/// (the person a process stands for, `ProcessUsers.person`). A desktop application counts as
/// its entry's name unless a selection names its file (then as that `Apps=` entry, once). The
/// /proc scan fallback follows named apps only: following every desktop application would
/// keep it scanning every two seconds for as long as blockd runs.
public final class UsageMonitor: @unchecked Sendable {
    /// R1: an app (its `Apps=` entry) with a process running for `uid` (ProcessUsers says who a
    /// process is).
    public typealias Running = RunningApp

    public enum Mode: String, Sendable { case fanotify, procScan = "proc-scan" }

    let queue = DispatchQueue(label: "blockd.usage")
    let report: @Sendable (Set<LimitUse>) -> Void
    let reportApps: @Sendable (Set<Running>) -> Void
    let resolver: AppResolver
    let group: Int32
    public let mode: Mode
    let scanInterval: TimeInterval
    var groupSource: DispatchSourceRead?
    var scanTimer: DispatchSourceTimer?
    /// Followed executables: file → the limits whose apps they are, the `Apps=` entries the
    /// report counts it as (R1), and the open file marked.
    var files: [FileID: (limits: Set<String>, apps: Set<String>, fd: Int32)] = [:]
    /// Who each limit counts (absent: everyone).
    var scopes: [String: Set<UInt32>] = [:]
    /// Running processes of those files, each with the limits it counts for and as whom, whom
    /// it runs for (nil when the file is no app of the report's), and its exit watch.
    var processes: [Int32: (file: FileID, limits: [String: UInt32], person: UInt32?, exit: DispatchSourceRead)] = [:]
    var reported: Set<LimitUse> = []
    var reportedApps: Set<Running> = []
    /// R1: the installed desktop applications (nil: not followed), and the watch on their
    /// directories.
    let desktop: DesktopApps?
    var desktopWatch: DirectoryWatcher?

    public init(report: @escaping @Sendable (Set<LimitUse>) -> Void, apps: @escaping @Sendable (Set<Running>) -> Void = { _ in },
                path: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
                desktop: DesktopDirs? = nil, forceScan: Bool = false, scanInterval: TimeInterval = 2) {
        self.report = report
        self.reportApps = apps
        self.resolver = AppResolver(path: path)
        self.scanInterval = scanInterval
        let g = forceScan ? -1 : blockd_fanotify_init_notify()
        group = g
        mode = g >= 0 ? .fanotify : .procScan
        self.desktop = g >= 0 ? desktop.map { DesktopApps(dirs: $0, path: path) } : nil
        if self.desktop != nil {
            desktopWatch = DirectoryWatcher(queue: queue, debounce: 0.5) { [weak self] in self?.refollow() }
        }
        if g >= 0 {
            let source = DispatchSource.makeReadSource(fileDescriptor: g, queue: queue)
            source.setEventHandler { [weak self] in self?.readEvents() }
            source.resume()
            groupSource = source
        }
    }

    deinit {
        groupSource?.cancel()
        scanTimer?.cancel()
        for (_, p) in processes { p.exit.cancel() }
        for (_, f) in files { close(f.fd) }
        if group >= 0 { close(group) }
    }

    /// Follows these limits' apps (limit name → what it counts), replacing the limits followed.
    public func follow(_ limitedApps: [String: LimitedApps]) {
        queue.async { [self] in
            limited = limitedApps
            refollow()
        }
    }

    /// R1: follows `apps` (the `Apps=` entries of every selection) for the report, replacing
    /// those followed.
    public func follow(apps: Set<String>) {
        queue.async { [self] in
            appEntries = apps
            refollow()
        }
    }

    var limited: [String: LimitedApps] = [:]
    var appEntries: Set<String> = []

    /// R1: the followed files by their resolved paths (realpath, as /proc/PID/exe shows them).
    var paths: [String: FileID] = [:]

    /// R1: the `Apps=` entries the report counts the executable at `path` (a resolved path,
    /// /proc/PID/exe) as; none when it is no followed app's. A lookup only: a path a client
    /// sent is never stat'ed by root (a FUSE mount could hang it). Called from the engine's
    /// queue; this queue never waits on that one.
    public func apps(ofExecutable path: String) -> Set<String> {
        queue.sync { paths[path].flatMap { files[$0]?.apps } ?? [] }
    }

    /// Marks exactly the files of `limited` and `appEntries`, and recounts the processes.
    func refollow() {
        dispatchPrecondition(condition: .onQueue(queue))
        var wanted: [FileID: (limits: Set<String>, apps: Set<String>, fd: Int32)] = [:]
        var wantedPaths: [String: FileID] = [:]
        let newScopes = limited.compactMapValues(\.users)
        let pairs = limited.flatMap { limit, counted in counted.apps.map { (limit: Optional(limit), entry: $0) } }
            + appEntries.sorted().map { (limit: String?.none, entry: $0) }
        for (limit, entry) in pairs {
            guard case .found(let app) = resolver.resolve(entry, selection: limit ?? entry) else { continue }
            var item = wanted[app.id] ?? ([], [], app.fd)
            if let limit { item.limits.insert(limit) } else { item.apps.insert(entry) }
            if wanted[app.id] != nil { close(app.fd) }
            wanted[app.id] = item
            wantedPaths[app.target.path] = app.id
        }
        if let desktop {
            let (installed, dirs) = desktop.installed()
            for (name, app) in installed {
                if var item = wanted[app.id] {
                    close(app.fd)
                    guard item.apps.isEmpty else { continue }  // a selection names it: counted as that entry
                    item.apps.insert(name)
                    wanted[app.id] = item
                } else {
                    wanted[app.id] = ([], [name], app.fd)
                    wantedPaths[app.target.path] = app.id
                }
            }
            _ = desktopWatch?.update(dirs)
        }
        for (id, old) in files {
            if wanted[id] == nil, group >= 0 { _ = blockd_fanotify_mark_exec(group, old.fd, 1) }
            close(old.fd)
        }
        files = wanted
        paths = wantedPaths
        scopes = newScopes
        if group >= 0 {
            for (_, f) in files { _ = blockd_fanotify_mark_exec(group, f.fd, 0) }
        }
        // Limits added, removed or given other users: what each process counts for, again.
        for (pid, p) in processes {
            let limits = files[p.file] == nil ? [:] : counted(pid, file: p.file)
            let forReport = files[p.file]?.apps.isEmpty == false
            guard !limits.isEmpty || forReport else { stopTracking(pid); continue }
            processes[pid]?.limits = limits
            if forReport, p.person == nil { processes[pid]?.person = ProcessUsers.of(pid)?.person }
        }
        scanProc()
        if group < 0 { armScan() }
        publish()
    }

    func readEvents() {
        var events = [blockd_fan_event](repeating: blockd_fan_event(), count: 64)
        while true {
            let n = events.withUnsafeMutableBufferPointer { blockd_fanotify_read(group, $0.baseAddress, 64) }
            guard n > 0 else { break }
            for e in events[0..<Int(n)] {
                if e.fd >= 0 { close(e.fd) }
                if e.overflow == 1 { scanProc(); continue }
                guard e.stat_ok == 1, files[FileID(dev: e.dev, ino: e.ino)] != nil else { continue }
                track(e.pid, file: FileID(dev: e.dev, ino: e.ino))
            }
        }
        publish()
    }

    /// Finds running processes of the followed files (at start, after changes, on overflow,
    /// and every `scanInterval` in the fallback mode).
    func scanProc() {
        guard !files.isEmpty else { return }
        for pid in ProcessKiller.allPIDs() where processes[pid] == nil {
            if let id = ProcessKiller.executable(of: pid), files[id] != nil { track(pid, file: id) }
        }
    }

    func armScan() {
        guard scanTimer == nil, !files.isEmpty else {
            if files.isEmpty { scanTimer?.cancel(); scanTimer = nil }
            return
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + scanInterval, repeating: scanInterval)
        timer.setEventHandler { [weak self] in
            self?.scanProc()
            self?.publish()
        }
        timer.resume()
        scanTimer = timer
    }

    /// The limits a process of `file` counts for, each with the person it counts as: those for
    /// everyone as the person it stands for (login uid, else real uid), and those whose users
    /// it belongs to as that user. A process whose users cannot be read (gone already) counts
    /// for none.
    func counted(_ pid: Int32, file: FileID) -> [String: UInt32] {
        let limits = files[file]?.limits ?? []
        guard !limits.isEmpty, let users = ProcessUsers.of(pid) else { return [:] }
        var out: [String: UInt32] = [:]
        for limit in limits {
            guard let scope = scopes[limit] else { out[limit] = users.person; continue }
            if scope.contains(users.real) { out[limit] = users.real } else if let login = users.login, scope.contains(login) { out[limit] = login }
        }
        return out
    }

    func track(_ pid: Int32, file: FileID) {
        guard processes[pid] == nil else { return }
        let limits = counted(pid, file: file)
        let forReport = files[file]?.apps.isEmpty == false
        guard !limits.isEmpty || forReport else { return }  // another user's: counts for no limit
        let person = forReport ? ProcessUsers.of(pid)?.person : nil
        let pidfd = blockd_pidfd_open(pid)
        guard pidfd >= 0 else { return }  // already gone
        let exit = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: queue)
        exit.setEventHandler { [weak self] in
            self?.stopTracking(pid)
            self?.publish()
        }
        exit.setCancelHandler { close(pidfd) }
        exit.resume()
        processes[pid] = (file, limits, person, exit)
    }

    func stopTracking(_ pid: Int32) {
        processes.removeValue(forKey: pid)?.exit.cancel()
    }

    func publish() {
        var running = Set<LimitUse>(), apps = Set<Running>()
        for (_, p) in processes {
            running.formUnion(p.limits.map { LimitUse(limit: $0.key, uid: $0.value) })
            if let person = p.person { for app in files[p.file]?.apps ?? [] { apps.insert(Running(uid: person, app: app)) } }
        }
        if running != reported {
            reported = running
            report(running)
        }
        if apps != reportedApps {
            reportedApps = apps
            reportApps(apps)
        }
    }
}
