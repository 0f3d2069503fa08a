import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// The app shield (§4 E2). `Apps=` entries are resolved to inodes; running instances
/// are stopped at block start (SIGTERM, SIGKILL after `KillGrace=`); new launches are denied
/// by fanotify FAN_OPEN_EXEC_PERM marks on exactly those inodes, or, where fanotify is not
/// available, killed right after exec (proc connector) or by a /proc scan. Every denial and
/// kill is a shield hit (S5). Marks stay until removed, but they belong to our fanotify group,
/// so they end with the process: after a restart the engine's reconcile re-applies them (E4, T8).
///
/// State is owned by `queue`; the readers see only `ShieldTable`.
public final class AppShield: Enforcer, @unchecked Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        case fanotify, procConnector = "proc-connector", procScan = "proc-scan"
    }

    public let shieldMode: Mode
    public var mode: String { enabled ? shieldMode.rawValue : "apps" }
    /// `AppShield=no` (`--app-shield no`): no mark, no process stopped; every selection with
    /// apps is reported not enforced, so nothing claims an app is blocked.
    public let enabled: Bool
    public var off: String? { enabled ? nil : "turned off (AppShield=no)" }
    /// Why the better modes are not in use, for `blockc status`; nil in fanotify mode.
    public let modeReason: String?

    let queue = DispatchQueue(label: "blockd.shield")
    private static let queueKey = DispatchSpecificKey<Bool>()
    private let log: any LogSink
    private let resolver: AppResolver
    private let desktop: DesktopApps
    private let table = ShieldTable()
    private let killer: ProcessKiller
    private let hitsSink: ShieldHitSink
    private let scanInterval: TimeInterval

    private struct Mark {
        var fd: Int32
        /// Never empty; the first names the file in messages.
        var targets: [ShieldTarget]
        var marked: Bool
    }

    // Owned by `queue`.
    private var marks: [FileID: Mark] = [:]
    private var selections: [Selection] = []
    /// The names in `selections`, and what their last converge could not do.
    private var shielded: Set<String> = []
    private var converged: [EnforcementFailure] = []
    private var missing: Set<String> = []
    private var running = false
    private var pendingGroup: Int32 = -1
    private var pendingSocket: Int32 = -1
    private var fanotify: FanotifyReader?
    private var connector: ProcConnectorReader?
    private var scanner: ProcScanner?
    private var watcher: DirectoryWatcher?

    /// - forceMode: use this mode or a lower one (tests; `fanotify` means "best available").
    /// - scanInterval: the proc-scan period (E2 fallback); 2 s by default.
    /// - desktop: where allow-only windows find desktop applications (W2; tests: temp dirs).
    public init(killGrace: TimeInterval, log: any LogSink, hits: @escaping ShieldHitSink,
                path: String = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                forceMode: Mode? = nil, scanInterval: TimeInterval = 2, enabled: Bool = true, desktop: DesktopDirs = .standard) {
        self.enabled = enabled
        self.log = log
        self.resolver = AppResolver(path: path)
        self.desktop = DesktopApps(dirs: desktop, path: path)
        self.killer = ProcessKiller(grace: killGrace, hits: hits)
        self.scanInterval = scanInterval
        self.hitsSink = hits
        let probe = enabled ? AppShield.probe(forceMode ?? .fanotify) : (mode: Mode.fanotify, reason: "turned off (AppShield=no)", group: Int32(-1), socket: Int32(-1))
        shieldMode = probe.mode
        modeReason = probe.reason
        pendingGroup = probe.group
        pendingSocket = probe.socket
        queue.setSpecific(key: AppShield.queueKey, value: true)
    }

    deinit {
        if DispatchQueue.getSpecific(key: AppShield.queueKey) == true { teardown() } else { queue.sync { teardown() } }
        if pendingGroup >= 0 { close(pendingGroup) }
        if pendingSocket >= 0 { close(pendingSocket) }
    }

    /// A selection with a failure of its own (an executable that could not be marked) is not
    /// enforced; a fallback mode still enforces, so mode failures name no selection.
    public func enforce(blocked: [Selection]) -> EnforcementReport { enforce(blocked: blocked, changed: nil) }

    /// `changed`: when none of those selections names an app (or has an allow-only window)
    /// now or before, the marks are left as they are and the last converge's failures stand.
    public func enforce(blocked: [Selection], changed: Set<String>?) -> EnforcementReport {
        guard enabled else {
            var report = EnforcementReport()
            for s in blocked where (!s.apps.isEmpty || s.isAllowOnly) && s.users?.isEmpty != true {
                report.partOff(s.name, .apps, s.isAllowOnly ? "its desktop applications are not denied: the app shield is turned off (AppShield=no)"
                                                            : "its apps are not blocked: the app shield is turned off (AppShield=no)")
            }
            return report
        }
        return queue.sync {
            let started = running
            let failures = startIfNeeded()
            // Only the selections with apps or an allow-only window concern the shield;
            // per-user blocks (`users`) are judged per process: see ProcessUsers.
            let concerns = { (s: Selection) in !s.apps.isEmpty || s.isAllowOnly }
            if let changed, started {
                let now = blocked.targets(named: changed).values.joined().filter(concerns)
                guard !now.isEmpty || changed.contains(where: shielded.contains) else {
                    return EnforcementReport(failures: failures + converged)
                }
                selections = selections.filter { !changed.contains($0.name) } + now
            } else {
                selections = blocked.filter(concerns)
            }
            shielded = Set(selections.map(\.name))
            converged = converge()
            return EnforcementReport(failures: failures + converged)
        }
    }

    public func release() -> [EnforcementFailure] {
        queue.sync {
            teardown()
            return []
        }
    }

    /// The inodes blocked now (tests: waiting for a re-mark).
    var blockedFiles: Set<FileID> { queue.sync { Set(marks.keys) } }
    /// Directories watched for replaced or newly installed executables.
    var watchedDirectories: Set<String> { queue.sync { watcher?.watched ?? [] } }

    // MARK: - Modes

    private static func probe(_ wanted: Mode) -> (mode: Mode, reason: String?, group: Int32, socket: Int32) {
        var reasons: [String] = []
        if wanted == .fanotify {
            let group = blockd_fanotify_init()
            let code = errno
            if group < 0 {
                reasons.append("fanotify unavailable: \(String(cString: strerror(code)))\(code == EPERM ? " (needs CAP_SYS_ADMIN)" : "")")
            } else if blockd_fanotify_probe_exec_perm(group) != 0 {
                let code = errno
                reasons.append("fanotify lacks FAN_OPEN_EXEC_PERM (needs Linux 5.0 or later): \(String(cString: strerror(code)))")
                close(group)
            } else {
                return (.fanotify, nil, group, -1)
            }
        } else {
            reasons.append("fanotify not tried: \(wanted.rawValue) was forced")
        }
        if wanted != .procScan {
            if !ProcConnectorReader.inInitialNamespaces() {
                reasons.append("proc connector unavailable: blockd is not in the initial user and PID namespaces")
            } else {
                let sock = blockd_proc_connector_open()
                let code = errno
                if sock >= 0 { return (.procConnector, reasons.joined(separator: "; "), -1, sock) }
                reasons.append("proc connector unavailable: \(String(cString: strerror(code)))\(code == EPERM ? " (needs CAP_NET_ADMIN)" : "")")
            }
        } else {
            reasons.append("proc connector not tried: proc-scan was forced")
        }
        return (.procScan, reasons.joined(separator: "; "), -1, -1)
    }

    /// Starts the reader for the mode (again, after a release). On `queue`.
    private func startIfNeeded() -> [EnforcementFailure] {
        guard !running else { return [] }
        running = true
        var failures: [EnforcementFailure] = []
        switch shieldMode {
        case .fanotify:
            let group = pendingGroup >= 0 ? pendingGroup : blockd_fanotify_init()
            pendingGroup = -1
            if group >= 0 {
                fanotify = FanotifyReader(group: group, table: table, hits: hitsSink, log: log)
                fanotify?.start()
            } else {
                failures.append(EnforcementFailure(selection: nil, message: "The app shield could not reopen fanotify (\(String(cString: strerror(errno)))); falling back to a /proc scan."))
            }
        case .procConnector:
            let sock = pendingSocket >= 0 ? pendingSocket : blockd_proc_connector_open()
            pendingSocket = -1
            if sock >= 0 {
                connector = ProcConnectorReader(sock: sock, table: table, killer: killer, log: log)
                connector?.start()
            } else {
                failures.append(EnforcementFailure(selection: nil, message: "The app shield could not reopen the proc connector (\(String(cString: strerror(errno)))); falling back to a /proc scan."))
            }
        case .procScan:
            break
        }
        // The scan is the safety net: always without a reader, and in fanotify mode while an
        // executable could not be marked (a filesystem without fanotify support, say).
        if connector == nil {
            scanner = ProcScanner(interval: scanInterval, queue: queue, table: table, killer: killer)
        }
        watcher = DirectoryWatcher(queue: queue) { [weak self] in self?.directoryChanged() }
        return failures
    }

    private func teardown() {
        for (id, mark) in marks { unblock(id, mark) }
        marks = [:]
        selections = []
        shielded = []
        converged = []
        missing = []
        fanotify?.stop()
        fanotify = nil
        connector?.stop()
        connector = nil
        scanner?.update(active: false)
        scanner = nil
        watcher?.stop()
        watcher = nil
        running = false
    }

    // MARK: - Converging

    /// The executables the selections name, by inode, the directories to watch for them,
    /// and what could not be resolved. Apps not installed are noted once (they are watched for).
    private func resolveSelections() -> (desired: [FileID: (app: ResolvedApp, targets: [ShieldTarget])], dirs: Set<String>, failures: [EnforcementFailure]) {
        var failures: [EnforcementFailure] = []
        var desired: [FileID: (app: ResolvedApp, targets: [ShieldTarget])] = [:]
        var dirs = Set<String>()
        var nowMissing = Set<String>()
        // The same executable in two selections: both block it (each for its users); the
        // first by name that blocks a process reports the hit.
        func add(_ app: ResolvedApp) {
            if var known = desired[app.id] {
                if !known.targets.contains(app.target) { known.targets.append(app.target) }
                desired[app.id] = known
                close(app.fd)
            } else {
                desired[app.id] = (app, [app.target])
            }
        }
        for selection in selections.sorted(by: { $0.name < $1.name }) {
            if selection.isAllowOnly, selection.users?.isEmpty != true {
                let (apps, watch) = desktop.targets(for: selection, allowed: allowedApps(selection))
                dirs.formUnion(watch)
                apps.forEach(add)
            }
            for entry in Set(selection.apps).sorted() {
                switch resolver.resolve(entry, selection: selection.name) {
                case .found(var app):
                    dirs.formUnion(app.watchDirs)
                    app.target.users = ShieldScope(selection.users.map(Set.init))
                    add(app)
                case .missing(let watchDirs):
                    dirs.formUnion(watchDirs)
                    let key = selection.name + "\u{0}" + entry
                    nowMissing.insert(key)
                    if !missing.contains(key) {
                        log.info("\(entry) (in \(selection.name)) is not installed; there is nothing to block until it appears.")
                    }
                case .invalid(let message):
                    failures.append(EnforcementFailure(selection: selection.name, message: message))
                }
            }
        }
        missing = nowMissing
        return (desired, dirs, failures)
    }

    /// W2: the inodes of the apps an allow-only selection allows (its allowed selections',
    /// `AlwaysAllowed=` among them), resolved as `Apps=` entries are.
    private func allowedApps(_ selection: Selection) -> Set<FileID> {
        Set((selection.allowed ?? []).flatMap(\.apps).compactMap { entry in
            guard case .found(let app) = resolver.resolve(entry, selection: selection.name) else { return nil }
            close(app.fd)
            return app.id
        })
    }

    /// Makes the marks, the table and the watches match `selections` exactly. Idempotent:
    /// unchanged inodes are left alone, and only newly blocked ones trigger a process scan.
    private func converge() -> [EnforcementFailure] {
        dispatchPrecondition(condition: .onQueue(queue))
        let (desired, dirs, unresolved) = resolveSelections()
        var failures = unresolved
        // Unblock first: the table entry goes before the mark, so an exec racing the unblock is allowed.
        for (id, mark) in marks where desired[id] == nil {
            unblock(id, mark)
            marks[id] = nil
        }
        // Newly blocked files, and files now blocked for other users: their processes in scope stop.
        var fresh: [FileID: [ShieldTarget]] = [:]
        for (id, (app, targets)) in desired {
            if var kept = marks[id] {
                close(app.fd)
                if kept.targets != targets {
                    kept.targets = targets
                    table.set(id, targets)
                    fresh[id] = targets
                }
                if !kept.marked { kept.marked = mark(kept.fd, kept.targets[0], &failures) }
                marks[id] = kept
                continue
            }
            // The table entry goes in before the mark, so the first event already finds it.
            table.set(id, targets)
            let marked = mark(app.fd, targets[0], &failures)
            marks[id] = Mark(fd: app.fd, targets: targets, marked: marked)
            fresh[id] = targets
        }
        if !fresh.isEmpty {
            // Marks first, then the scan: an instance started during the scan is denied, not missed.
            killer.stopAll(byID: fresh, byPath: ShieldTable.byPath(fresh), immediately: false)
        }
        if let watcher {
            for dir in watcher.update(dirs) {
                log.warning("The app shield cannot watch \(dir); a blocked app replaced there is re-marked only on the next apply.")
            }
        }
        scanner?.update(active: fanotify == nil ? !marks.isEmpty : marks.values.contains { !$0.marked })
        return failures
    }

    /// Marks one inode in fanotify mode; false (with a failure) where the kernel refuses, in
    /// which case the /proc scan covers it and the next apply tries again.
    private func mark(_ fd: Int32, _ target: ShieldTarget, _ failures: inout [EnforcementFailure]) -> Bool {
        guard let fanotify else { return false }
        if blockd_fanotify_mark_inode(fanotify.group, fd, 0) == 0 { return true }
        failures.append(EnforcementFailure(selection: target.selection,
            message: "Could not mark \(target.path) to deny launches (\(String(cString: strerror(errno)))); it is stopped by a /proc scan instead."))
        return false
    }

    private func unblock(_ id: FileID, _ mark: Mark) {
        table.set(id, nil)
        if mark.marked, let fanotify, blockd_fanotify_mark_inode(fanotify.group, mark.fd, 1) != 0 {
            log.warning("Could not remove the app shield's mark on \(mark.targets[0].path): \(String(cString: strerror(errno))).")
        }
        close(mark.fd)
    }

    /// E2 re-mark: something changed next to a blocked (or missing) executable.
    private func directoryChanged() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard running, !selections.isEmpty else { return }
        let before = Set(marks.keys)
        let failures = converge()
        let added = marks.filter { !before.contains($0.key) }.map(\.value.targets[0].path).sorted()
        if !added.isEmpty {
            log.notice("The app shield re-marked \(added.joined(separator: ", ")) after it was replaced or installed.")
        }
        for failure in failures {
            log.log(JournalEntry(failure.message, priority: .error, event: .failure, fields: failure.selection.map { [(.selection, $0)] } ?? []))
        }
    }
}
