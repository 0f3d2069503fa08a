import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// The engine's steps on the core alone (STYLE: decide in the core): a request is authorized,
/// made, followed and answered as `Engine.handle` does it, with the save assumed to work; time
/// passes as the timer's wake-up does it (due loosenings, then a reconcile). The instant is a
/// value here, the enforcer records what it was asked to hold, and every effect is kept in
/// order. No clock, no files, no queues: what is about those stays on the daemon's harness.
struct CoreDriver {
    static let tokyo = SystemTimeZone.named("Asia/Tokyo")!
    /// R1: what the usage monitor would count an executable as (the harness's table).
    static let executables: [String: Set<String>] = ["/usr/lib/steam/steam": ["steam"], "/usr/games/supertux2": ["supertux2", "/usr/games/supertux2"]]

    var core: Core
    /// The wall clock and the boot clock, as the engine would read them.
    private(set) var now: Date
    private(set) var boot: TimeInterval = 1000
    /// Every call to the enforcer, each the selections it was asked to hold.
    private(set) var enforcements: [[Selection]] = []
    /// For each call to the enforcer, the selections the core said changed (nil: any may have).
    private(set) var changes: [Set<String>?] = []
    /// Selections whose unlock cannot land (a full disk): reported lingering while unwanted.
    var stuck: [String: String] = [:]
    /// T4: selections the enforcer cannot hold while blocked (a file that cannot be written),
    /// with the failure's message: reported at every apply that holds them.
    var failing: [String: String] = [:]
    /// What `reload` finds in the configuration files (nil: a reload is a test mistake).
    var files: Result<ConfigSet, CoreError>?
    /// Every effect the core decided since the driver began, in order.
    private(set) var effects: [Effect] = []
    /// Every journal entry with the instant it was written at (the harness's `log.timed`).
    private(set) var timedJournal: [(time: Date?, entry: JournalEntry)] = []
    /// A1: activities that moved aside for another's name (the engine says these itself).
    private(set) var moves: [Move] = []
    /// The selections the published status shows as blocked (the engine's `blockedView`).
    private var shown: Set<String> = []

    /// A core started at `start` in Asia/Tokyo (the harness's defaults), with what start-up
    /// decided carried out: due loosenings, then the first reconcile.
    init(at start: String = "2026-11-29T13:05:00+09:00", config: ConfigSet = .builtIn, users: UsersTable = CoreDriver.users(),
         state: DaemonState = DaemonState()) {
        now = at(start)
        core = Core(config: config, state: state, timeZone: CoreDriver.tokyo, configPath: "/etc/blockd/blockd.conf", users: users,
                    executableApps: { CoreDriver.executables[$0] ?? [] })
        core.observe(wall: now, boot: boot)
        core.startUp(now: now)
        take()
        performDueLoosenings()
        reconcile()
    }

    // MARK: Steps

    /// One request line from `peer`, answered as the engine answers it (the save works).
    @discardableResult
    mutating func run(_ line: String, as peer: Peer = .root) -> Response {
        do throws(CoreError) { return handle(try Request.parse(line), from: peer) } catch { return .error(error) }
    }

    mutating func handle(_ request: Request, from peer: Peer, delaying: Bool = true) -> Response {
        core.observe(wall: now, boot: boot)
        do throws(CoreError) {
            try core.authorize(request, by: peer)
            if request.command == .reload && files == nil { Issue.record("reload with no configuration files given: set `files`") }
            let change = try core.prepare(request, from: peer, now: now, delaying: delaying, fresh: request.command == .reload ? files : nil)
            take()
            if change.saves { saved() }
            core.proceed(change, now: now)
            if change.reconciles { reconcile() } else { take() }
            guard let reply = core.reply(change.answer, now: now) else {
                Issue.record("'\(request.command)' is answered from what the engine publishes; check the core's state instead")
                return .ok([:])
            }
            return .ok(reply)
        } catch {
            // T4: as the engine does: refusals are told, failures recorded.
            core.refused(request, with: error, uid: peer.uid, now: now)
            take()
            return .error(error)
        }
    }

    /// Time passes on both clocks and the timer fires (`Engine.wake`).
    mutating func advance(_ seconds: TimeInterval) {
        pass(seconds)
        wake()
    }

    /// Time passes on both clocks with no wake-up.
    mutating func pass(_ seconds: TimeInterval) {
        now += seconds
        boot += seconds
    }

    /// T6: the wall clock is stepped; the boot clock is not.
    mutating func stepWall(_ seconds: TimeInterval) { now += seconds }

    /// `Engine.wake`: due loosenings (M2), then a reconcile, at the observed instant.
    mutating func wake() {
        core.observe(wall: now, boot: boot)
        performDueLoosenings()
        reconcile()
    }

    /// §9: the usage monitor says which limits have a process running, here all of them for
    /// one person (`uid`: root unless given).
    mutating func usage(running: Set<String>, as uid: UInt32 = 0) {
        usage(running: Set(running.map { LimitUse(limit: $0, uid: uid) }))
    }

    /// §9: the usage monitor says, for each limit, whose processes of it run.
    mutating func usage(running: Set<LimitUse>) {
        core.observe(wall: now, boot: boot)
        core.usageChanged(running: running, now: now)
        reconcile()
    }

    /// Screen time: the edge reports the login sessions now (logind), as the engine hands them over.
    mutating func sessions(_ sessions: [LoginSession]) {
        core.observe(wall: now, boot: boot)
        core.sessionsObserved(sessions, now: now)
        _ = reconcile()  // as the engine: a screen-time limit counts, warns and acts with them
    }

    /// B2: a native-messaging host's connection closed, as the server tells the engine.
    mutating func webEnded(uid: UInt32, reporter: UInt64) {
        core.observe(wall: now, boot: boot)
        if core.webEnded(uid: uid, reporter: reporter, now: now) { _ = reconcile() }
        take()
    }

    /// R1: the usage monitor says which apps run, and for whom.
    mutating func appsRunning(_ running: Set<RunningApp>) {
        core.observe(wall: now, boot: boot)
        core.appsRunning(running, now: now)
        take()
    }

    /// S5: the shield stopped something.
    mutating func shieldHit(_ hit: ShieldHit) {
        core.observe(wall: now, boot: boot)
        core.recordShieldHit(hit, now: now)
        take()
    }

    /// An enforcer's retry landed (`Engine.enforcementChanged`).
    mutating func enforcementChanged() {
        core.mustApply = true
        core.observe(wall: now, boot: boot)
        reconcile()
    }

    /// `Engine.reconcile`: planned by the core, enforced here, finished by the core.
    @discardableResult
    mutating func reconcile() -> Reconciliation {
        let plan = core.planReconcile(now: now, shown: shown)
        take()
        let report = plan.targets.map { enforce($0) }
        if plan.targets != nil { changes.append(plan.changed) }
        let done = core.finishReconcile(plan, report: report, now: now)
        take()
        for selection in done.looked {
            if core.blockedNow(selection) != nil { shown.insert(selection) } else { shown.remove(selection) }
        }
        return done
    }

    private mutating func enforce(_ blocked: [Selection]) -> EnforcementReport {
        enforcements.append(blocked)
        let names = Set(blocked.map(\.name))
        var report = EnforcementReport(failures: failing.filter { names.contains($0.key) }.sorted { $0.key < $1.key }
            .map { EnforcementFailure(selection: $0.key, message: $0.value) })
        for (selection, cause) in stuck where !names.contains(selection) { report.lingering[selection] = cause }
        return report
    }

    /// `Engine.performDueLoosenings`: each due one as its asker's request, no longer delayed.
    private mutating func performDueLoosenings() {
        for (request, peer, loosening) in core.takeDueLoosenings(now: now) {
            if case .error(let e) = handle(request, from: peer, delaying: false) { core.delayedLooseningFailed(loosening, e) }
        }
        take()
    }

    /// What the engine does once a change is saved: the more-time book follows moved activities.
    private mutating func saved() {
        let moved = core.registry.takeMoves()
        for m in moved { core.book.rename(m.from, to: m.to) }
        moves += moved
        core.registry.takeChanges()
    }

    private mutating func take() {
        let taken = core.takeEffects()
        effects += taken
        for case .journal(let entry) in taken { timedJournal.append((now, entry)) }
    }

    // MARK: What came of it

    /// The selections the enforcer was last asked to hold, by name (none before the first call).
    var enforced: [String] { (enforcements.last ?? []).map(\.name).sorted() }
    /// Per-user blocks: the selections of the last call blocked for some users only, with the uids.
    var enforcedUsers: [String: [UInt32]] {
        var out: [String: [UInt32]] = [:]
        for s in enforcements.last ?? [] { if let users = s.users { out[s.name] = users } }
        return out
    }
    /// The selections of the last call, as handed over (targets, scopes, exceptions).
    var selections: [Selection] { enforcements.last ?? [] }

    var journal: [JournalEntry] { effects.compactMap { if case .journal(let e) = $0 { e } else { nil } } }
    func entries(_ event: LogEvent) -> [JournalEntry] { journal.filter { $0.event == event } }

    /// Every watch event, each as its `EVENT` line's object, as a watcher would read it: the
    /// one place that knows the event's shape.
    var events: [JSONObject] { effects.compactMap { if case .event(let e) = $0 { e.json } else { nil } } }
    func events(_ word: String) -> [JSONObject] { events.filter { $0["event"]?.string == word } }

    /// T9: every instant the timer was armed for (nil: disarmed), in order.
    var arms: [Date?] { effects.compactMap { if case .armTimer(let d) = $0 { d } else { nil } } }
}

extension CoreDriver {
    /// A users table holding only what a test gives it: root, `users` by name, `groups` with
    /// their members, `admins` besides root. Anyone else is unknown (`#1000` for a uid).
    static func users(_ users: [String: UInt32] = [:], groups: [String: [UInt32]] = [:], admins: Set<UInt32> = []) -> UsersTable {
        UsersTable.only(users: users, groups: groups, admins: admins)
    }
}

func ok(_ r: Response) -> JSONObject? {
    if case .ok(let o) = r { return o }
    Issue.record("expected OK, got \(r.line)")
    return nil
}
