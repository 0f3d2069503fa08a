import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Runs the core on one serial queue and carries out what it decides (STYLE: decide in the
/// core, act at the edge). `Core` (BlockCore) decides everything: requests, more time, limits,
/// scopes, what is blocked and what people are told. The engine reads the clocks, saves
/// (Engine+Persistence.swift: `OK` means on disk), hands the planned targets to the enforcers
/// and their report back to the core, carries out the core's effects in order (journal,
/// events, hooks, the timer), and publishes what the read-only requests are answered from
/// (Engine+Snapshot.swift).
public final class Engine: @unchecked Sendable {
    public let queue: DispatchQueue
    let collaborators: Collaborators
    var clock: any SystemClock { collaborators.clock }
    var store: StateStore { collaborators.store }
    var enforcer: any Enforcer { collaborators.enforcer }
    var log: any LogSink { collaborators.log }

    /// What blockd decides, and everything it decides from.
    var core: Core
    /// What the published snapshot shows as blocked (T5 with grants), kept per selection and
    /// updated for the selections a reconcile looked at, in the order of their names:
    /// publishing costs a copy of the blocked list, not a sort of it or a walk over activities.
    var blockedView = ByName<Policy.Blocked>()
    /// Selections in `blockedView` whose entry only says that they are blocked: changed while
    /// more than `StatusSnapshot.maxActive` were active, when no snapshot shows the entries and
    /// working out one's reasons and end costs as many activities as name it. Brought up to date
    /// when a snapshot shows them again (`publishIfDue`).
    var staleViews: Set<String> = []
    /// How many snapshots were published: a request publishes only if its reconcile did not.
    var publications = 0
    /// Something the published snapshot does not show yet changed (Engine+Snapshot.swift).
    var snapshotDue = false
    /// Requests being handled now: their snapshot is published before they are answered.
    var handling = 0
    /// Where the configuration came from (§7), shown in `status`.
    public var configProvenance: ConfigProvenance {
        get { core.configProvenance }
        set { core.configProvenance = newValue }
    }
    /// T9: the instant the timer is armed for.
    public var nextTransition: Date? { core.nextTransition }
    /// The cause of the state file's current save failure (nil: the last save worked).
    var saveProblem: String?
    var saveRetry: DispatchWorkItem?
    /// The first wait before retrying a failed save; it doubles on each failure.
    public var saveRetryBase: TimeInterval = 1 {
        didSet { saveRetryDelay = saveRetryBase }
    }
    var saveRetryDelay: TimeInterval = 1
    /// What the read-only requests are answered from, off the queue (Engine+Snapshot.swift).
    let published = ReadMostly<StatusSnapshot?>(nil)
    /// A1: the users table the core decides with, for the server's ranks off the queue.
    let usersNow: ReadMostly<UsersTable>
    /// The state log and what saving keeps between changes (Engine+Persistence).
    var saving: Saving

    /// `inbox` brings the engine what other threads report; its queue becomes the engine's.
    public init(config: ConfigSet, state: DaemonState, timeZone: Zone, configPath: String = "/etc/blockd/blockd.conf",
                inbox: EngineInbox, collaborators: Collaborators) {
        self.queue = inbox.queue
        self.collaborators = collaborators
        let users = collaborators.users.lookUp(collaborators.users.read(), config.userNames, [])
        self.core = Core(config: config, state: state, timeZone: timeZone, configPath: configPath, users: users,
                         executableApps: collaborators.executableApps)
        self.usersNow = ReadMostly(users)
        self.saving = Saving(journal: StateJournal(store: collaborators.store, generation: state.generation, seq: state.seq),
                             persisted: core.state.withoutLogged)
        if core.book.idKey == nil {  // A1: request ids drawn with a secret of the daemon's, kept with the book (saved with the next change)
            var random = SystemRandomNumberGenerator()
            core.book.idKey = [random.next(), random.next()]
        }
        inbox.open { [weak self] message in self?.receive(message) }
    }

    func assertOnQueue() { dispatchPrecondition(condition: .onQueue(queue)) }

    /// Start-up: install configured schedules, catch up on what was missed while the daemon
    /// was down (T8), carry out due loosenings (M2), and converge. Call once, on the queue.
    public func startUp() {
        assertOnQueue()
        run(.startUp, now: observedNow())
    }

    /// Time passed (the timer fired, the clock was stepped, the machine resumed).
    public func wake() {
        assertOnQueue()
        run(.wake, now: observedNow())
    }

    /// T7: the system time zone changed; schedules are recomputed in the new zone.
    public func timeZoneChanged(to zone: Zone) {
        assertOnQueue()
        run(.timeZone(zone), now: observedNow())
    }

    /// T4: a failure found at the edge (a configuration problem at start-up, a hook) is
    /// recorded and told like every other.
    public func recordFailure(_ error: CoreError, uid: UInt32?, activity: String?, cause: FailureCause? = nil, now: Date) {
        run(.failure(error, uid: uid, activity: activity, cause: cause), now: now)
    }

    func recordShieldHit(_ hit: ShieldHit) {
        assertOnQueue()
        run(.shieldHit(hit), now: observedNow())
    }

    /// Converges enforcement to the desired set at `now` (T5): the core plans it, the
    /// enforcers carry it out (only when the blocked set changed, and then with all of it),
    /// the core decides from their report what is applied and announced.
    func reconcile(now: Date) {
        run(.reconcile, now: now)
    }

    /// The wall time every engine entry point works with (T6), observed with the boot clock:
    /// the core shifts what existed before a wall-clock step by it.
    func observedNow() -> Date {
        assertOnQueue()
        let (now, boot) = clock.observed()
        core.observe(wall: now, boot: boot)
        return now
    }

    /// An enforcer's retry or repair changed the outcome: enforce again, so that `applied`,
    /// the journal and the failure list follow what is really enforced.
    public func enforcementChanged() {
        assertOnQueue()
        run(.enforcementChanged, now: observedNow())
    }

    func statusLine(now: Date, blocked: Int) -> String { core.statusLine(now: now, blocked: blocked) }

    /// Carries out what the core decided outside `run` (a save's outcome), in order; what
    /// carrying it out makes the core decide is carried out after it.
    func carryOut() {
        var effects = core.takeEffects()
        while !effects.isEmpty {
            for effect in effects { carryOut(effect) }
            effects = core.takeEffects()
        }
    }

    /// One effect that waits for nothing (`run` answers the others).
    func carryOut(_ effect: Effect) {
        switch effect {
        case .journal(let entry): log.log(entry)
        case .event(let event): collaborators.events(event)
        case .hook(let event, let selection, let until): collaborators.hooks.run(event, selection: selection, until: until)
        case .persist: persist()
        case .armTimer(let instant): collaborators.armTimer(instant)
        case .status(let line): collaborators.status(line)
        case .followLimits(let apps): collaborators.limitsChanged(apps)
        case .followApps(let apps): collaborators.appsChanged(apps)
        case .sessionAction(let action, let uid, let sessions): collaborators.sessionAction(action, uid, sessions)
        case .reconciled(let looked): publishSnapshot(changed: looked)
        case .beginChange, .loadConfig, .commit, .enforce, .reply, .replyFromView:
            preconditionFailure("\(effect) reached the engine outside a run of the core: it waits for an outcome or answers a request")
        }
    }
}
