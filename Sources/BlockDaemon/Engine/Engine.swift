import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Owns all of blockd's mutable state on one serial queue. Every change — a
/// request, the timer, a clock step, a time-zone change, a reload — ends in `reconcile`,
/// which computes the desired set (T5), applies the difference, persists, and reports the
/// next transition so the daemon can arm its one timer (T9).
public final class Engine: @unchecked Sendable {
    public let queue: DispatchQueue
    let collaborators: Collaborators
    var clock: any SystemClock { collaborators.clock }
    var store: StateStore { collaborators.store }
    var enforcer: any Enforcer { collaborators.enforcer }
    var log: any LogSink { collaborators.log }

    var config: ConfigSet
    var registry: Registry
    var state: DaemonState
    var local: LocalClock
    /// What is enforced now, with the reasons that held at the last reconcile.
    var applied: [String: [Reason]] = [:]
    /// Desired selections the enforcer could not enforce at the last apply, with the cause.
    var notEnforced: [String: String] = [:]
    /// §7 "Truth": selections no longer blocked whose enforcement is still in place
    /// (a write that takes it away failed), with the cause; they stay applied, unannounced,
    /// until it lands.
    var lingering: [String: String] = [:]
    /// The enforcement failures of the last apply, each recorded once while it persists.
    var enforcementCauses: Set<String> = []
    /// T6: wall minus boot clock at the last reconcile; a change means the wall clock stepped.
    var wallMinusBoot: TimeInterval?
    /// Apply even if the set of names did not change: at start-up (the hosts file may have
    /// been edited while blockd was down, E4) and after a reload (a selection's domains may
    /// have changed under the same name).
    var mustApply = true
    /// Selections resolved through the catalog, by name; cleared when the config changes.
    var resolved: [String: Selection] = [:]
    /// Why a selection is about to be unlocked, when a request (not time) lifts it.
    var pendingUnlockNotes: [String: String] = [:]
    /// R1: what the usage monitor last said runs of the apps the report counts, the apps it
    /// was last told to follow, and for each of those the named selections that list it.
    var appsRunning: Set<UsageMonitor.Running> = []
    var followedApps: Set<String>?
    var appSelections: [String: [String]] = [:]
    /// R1: the executable each user's session agent last said has the focus (Engine+Foreground.swift).
    var foregroundApps: [UInt32: String] = [:]
    /// M3: what grants lifted at the last reconcile: per selection, the activities whose
    /// reasons are lifted (U2: the askers' views; other users' reasons stay).
    var lifted: [String: Lift] = [:]
    /// What the published snapshot shows as blocked (T5 with grants), kept per selection and
    /// updated for the selections a reconcile looked at: publishing costs O(blocked), not O(n).
    var blockedView: [String: Policy.Blocked] = [:]
    /// How many snapshots were published: a request publishes only if its reconcile did not.
    var publications = 0
    /// F3: when an apply last ended with no failure and nothing not enforced.
    var lastEnforced: Date?
    public internal(set) var nextTransition: Date?
    /// Where `config` came from: the files, or (when they are broken) the last good
    /// configuration or the built-in defaults (§7); shown in `status`.
    public var configProvenance = ConfigProvenance.files
    /// The cause of the state file's current save failure (nil: the last save worked).
    var saveProblem: String?
    var saveRetry: DispatchWorkItem?
    /// The first wait before retrying a failed save; it doubles on each failure.
    public var saveRetryBase: TimeInterval = 1 {
        didSet { saveRetryDelay = saveRetryBase }
    }
    var saveRetryDelay: TimeInterval = 1
    /// What the read-only requests are answered from, off the queue (Engine+Snapshot.swift).
    let published = Mutex<StatusSnapshot?>(nil)
    /// The state log and what saving keeps between changes (Engine+Persistence).
    var saving: Saving

    /// `inbox` brings the engine what other threads report; its queue becomes the engine's.
    public init(config: ConfigSet, state: DaemonState, timeZone: Zone, configPath: String = "/etc/blockd/blockd.conf",
                inbox: EngineInbox, collaborators: Collaborators) {
        self.queue = inbox.queue
        self.collaborators = collaborators
        self.config = config
        self.local = LocalClock(timeZone)
        self.registry = Registry(maxActivities: config.daemon.maxActivities, configPath: configPath,
                                 activities: state.activities.map(\.activity), clock: LocalClock(timeZone))
        let users = collaborators.users
        self.registry.people = { users.person($0) }  // A1
        self.registry.maxPerMember = config.daemon.maxActivitiesPerUser
        // The activities live in the registry from here on; the state keeps the rest.
        var rest = state
        rest.activities = []
        self.state = rest
        self.saving = Saving(journal: StateJournal(store: collaborators.store, generation: state.generation, seq: state.seq),
                             persisted: rest)
        for name in state.applied { applied[name] = [] }
        inbox.open { [weak self] message in self?.receive(message) }
    }

    var policy: Policy { Policy(clock: local) }
    var shapes: Shapes { Shapes(clock: local) }

    func assertOnQueue() { dispatchPrecondition(condition: .onQueue(queue)) }

    /// Start-up: install configured schedules, catch up on what was missed while the daemon
    /// was down (T8), and converge. Call once, on the queue.
    public func startUp() {
        assertOnQueue()
        let now = observedNow()
        // §9: usage up to the last checkpoint is counted; whether an app kept running while
        // blockd was down is unknowable, so nothing is assumed running until seen again.
        state.usage.forgetRunning()
        state.history.forgetRunning()  // R1: the same for the report's running time
        // §7: what loaded is the configuration to fall back on next time.
        if configProvenance.kind == .files { state.lastGoodConfig = StoredConfig(config, at: now) }
        installConfigSchedules(now: now)
        catchUp(now: now)
        performDueLoosenings(now: now)  // M2, T8
        reconcile(now: now)
    }

    /// Time passed (the timer fired, the clock was stepped, the machine resumed).
    public func wake() {
        assertOnQueue()
        performDueLoosenings(now: observedNow())  // M2
        reconcile(now: observedNow())
    }

    /// T7: the system time zone changed; schedules are recomputed in the new zone.
    public func timeZoneChanged(to zone: Zone) {
        assertOnQueue()
        guard zone != local.zone else { return }
        let what = zone.identifier == local.zone.identifier
            ? "The rules of time zone \(zone.identifier) changed (a tzdata update)"
            : "Time zone changed from \(local.zone.identifier) to \(zone.identifier)"
        log.log(JournalEntry("\(what); schedules follow the new local time", priority: .notice))
        local = LocalClock(zone)
        registry.clock = local
        reconcile(now: observedNow())
    }

    /// Puts the configured schedules and limits in force; returns what could not be, or moved
    /// a client's activity aside (T4, A1: said, never swallowed), each also a recorded failure.
    @discardableResult
    func installConfigSchedules(now: Date) -> [CoreError] {
        registry.maxActivities = config.daemon.maxActivities
        registry.maxPerMember = config.daemon.maxActivitiesPerUser
        var problems: [CoreError] = []
        let declared = resolvingScopes(config.schedules.map(Activity.schedule) + config.limits.map(Activity.limit), now: now,
                                       problems: &problems)  // Users=
        for refusal in registry.replaceConfigActivities(declared, now: now) {
            recordFailure(refusal.error, uid: refusal.uid, activity: nil, now: now)  // A1: a move is its owner's news
            problems.append(refusal.error)
        }
        followLimits()
        return problems
    }

    // MARK: Failures (T4: never swallowed)

    func recordFailure(_ error: CoreError, uid: UInt32?, activity: String?, now: Date) {
        state.record(FailureRecord(time: now, code: error.code.rawValue, message: error.message, uid: uid, activity: activity))
        publish(.problem(error, uid: uid, activity: activity), now: now)
    }

    /// The one place a report reaches people: the journal, then every watcher.
    func publish(_ report: Report, now: Date) {
        log.log(report.entry(clock: local))
        for event in report.events(clock: local, now: now) { collaborators.events(offeringMoreTime(event, now: now)) }  // M4
    }


    func recordShieldHit(_ hit: ShieldHit) {
        assertOnQueue()
        let now = observedNow()
        let day = local.civil(of: now).date.description
        state.shieldHits[day, default: [:]][hit.selection, default: 0] += 1
        if let uid = hit.uid { state.shieldHits[ShieldHitDays.key(day: day, uid: uid), default: [:]][hit.selection, default: 0] += 1 }  // A1
        if hit.kind == .tamper {
            // E1, E6: an undone edit is also a failure the user sees in status and failures.
            state.record(FailureRecord(time: now, code: ErrorCode.tamper.rawValue, message: Report.message(hit), uid: nil, activity: hit.selection))
        }
        // U3: a denied launch or a stopped app is news for the person whose it was, with the end
        // of their own view; where that is not known, for everyone the selection is blocked for.
        let until = applied[hit.selection].flatMap { _ in
            hit.uid.map { registry.index.until(hit.selection, from: now, viewer: $0) } ?? registry.index.until(hit.selection, from: now)
        }
        publish(.hit(hit, until: until, users: hit.uid.map { [$0] } ?? registry.index.blocked(hit.selection)?.users), now: now)
        persist()
    }
}
