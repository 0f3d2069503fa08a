import FoundationEssentials

/// What blockd decides, as one value (STYLE: decide in the core, act at the edge): the
/// activities, the configuration in force, the state kept across restarts, and what
/// enforcement was last asked for and achieved. Every step takes the instant it happens at as a
/// parameter, reads no clock and does no I/O; what must be done about it (journal entries,
/// events, hooks, saves, the timer) is appended to `effects` in order, and the daemon's engine
/// carries those out. A reconcile is planned here, enforced at the edge and finished here with
/// what the enforcers reported (Core+Reconcile.swift).
public struct Core {
    public var config: ConfigSet
    public var registry: Registry
    /// The state other than the activities (those live in the registry).
    public var state: DaemonState
    public var local: LocalClock
    /// Per-user blocks and A1: the user database as the edge last read it (`UsersTable`):
    /// names and groups to uids, and each uid's rank. Replaced whole (`usersChanged`).
    public private(set) var users: UsersTable
    /// R1: the `Apps=` entries the usage monitor counts the executable at a path as, for the
    /// foreground a session agent reports (given by the daemon; none by default).
    public let executableApps: @Sendable (String) -> Set<String>
    /// Where `config` came from: the files, or (when they are broken) the last good
    /// configuration or the built-in defaults (§7); shown in `status`.
    public var configProvenance = ConfigProvenance.files

    /// What is enforced now, with the reasons that held at the last reconcile.
    public internal(set) var applied: [String: [Reason]] = [:]
    /// After a restart, until the first reconcile looks at them: whom each applied selection was
    /// blocked for (the report's open blocked intervals, `UsageHistory.everyone` for the whole
    /// machine), as its reasons are not known then (U2: no "Unblocked for everyone" for what was
    /// blocked for kid alone).
    var restoredFor: [String: Set<String>] = [:]
    /// The names in `applied`, sorted: the state's list, which a reconcile keeps in order
    /// (sorted again only if it ever holds other names).
    public var appliedSorted: [String] { state.applied.count == applied.count ? state.applied : applied.keys.sorted() }
    /// Desired selections the enforcer could not enforce at the last apply, with the cause.
    public internal(set) var notEnforced: [String: String] = [:]
    /// §7 "Truth": selections enforced in part, with what the configuration leaves off (the app
    /// shield turned off, ...), in the order websites, apps, pages.
    public internal(set) var partsOff: [String: [String]] = [:]
    /// §7 "Truth": selections no longer blocked whose enforcement is still in place
    /// (a write that takes it away failed), with the cause; they stay applied, unannounced,
    /// until it lands.
    public internal(set) var lingering: [String: String] = [:]
    /// T6: wall minus boot clock at the last observation; a change means the wall clock stepped.
    public internal(set) var wallMinusBoot: TimeInterval?
    /// Apply even if the set of names did not change: at start-up (the hosts file may have
    /// been edited while blockd was down, E4), after a reload (a selection's domains may
    /// have changed under the same name) and when an enforcer's outcome changed.
    public var mustApply = true
    /// Selections resolved through the catalog, by name; cleared when the config changes.
    public var resolved: [String: Selection] = [:]
    /// The catalog's answer for each selection blocked at the last reconcile (T5: a change
    /// costs its own size); cleared when the configuration changes.
    var catalogAnswers: [String: Result<Selection, CoreError>] = [:]
    /// What enforcement was last asked for, per blocked selection (TargetTable.swift), and
    /// whether it must be worked out whole at the next apply (a change was put back).
    public internal(set) var enforcing = TargetTable()
    var targetsStale = true
    /// The selections whose entries in `state.applied` or `state.targets` changed since the
    /// engine last saved the state (nil: not known; the save compares those parts whole).
    /// Only the core changes those two parts, and each change is noted here.
    public internal(set) var unsavedSelections: Set<String>?
    /// Every change to `state.targets`, undoable (UndoLog.swift), and the positions the
    /// engine last saved up to in it and in the report's (`UsageHistory.openUndo`).
    public internal(set) var targetUndo = UndoLog<Selection>()
    var targetsSaved = 0
    var openSaved = 0
    /// Screen time: the login sessions the edge last reported, and when an idle one of them
    /// stops counting (Core+Screen.swift).
    var loginSessions: [LoginSession] = []
    var screenDeadline: Date?
    /// Some person was at the screen at the last count (their interval is checkpointed each minute).
    var anyoneAtScreen = false
    /// R1: whether the edge reports login sessions (then apps count only for people at the
    /// screen), and who is at it.
    var sessionsFollowed = false
    var atScreen: Set<UInt32> = []
    /// Why a selection is about to be unlocked, when a request (not time) lifts it.
    var pendingUnlockNotes: [String: String] = [:]
    /// R1: what the usage monitor last said runs of the apps the report counts, the apps it
    /// was last told to follow, and for each of those the named selections that list it.
    public internal(set) var appsRunning: Set<RunningApp> = []
    var followedApps: Set<String>?
    var appSelections: [String: [String]] = [:]
    /// R1: the executable each user's session agent last said has the focus (Core+Foreground.swift).
    public internal(set) var foregroundApps: [UInt32: String] = [:]
    /// B2: the site each user's browsers last said is in their focused, visible tab, by
    /// reporter (a native-messaging host's connection), in memory only (Core+Web.swift).
    public internal(set) var webSites: [UInt32: [UInt64: String]] = [:]
    /// §9: the limits' apps the usage monitor last said run, for whom (the web's part is added
    /// from `webSites`).
    var appLimitUses: Set<LimitUse> = []
    /// Screen time: each person at the screen, for each screen-time limit that is theirs.
    var screenLimitUses: Set<LimitUse> = []
    /// Screen time: the sessions an action was taken on, while they stay unlocked (locked or
    /// ended since, the action is taken again when they are unlocked, or on a new login).
    var actedSessions: Set<String> = []
    /// Screen time: the warnings given before allowed hours begin, by schedule, window start and
    /// mark (once each; kept until the window has begun).
    var warnedHours: [String: Date] = [:]
    /// Screen time: desktop sessions asked to lock, by session id, with their person and the
    /// instant by which the session must say it is locked (`Core.lockGrace`), else it is ended.
    var lockDeadlines: [String: (uid: UInt32, by: Date)] = [:]
    /// M3: what grants lifted at the last reconcile: per selection, the activities whose
    /// reasons are lifted (U2: the askers' views; other users' reasons stay).
    var lifted: [String: Lift] = [:]
    /// F3: when an apply last ended with no failure and nothing not enforced.
    public internal(set) var lastEnforced: Date?
    /// T9: the next instant something changes (the timer is armed for it).
    public internal(set) var nextTransition: Date?
    /// What the core decided that is not carried out yet, in order (`takeEffects`).
    var effects: [Effect] = []
    /// What the core has still to do for the input it is handling, and the outcome it waits
    /// for before it goes on (Core+Handle.swift), at the input's instant.
    var agenda: [Step] = []
    var awaiting: Awaiting?
    var stepNow = Date(timeIntervalSince1970: 0)
    /// The selections the published status shows as blocked, as the reconciles left them:
    /// a reconcile that must apply everything looks at these too.
    var shownBlocked: Set<String> = []

    public init(config: ConfigSet, state: DaemonState, timeZone: Zone, configPath: String, users: UsersTable,
                executableApps: @escaping @Sendable (String) -> Set<String> = { _ in [] }) {
        self.config = config
        self.users = users
        self.executableApps = executableApps
        self.local = LocalClock(timeZone)
        self.registry = Registry(maxActivities: config.daemon.maxActivities, configPath: configPath,
                                 activities: state.activities.map(\.activity), clock: LocalClock(timeZone))
        self.registry.people = { users.person($0) }  // A1
        self.registry.maxPerMember = config.daemon.maxActivitiesPerUser
        // The activities live in the registry from here on; the state keeps the rest.
        var rest = state
        rest.activities = []
        self.state = rest
        for name in state.applied { applied[name] = [] }
        for key in state.history.open.keys {
            guard let open = UsageHistory.Open(key: key), open.kind == .blocked, applied[open.name] != nil else { continue }
            restoredFor[open.name, default: []].insert(open.user)
        }
    }

    /// The edge read the user database again, or looked up names it lacked: from here on
    /// names, groups and ranks are this table's (A1). What is in force is not re-resolved
    /// (configured `Users=` are, at the next reload).
    public mutating func usersChanged(_ table: UsersTable) {
        guard table != users else { return }
        users = table
        registry.people = { table.person($0) }
    }

    public var policy: Policy { Policy(clock: local) }
    public var shapes: Shapes { Shapes(clock: local) }

    /// M3: grants, pending requests, delayed loosenings and allowances.
    public var book: MoreTimeBook {
        get { state.moreTime }
        set { state.moreTime = newValue }
    }

    /// The effects decided since the last call, in order, and forgets them.
    public mutating func takeEffects() -> [Effect] {
        defer { effects = [] }
        return effects
    }

    mutating func emit(_ effect: Effect) { effects.append(effect) }

    /// The selections whose applied or recorded targets changed since the last call (nil: not
    /// known), for the save; from here on each change is noted again, and so is each open
    /// interval of the report's ledger (`UsageHistory.touched`).
    public mutating func takeUnsavedSelections() -> Set<String>? {
        defer {
            unsavedSelections = []
            targetsSaved = targetUndo.end
            openSaved = state.history.openUndo.end
            state.history.resetTouched()
        }
        return unsavedSelections
    }

    mutating func noteUnsaved(_ selection: String) { unsavedSelections?.insert(selection) }

    /// The targets changed since the engine last saved, each as it was then (nil: none): what
    /// the save compares, instead of a copy of the whole dictionary.
    public var targetsBeforeSave: [String: Selection?] { targetUndo.before(since: targetsSaved) }

    /// The same for the report's open intervals (R1).
    public var openBeforeSave: [String: Date?] { state.history.openUndo.before(since: openSaved) }

    /// Sets the targets kept for `selection` (every change goes through here: it is noted for
    /// the save and can be put back).
    mutating func setTarget(_ selection: String, _ target: Selection?) {
        targetUndo.record(selection, before: state.targets[selection])
        state.targets[selection] = target
        noteUnsaved(selection)
    }

    /// No mark older than the last save is kept any more: the changes before it are forgotten.
    public mutating func forgetSavedChanges() {
        targetUndo.forget(before: targetsSaved)
        state.history.openUndo.forget(before: openSaved)
    }

    /// Start-up: what ran before the restart is forgotten until seen again, the configured
    /// schedules and limits are put in force, and what was missed while the daemon was down
    /// is logged (T8). Due loosenings and the reconcile follow (the engine drives them).
    mutating func startUp(now: Date) {
        // §9: usage up to the last checkpoint is counted; whether an app kept running while
        // blockd was down is unknowable, so nothing is assumed running until seen again.
        state.usage.forgetRunning()
        state.history.forgetRunning()  // R1: the same for the report's running time
        // §7: what loaded is the configuration to fall back on next time.
        if configProvenance.kind == .files {
            state.lastGoodConfig = StoredConfig(config, at: now)
            resolveFailures(.config, now: now)  // T4: a configuration that did not load before does now
        }
        installConfigSchedules(now: now)
        catchUp(now: now)
    }

    /// T7: the system time zone changed; schedules are recomputed in the new zone. False when
    /// nothing changed (no reconcile is needed).
    mutating func timeZoneChanged(to zone: Zone) -> Bool {
        guard zone != local.zone else { return false }
        let what = zone.identifier == local.zone.identifier
            ? "The rules of time zone \(zone.identifier) changed (a tzdata update)"
            : "Time zone changed from \(local.zone.identifier) to \(zone.identifier)"
        emit(.journal(JournalEntry("\(what); schedules follow the new local time", priority: .notice)))
        local = LocalClock(zone)
        registry.clock = local
        return true
    }

    /// Puts the configured schedules and limits in force; returns what could not be, or moved
    /// a client's activity aside (T4, A1: said, never swallowed), each also a recorded failure.
    @discardableResult
    public mutating func installConfigSchedules(now: Date) -> [CoreError] {
        registry.maxActivities = config.daemon.maxActivities
        registry.maxPerMember = config.daemon.maxActivitiesPerUser
        var found: [(error: CoreError, uid: UInt32?, activity: String?)] = []
        let declared = resolvingScopes(config.schedules.map(Activity.schedule) + config.limits.map(Activity.limit), now: now,
                                       problems: &found)  // Users=
        var problems = found.map(\.error)
        var moves: [Registry.Refusal] = []
        for refusal in registry.replaceConfigActivities(declared, now: now) {
            problems.append(refusal.error)
            if refusal.moved { moves.append(refusal) } else { found.append((refusal.error, refusal.uid, nil)) }
        }
        // T4: what is not in force is a condition: resolved by the install that puts it in force.
        settleFailures(.configActivity, found, now: now)
        for move in moves { recordFailure(move.error, uid: move.uid, activity: nil, now: now) }  // A1: a move is its owner's news
        followLimits()
        return problems
    }

    // MARK: Failures (T4: never swallowed)

    /// Records a failure, tells the journal and the watchers. With a `cause` (a condition that
    /// can pass) it is recorded once while it lasts: the same failure still current is not
    /// recorded or told again, and `resolveFailures` marks it resolved once the cause is gone.
    public mutating func recordFailure(_ error: CoreError, uid: UInt32?, activity: String?, cause: FailureCause? = nil, now: Date) {
        if let cause, state.failures.contains(where: {
            $0.isCurrent && $0.cause == cause.rawValue && $0.message == error.message && $0.activity == activity && $0.uid == uid
        }) { return }
        state.record(FailureRecord(time: now, code: error.code.rawValue, message: error.message, uid: uid, activity: activity, cause: cause?.rawValue))
        publish(.problem(error, uid: uid, activity: activity), now: now)
    }

    /// T4: the current failures of `cause` for which `gone` holds are resolved at `now` (kept
    /// in `failures` as history, no longer in `status`), each said once in the journal.
    /// Returns how many; the caller saves (every caller's change is saved anyway).
    @discardableResult
    public mutating func resolveFailures(_ cause: FailureCause, now: Date, where gone: (FailureRecord) -> Bool = { _ in true }) -> Int {
        var count = 0
        for i in state.failures.indices where state.failures[i].isCurrent && state.failures[i].cause == cause.rawValue && gone(state.failures[i]) {
            state.failures[i].resolved = now
            count += 1
            let f = state.failures[i]
            var fields: [(JournalField, String)] = [(.code, f.code)]
            if let activity = f.activity { fields.append((.activity, activity)) }
            emit(.journal(JournalEntry("Resolved (recorded \(local.spoken(f.time, from: now))): \(f.message)", priority: .notice, fields: fields)))
        }
        return count
    }

    /// T4: the failures of `cause` are exactly `problems` now: each new one is recorded, and
    /// each current one no longer among them is resolved.
    mutating func settleFailures(_ cause: FailureCause, _ problems: [(error: CoreError, uid: UInt32?, activity: String?)], now: Date) {
        resolveFailures(cause, now: now) { f in
            !problems.contains { $0.error.message == f.message && $0.activity == f.activity && $0.uid == f.uid }
        }
        for p in problems { recordFailure(p.error, uid: p.uid, activity: p.activity, cause: cause, now: now) }
    }

    /// The one place a report reaches people: the journal, then every watcher.
    mutating func publish(_ report: Report, now: Date) {
        emit(.journal(report.entry(clock: local, now: now)))
        for event in report.events(clock: local, now: now) { emit(.event(offeringMoreTime(event, now: now))) }  // M4
    }

    /// S5: the shield (or a tamper repair) stopped something: counted by day for the report,
    /// recorded as a failure when it was tampering, told to the people it concerns, saved.
    mutating func recordShieldHit(_ hit: ShieldHit, now: Date) {
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
        emit(.persist)
    }

    public func statusLine(now: Date, blocked: Int) -> String {
        let next = nextTransition.map { "next change \(local.spoken($0, from: now))" } ?? "nothing scheduled"
        return "\(blocked) selection\(blocked == 1 ? "" : "s") blocked, \(registry.index.count) of \(registry.maxActivities) activities; \(next)"
    }
}
