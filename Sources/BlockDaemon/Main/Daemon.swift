import BlockCore
import CLinux
import CSystemd
import Dispatch
import FoundationEssentials
import Glibc
import ZoneInfo

/// `blockd`'s entry point: parses flags, then checks the configuration, releases
/// enforcement, or runs the daemon in the foreground (§7).
public enum BlockdMain {
    public static func run(_ arguments: [String]) -> Int32 {
        let options: BlockdOptions
        do { options = try BlockdOptions.parse(arguments) } catch {
            printError("blockd: \(error.message)")
            return 2
        }
        switch options.mode {
        case .help:
            print(BlockdOptions.help)
            return 0
        case .version:
            print("blockd \(BlockdVersion.version) (protocol \(BlockdVersion.protocolVersion))")
            return 0
        case .checkConfig: return checkConfig(options)
        case .catConfig:
            let (text, problems) = options.configDirectory.catConfig(flags: flags(options))
            print(text, terminator: "")
            for problem in problems { printError("blockd: \(problem.message)") }
            return problems.isEmpty ? 0 : 1
        case .release: return release(options)
        case .mergeFirefoxPolicies: return mergeFirefoxPolicies(options)
        case .run:
            // libsystemd is loaded when first called (Sources/CSystemd): say at once, not at the
            // first journal entry, that it cannot be, as the dynamic loader used to.
            if let problem = blockd_systemd_load_error() {
                printError("blockd: cannot load libsystemd (\(String(cString: problem))); install libsystemd0, which blockd's package depends on")
                return 1
            }
            return Daemon(options: options).run()
        }
    }

    static func flags(_ options: BlockdOptions) -> DaemonConfig.Layer {
        var layer = DaemonConfig.Layer(hostsFile: options.hostsFile, firewall: options.firewall, cutSockets: options.cutSockets, resolvConf: options.resolvConf)
        (layer.browserPolicies, layer.policyRoot, layer.firefoxPolicies) = (options.browserPolicies, options.policyRoot, options.firefoxPolicies)
        layer.userTablesDirectory = options.userTablesDirectory
        layer.metricsDirectory = options.metricsDirectory
        layer.appShield = options.appShield
        layer.screenTime = options.screenTime
        return layer
    }

    /// `blockd --check-config [DIR | FILE]`: reads everything, touches nothing, and prints
    /// every problem with its file and line (exit 1) or a summary (exit 0). A FILE is checked
    /// as part of `--config-dir`'s configuration, in place of the file that defines its name.
    static func checkConfig(_ options: BlockdOptions) -> Int32 {
        var directory = options.configDirectory
        var candidate: ConfigSource?
        if let path = options.checkPath {
            var isDir = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir {
                directory = ConfigDirectory(path)
            } else {
                do { candidate = try ConfigDirectory.source(path) } catch {
                    printError("blockd: \(error.message)")
                    return 1
                }
            }
        }
        let (config, problems) = directory.check(flags: flags(options), candidate: candidate)
        let places = directory.layers.joined(separator: ", ")
        let what = "the configuration\(candidate.map { " with \($0.path)" } ?? " in \(places)")"
        // Each problem as FILE:LINE: what is wrong; what to do, in file and line order.
        for problem in problems { printError(problem.text) }
        guard problems.errors.isEmpty else {
            printError("blockd: \(problems.summary): \(what) would not load; nothing was changed")
            return 1
        }
        // Warnings alone: said, and the configuration loads (the summary comes before the
        // report on stdout, so it stays next to the warnings).
        if !problems.isEmpty { printError("blockd: \(problems.summary): \(what) loads all the same") }
        let clock = LocalClock(SystemTimeZone.current())
        let now = RealClock().wallNow()
        print("Configuration in \(places)\(candidate.map { " with \($0.path)" } ?? "") is valid.")
        print(config.files.isEmpty ? "  no configuration files: built-in defaults" : "  files: \(config.files.joined(separator: ", "))")
        print("  MaxActivities=\(config.daemon.maxActivities) HostsFile=\(config.daemon.hostsFile) KillGrace=\(config.daemon.killGraceSeconds)s")
        print("  UserTablesDirectory=\(config.daemon.userTablesDirectory) MetricsDirectory=\(config.daemon.metricsDirectory ?? "(none: no metrics)")")
        let felt = config.daemon.felt
        print("  CutSockets=\(felt.cutSockets ? "yes" : "no") Firewall=\(felt.firewall ? "yes" : "no") ConnectGrace=\(felt.connectGraceSeconds)s ResolvConf=\(felt.resolvConf)")
        print("  selections: \(config.catalog.names.joined(separator: " "))")
        for s in config.schedules {
            let next = Activity.schedule(s).currentOrNextWindow(at: now, clock: clock)
            // T7: the zone and its offset then, so that a wrong zone shows.
            let when = next.map { "\(clock.spoken($0.start, from: now)) to \(clock.spoken($0.end, from: now)) (\(clock.zone.identifier), UTC\(clock.iso8601($0.start).suffix(6)))" } ?? "never"
            print("  schedule \(s.name): \(s.rule) [\(s.selections.joined(separator: " "))], window \(when)")
        }
        return 0
    }

    /// `blockd --release` (E4): removes all enforcement for an uninstall; refused while a
    /// `--lock` block is active, unless every such lock is a member's and `--force-members`
    /// is given (ReleaseLocks).
    static func release(_ options: BlockdOptions) -> Int32 {
        // §7: a running daemon would put back what this removes; refuse instead of racing it.
        var lock: StateLock?
        do { lock = try StateLock(directory: options.stateDir) } catch {
            if case .held(let dir, let pid) = error {
                printError("blockd: refusing to release: blockd\(pid.map { " (pid \($0))" } ?? "") is running on the state directory \(dir); stop it first (systemctl stop blockd), then run blockd --release again")
                return 1
            }
            lock = nil  // no usable state directory: no daemon can be running on it
        }
        defer { withExtendedLifetime(lock) {} }
        let store = StateStore(directory: options.stateDir)
        let now = RealClock().wallNow()
        var state = DaemonState()
        if case .loaded(let s) = store.load(now: now) { state = s }
        let held = ReleaseLocks.held(in: state, now: now, users: .system())
        let (lines, proceed) = ReleaseLocks.judge(held, forceMembers: options.forceMembers, clock: LocalClock(SystemTimeZone.current()), now: now)
        for line in lines { printError("blockd: \(line)") }
        guard proceed else { return 1 }
        let daemon = (try? options.configDirectory.load(flags: flags(options)))?.daemon
            ?? DaemonConfig.defaults.applying(flags(options))
        // Only the hosts section, the nftables table (E5) and the browser policies (E7) outlive
        // blockd (E4); fanotify marks go with its process.
        let enforcer = CompositeEnforcer([HostsEnforcer(path: daemon.hostsFile, log: StderrSink()), UserTablesEnforcer(directory: daemon.userTablesDirectory),
                                          BrowserPolicyEnforcer(config: daemon, stateDir: options.stateDir, log: StderrSink())])
        var failures = enforcer.release()
        if let problem = FeltEnforcer.releaseTable(settings: daemon.felt) {
            failures.append(EnforcementFailure(selection: nil, message: "cannot remove the nftables table inet blockd: \(problem)"))
        }
        for f in failures { printError("blockd: \(f.message)") }
        state.applied = []
        do { try store.save(state) } catch { printError("blockd: \(error)") }
        print("Released all enforcement (mode: \(enforcer.mode)). Registered blocks and schedules are kept in \(store.path).")
        return failures.isEmpty ? 0 : 1
    }

    static func printError(_ text: String) {
        StderrSink.write(text + "\n")
    }
}

/// The running daemon: load what is on disk, build the engine and what it works with, serve.
final class Daemon: @unchecked Sendable {
    let options: BlockdOptions
    let log: any LogSink
    let clock = RealClock()
    var keep: [Any] = []  // timers, watchers and sources that must live as long as the daemon
    var boundSocket: String?
    /// Held for the life of the process (§7: one daemon per state directory).
    var stateLock: StateLock?

    init(options: BlockdOptions) {
        self.options = options
        self.log = makeLogSink(options.logTarget)
    }

    /// Why the daemon could not start: logged, and printed when the log is not stderr.
    func fail(_ message: String) -> Int32 {
        log.log(JournalEntry(message, priority: .error, event: .failure))
        if !(log is StderrSink) { BlockdMain.printError("blockd: \(message)") }
        return 1
    }

    func run() -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        do throws(DaemonError) {
            let loaded = try load()
            let (engine, server) = try build(loaded)
            serve(engine, server, loaded)
        } catch {
            return fail(error.description)
        }
    }

    /// What blockd starts from: the state file and the configuration (or its fallback), with
    /// the problems found on the way, to be recorded as failures once the engine runs.
    struct Loaded {
        let store: StateStore
        let state: DaemonState
        let config: ConfigSet
        let provenance: ConfigProvenance
        /// With the cause each is about: the configuration's is resolved by the next reload that
        /// loads it (T4); the state file's are events, kept until cleared.
        let problems: [(error: CoreError, cause: FailureCause?)]
        let directory: ConfigDirectory
        let flags: DaemonConfig.Layer
    }

    func load() throws(DaemonError) -> Loaded {
        if mkdir(options.stateDir, 0o755) != 0 && errno != EEXIST {
            throw .refused("cannot create the state directory \(options.stateDir): \(String(cString: strerror(errno))); run blockd as root or give --state-dir DIR")
        }
        // §7: one daemon per state directory, decided before anything is read or written.
        stateLock = try StateLock(directory: options.stateDir)
        let store = StateStore(directory: options.stateDir)
        let (state, stateProblems) = Daemon.loadState(store, now: clock.wallNow())
        let directory = options.configDirectory
        let flags = BlockdMain.flags(options)
        let (config, provenance) = Daemon.loadConfig(directory, flags: flags, lastGood: state.lastGoodConfig)
        let problems = stateProblems.map { ($0, nil) } + (provenance.problem.map { [(CoreError(.invalidConfig, $0), FailureCause.config)] } ?? [])
        return Loaded(store: store, state: state, config: config, provenance: provenance, problems: problems,
                      directory: directory, flags: flags)
    }

    /// The engine and everything around it. The inbox and the event hub come first: the
    /// enforcers, the timer and the watchers report through the one, the server serves
    /// through the other, so nothing needs the engine before it exists.
    func build(_ loaded: Loaded) throws(DaemonError) -> (Engine, ControlServer) {
        let inbox = EngineInbox()
        let hub = EventHub()
        let daemon = loaded.config.daemon
        let felt = FeltEnforcer(settings: daemon.felt, log: log, onChange: { inbox.post(.enforcementChanged) })  // E5
        let hosts = HostsEnforcer(path: daemon.hostsFile, log: log, hits: inbox.shieldHits,
                                  onChange: { inbox.post(.enforcementChanged) }, sink: felt.sink)  // E1
        AppShield.raiseDescriptorLimit()  // E2's marks, and R1's on every desktop application: one descriptor each
        let shield = AppShield(killGrace: TimeInterval(daemon.killGraceSeconds), log: log, hits: inbox.shieldHits,
                               enabled: daemon.appShield, desktop: DesktopDirs.standard.under(daemon.policyRoot))  // E2, W2
        let browsers = BrowserPolicyEnforcer(config: daemon, stateDir: options.stateDir, log: log,
                                             onChange: { inbox.post(.enforcementChanged) })  // E7
        let userTables = UserTablesEnforcer(directory: daemon.userTablesDirectory, log: log, hits: inbox.shieldHits,
                                            onChange: { inbox.post(.enforcementChanged) })  // U3
        let usage = UsageMonitor(report: { running in inbox.post(.usage(running)) }, apps: { running in inbox.post(.apps(running)) },
                                 desktop: DesktopDirs.standard.under(daemon.policyRoot))  // §9, R1: every desktop application too
        let timer: TransitionTimer
        timer = try TransitionTimer(clock: clock, queue: inbox.queue) { inbox.postHere(.wake) }
        let (directory, flags, clock) = (loaded.directory, loaded.flags, clock)
        let metrics = daemon.metricsDirectory.map { MetricsWriter(directory: $0, log: log, now: { clock.wallNow() }) }  // F3
        var collaborators = Engine.Collaborators(
            clock: clock, enforcer: CompositeEnforcer([hosts, userTables, felt, shield, browsers], together: 2),
            log: log, store: loaded.store, loadConfig: { () throws(CoreError) -> ConfigSet in try directory.load(flags: flags) },
            hooks: HookRunner(inbox: inbox), armTimer: { timer.arm($0) },
            events: { event in
                hub.publish(event)
                metrics?.event(event)
            },
            limitsChanged: { usage.follow($0) },
            enforcementNotes: { local in
                var notes = felt.notes(wallNow: clock.wallNow(), iso: local.iso8601)
                notes["apps"] = .string(shield.enabled ? shield.mode : "off")
                notes["usage"] = .string(usage.mode.rawValue)
                for (key, value) in browsers.notes() { notes[key] = value }
                for (key, value) in userTables.notes() { notes[key] = value }
                if let reason = shield.modeReason { notes["appsReason"] = .string(reason) }
                return notes
            },
            serverStats: { hub.counters.json }, status: { Systemd.status($0) }, users: .system)
        collaborators.notesVersion = { felt.notesVersion.value &+ browsers.notesVersion.value &+ userTables.notesVersion.value }
        if let metrics { collaborators.published = { metrics.published($0) } }
        collaborators.appsChanged = { usage.follow(apps: $0) }  // R1
        collaborators.executableApps = { usage.apps(ofExecutable: $0) }  // R1: foreground
        let sessionLog = log
        collaborators.sessionAction = { action, uid, sessions in  // screen time: a limit used up
            LogindSessions.act(action, uid: uid, sessions: sessions) { sessionLog.log(JournalEntry($0, priority: .warning)) }
        }
        let engine = Engine(config: loaded.config, state: loaded.state, timeZone: SystemTimeZone.current(),
                            configPath: directory.daemonFile, inbox: inbox, collaborators: collaborators)
        engine.configProvenance = loaded.provenance
        let server = ControlServer(listenFD: try listen(), engine: engine, hub: hub, log: log)
        keep = [server, timer, usage]
        if let watcher = TimeZoneWatcher(queue: inbox.queue, onChange: { inbox.post(.timeZone(SystemTimeZone.current())) }) {
            keep.append(watcher)  // T7
        }
        if let watch = FileWatch(paths: UserDatabase.files, queue: inbox.queue, onChange: { _ in inbox.post(.usersChanged) }) {
            keep.append(watch)  // A1, U1: a user or group added, removed or changed
        }
        if daemon.screenTime {
            let log = log
            keep.append(LogindSessions(report: { inbox.post(.sessions($0)) },
                                       say: { log.log(JournalEntry($0, priority: $1 ? .warning : .info)) }))  // screen time
        }
        return (engine, server)
    }

    /// The control socket: handed over by systemd, or bound at `--socket`.
    func listen() throws(DaemonError) -> Int32 {
        if let fd = try UnixSocket.fromSystemd() { return fd }
        let fd = try UnixSocket.listen(path: options.socketPath)
        boundSocket = options.socketPath
        return fd
    }

    /// Records what went wrong while loading, converges, tells systemd, and serves forever.
    /// The signal handlers come first: a SIGTERM that arrives once clients can be answered must
    /// find them (an ignored signal with no handler yet would be lost).
    func serve(_ engine: Engine, _ server: ControlServer, _ loaded: Loaded) -> Never {
        installSignals(engine: engine)
        engine.queue.sync {
            let now = clock.wallNow()
            for problem in loaded.problems { engine.recordFailure(problem.error, uid: nil, activity: nil, cause: problem.cause, now: now) }
            log.log(JournalEntry("blockd \(BlockdVersion.version) starting: socket \(options.socketPath), state \(loaded.store.path), enforcement \(engine.enforcer.mode), time zone \(engine.core.local.zone.identifier)",
                             priority: .info))
            // §7: what loads but deserves a word (an app that is not installed), once per load.
            for warning in loaded.config.warnings { log.log(JournalEntry(warning.text, priority: .warning)) }
            engine.startUp()
            Systemd.ready(status: engine.statusLine(now: now, blocked: engine.core.applied.count))
        }
        // Loading a large state (decoding, replaying the log, the first snapshot) leaves freed
        // memory in malloc's arenas; give it back so that RSS is what the daemon holds.
        blockd_malloc_trim()
        server.start()
        if let watchdog = Systemd.startWatchdog(on: engine.queue) { keep.append(watchdog) }
        dispatchMain()
    }
    /// The state file, or an empty state with the reason when it was not usable (§7).
    static func loadState(_ store: StateStore, now: Date) -> (DaemonState, [CoreError]) {
        let (result, cuts) = store.open(now: now, repair: true)
        switch result {
        case .fresh: return (DaemonState(), [])
        case .loaded(let s): return (s, cuts.map { CoreError(.internal, $0) })
        case .corrupt(let problem, let movedTo):
            let places = movedTo.map { "it was moved to \($0)" } ?? "it could not be moved aside"
            return (DaemonState(), [CoreError(.internal, "the state file \(store.path) was not usable: \(problem); \(places) and blockd started with no activities")])
        }
    }

    /// The configuration files; when they are broken, the last good configuration saved in the
    /// state file, else the built-in defaults. Refusing to start would leave every block on past
    /// its end (E4 keeps enforcement in place), and the defaults alone would lift every block on
    /// a configured selection: a broken file never lifts a block (§7).
    static func loadConfig(_ directory: ConfigDirectory, flags: DaemonConfig.Layer, lastGood: StoredConfig?) -> (ConfigSet, ConfigProvenance) {
        do {
            return (try directory.load(flags: flags), .files)
        } catch {
            let fix = "fix it ('blockd --check-config' shows every problem) and run 'blockc reload'"
            guard let lastGood else {
                var fallback = ConfigSet.builtIn
                fallback.daemon = fallback.daemon.applying(flags)
                return (fallback, ConfigProvenance(kind: .builtIn, problem: "\(error.message); no good configuration was saved before, so blockd runs on the built-in defaults until you \(fix)"))
            }
            let when = LocalClock(SystemTimeZone.current()).dated(lastGood.savedAt)
            return (lastGood.configSet(flags: flags), ConfigProvenance(kind: .lastGood, problem: "\(error.message); blockd runs on the last good configuration (loaded \(when)) until you \(fix)"))
        }
    }

    func installSignals(engine: Engine) {
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: engine.queue)
            source.setEventHandler { [self, engine] in
                if sig == SIGHUP {
                    Systemd.reloading()
                    engine.reloadFromSignal()
                    Systemd.ready(status: "reloaded")
                    return
                }
                // E4: enforcement stays in place; the next start reconciles.
                Systemd.stopping()
                engine.saveBeforeExit()
                log.log(JournalEntry("blockd stopping on \(sig == SIGTERM ? "SIGTERM" : "SIGINT"); enforcement stays in place until the next start",
                                 priority: .info))
                if let path = boundSocket { unlink(path) }
                exit(0)
            }
            source.resume()
            keep.append(source)
        }
    }
}
