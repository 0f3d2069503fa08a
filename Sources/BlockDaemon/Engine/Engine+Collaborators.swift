import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

extension Engine {
    /// Everything the engine hands work to, reads from or reports to, given once at
    /// construction; nothing is optional and nothing is wired in afterwards. What talks *to*
    /// the engine from other threads (the timer, the enforcers, the watchers, the hooks) goes
    /// through the `EngineInbox` instead, which exists before any of them.
    public struct Collaborators {
        public var clock: any SystemClock
        public var enforcer: any Enforcer
        public var log: any LogSink
        public var store: StateStore
        /// `blockc reload` and SIGHUP: the configuration files as they are now.
        public var loadConfig: @Sendable () throws(CoreError) -> ConfigSet
        /// E3: `ExecOnBlock=` / `ExecOnUnblock=`.
        public var hooks: any HookRunning
        /// Called on the engine queue after every reconcile with the next transition (nil:
        /// none), to arm the one timer (T9).
        public var armTimer: @Sendable (Date?) -> Void
        /// Events for `watch` subscribers, typed: the hub finds each one's audience from the
        /// event itself and encodes it once (S3); must not block.
        public var events: @Sendable (WatchEvent) -> Void
        /// Limits were added or removed: limit name → its selections' `Apps=` entries, so the
        /// usage monitor can follow their apps (§9).
        public var limitsChanged: @Sendable ([String: LimitedApps]) -> Void
        /// Extra facts for `status`'s enforcement object (the app shield's mode and why), with
        /// times written in the engine's local time.
        public var enforcementNotes: @Sendable (LocalClock) -> JSONObject
        /// A count that moves whenever `enforcementNotes` may give something new (the enforcers'
        /// `NotesVersion`s added up). With it, a `status` answer reuses the notes rendered for
        /// an earlier one of the same snapshot while it stands still, for a second at most;
        /// without it (nil) every answer asks for them.
        public var notesVersion: (@Sendable () -> UInt64)? = nil
        /// Connection counters from the control server, shown in `status`.
        public var serverStats: @Sendable () -> JSONObject
        /// A one-line status for systemd (`STATUS=`).
        public var status: @Sendable (String) -> Void
        /// Per-user blocks and A1: where the users table comes from. Given, never defaulted:
        /// the daemon gives the system's database, a test a table of its own people.
        public var users: UserDatabase
        /// R1: the `Apps=` entries of the selections some activity names, for the usage monitor
        /// to follow for the report (nothing by default).
        public var appsChanged: @Sendable (Set<String>) -> Void = { _ in }
        /// R1: the `Apps=` entries the usage monitor counts the executable at a path as (none
        /// by default), for the foreground a session agent reports.
        public var executableApps: @Sendable (String) -> Set<String> = { _ in [] }
        /// Screen time: a screen-time limit's action on a person's sessions, for logind
        /// (nothing by default).
        public var sessionAction: @Sendable (SessionAction, UInt32, [String]) -> Void = { _, _, _ in }
        /// F3: each snapshot the engine publishes, for the metrics file (nothing by default).
        public var published: @Sendable (StatusSnapshot) -> Void = { _ in }

        public init(clock: any SystemClock, enforcer: any Enforcer, log: any LogSink, store: StateStore,
                    loadConfig: @escaping @Sendable () throws(CoreError) -> ConfigSet, hooks: any HookRunning,
                    armTimer: @escaping @Sendable (Date?) -> Void, events: @escaping @Sendable (WatchEvent) -> Void,
                    limitsChanged: @escaping @Sendable ([String: LimitedApps]) -> Void,
                    enforcementNotes: @escaping @Sendable (LocalClock) -> JSONObject,
                    serverStats: @escaping @Sendable () -> JSONObject, status: @escaping @Sendable (String) -> Void,
                    users: UserDatabase) {
            (self.clock, self.enforcer, self.log, self.store) = (clock, enforcer, log, store)
            (self.loadConfig, self.hooks, self.armTimer, self.events) = (loadConfig, hooks, armTimer, events)
            (self.limitsChanged, self.enforcementNotes, self.serverStats, self.status) = (limitsChanged, enforcementNotes, serverStats, status)
            self.users = users
        }
    }

    /// Handles one message from the inbox, on the engine queue.
    func receive(_ message: EngineInbox.Message) {
        let mark = publications
        switch message {
        case .wake: wake()
        case .timeZone(let zone): timeZoneChanged(to: zone)
        case .usersChanged: readUsers(naming: core.config.userNames)
        case .shieldHit(let hit): recordShieldHit(hit)
        case .enforcementChanged: enforcementChanged()
        case .usage(let running): usageChanged(running: running)
        case .apps(let running): appsRunning(running)
        case .sessions(let sessions): sessionsObserved(sessions)
        case .hookFailed(let error, let selection):
            recordFailure(error, uid: nil, activity: selection, now: observedNow())
            persist()
            carryOut()
        }
        // Shield hits and failures change what the read-only answers show without a reconcile.
        publishSnapshot(unlessSince: mark)
    }
}

/// What other threads tell the engine. It is created first, with the engine's queue, and handed
/// to everything that reports to the engine (the timer, the enforcers, the watchers, the
/// hooks), so none of them needs the engine itself. The engine opens it in its initializer;
/// a message posted before that waits in order and is delivered then, never dropped.
public final class EngineInbox: @unchecked Sendable {
    public enum Message: Sendable {
        /// Time passed: the timer fired, the clock was stepped, the machine resumed.
        case wake
        /// T7: the system time zone changed.
        case timeZone(Zone)
        /// S5: an enforcer stopped something.
        case shieldHit(ShieldHit)
        /// An enforcer's retry or repair changed what is enforced.
        case enforcementChanged
        /// §9: the limits that have an app running now.
        case usage(Set<LimitUse>)
        /// R1: the apps of any selection running now, and for whom.
        case apps(Set<UsageMonitor.Running>)
        /// E3: a hook failed.
        case hookFailed(CoreError, selection: String)
        /// A1, U1: /etc/passwd or /etc/group changed: the users table is read again.
        case usersChanged
        /// Screen time: logind's login sessions, after any change.
        case sessions([LoginSession]?)
    }

    public let queue: DispatchQueue
    private let lock = Lock()
    private var waiting: [Message] = []
    private var reader: (@Sendable (Message) -> Void)?

    public init(queue: DispatchQueue = DispatchQueue(label: "blockd.engine")) {
        self.queue = queue
    }

    public func post(_ message: Message) {
        lock.withLock { waiting.append(message) }
        queue.async { [self] in deliver() }
    }

    /// From code that already runs on the engine's queue (the timer's handler, T9): handled
    /// now, after anything still waiting, rather than after another trip through the queue
    /// behind whatever else was queued meanwhile. Before the engine opens the inbox it waits.
    public func postHere(_ message: Message) {
        dispatchPrecondition(condition: .onQueue(queue))
        lock.withLock { waiting.append(message) }
        deliver()
    }

    /// A shield-hit sink for an enforcer (any thread; never blocks).
    public var shieldHits: ShieldHitSink { { [self] hit in post(.shieldHit(hit)) } }

    /// Called once, by the engine's initializer.
    func open(_ reader: @escaping @Sendable (Message) -> Void) {
        lock.withLock {
            precondition(self.reader == nil, "an EngineInbox belongs to one engine")
            self.reader = reader
        }
        queue.async { [self] in deliver() }
    }

    private func deliver() {
        let batch: ([Message], @Sendable (Message) -> Void)? = lock.withLock {
            guard let open = self.reader else { return nil }
            defer { waiting = [] }
            return (waiting, open)
        }
        guard let (messages, handle) = batch else { return }
        for message in messages { handle(message) }
    }
}
