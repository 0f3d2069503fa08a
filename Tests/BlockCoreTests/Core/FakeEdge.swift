import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// The edge, faked for the core's tests: it hands `Core.handle` its inputs at an instant of its
/// own, carries nothing out but records every effect in order, and answers the effects the core
/// waits for as the engine would with nothing failing unless told: the save works, `reload`
/// finds `files`, and the enforcers hold what they are asked to except `failing` and `stuck`.
/// The order of the steps is the core's; nothing here knows it.
struct FakeEdge {
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
    /// §7: why the save fails (nil: it works).
    var saveFailure: CoreError?
    /// Every effect the core decided since the edge began, in order.
    private(set) var effects: [Effect] = []
    /// Every journal entry with the instant it was written at (the harness's `log.timed`).
    private(set) var timedJournal: [(time: Date?, entry: JournalEntry)] = []
    /// A1: activities that moved aside for another's name (the engine says these itself).
    private(set) var moves: [Move] = []

    /// A core started at `start` in Asia/Tokyo (the harness's defaults).
    init(at start: String = "2026-11-29T13:05:00+09:00", config: ConfigSet = .builtIn, users: UsersTable = FakeEdge.users(),
         state: DaemonState = DaemonState()) {
        now = at(start)
        core = Core(config: config, state: state, timeZone: FakeEdge.tokyo, configPath: "/etc/blockd/blockd.conf", users: users,
                    executableApps: { FakeEdge.executables[$0] ?? [] })
        send(.startUp)
    }

    // MARK: Inputs

    /// One request line from `peer`, and its answer.
    @discardableResult
    mutating func run(_ line: String, as peer: Peer = .root) -> Response {
        do throws(CoreError) { return handle(try Request.parse(line), from: peer) } catch { return .error(error) }
    }

    mutating func handle(_ request: Request, from peer: Peer) -> Response {
        let from = effects.count
        guard let response = send(.request(request, from: peer)) else {
            let fromView = effects[from...].contains { if case .replyFromView = $0 { true } else { false } }
            Issue.record(fromView ? "'\(request.command)' is answered from what the engine publishes; check the core's state instead"
                                  : "'\(request.command)' got no answer")
            return .ok([:])
        }
        return response
    }

    /// Time passes on both clocks and the timer fires.
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

    /// The timer fires: due loosenings (M2), then a reconcile.
    mutating func wake() { send(.wake) }

    /// §9: the usage monitor says which limits have a process running, here all of them for
    /// one person (`uid`: root unless given).
    mutating func usage(running: Set<String>, as uid: UInt32 = 0) {
        usage(running: Set(running.map { LimitUse(limit: $0, uid: uid) }))
    }

    /// §9: the usage monitor says, for each limit, whose processes of it run.
    mutating func usage(running: Set<LimitUse>) { send(.usage(running)) }

    /// Screen time: logind's login sessions now (nil: logind does not answer).
    mutating func sessions(_ sessions: [LoginSession]?) { send(.sessions(sessions)) }

    /// B2: a native-messaging host's connection closed.
    mutating func webEnded(uid: UInt32, reporter: UInt64) { send(.webEnded(uid: uid, reporter: reporter)) }

    /// R1: the usage monitor says which apps run, and for whom.
    mutating func appsRunning(_ running: Set<RunningApp>) { send(.apps(running)) }

    /// S5: the shield stopped something.
    mutating func shieldHit(_ hit: ShieldHit) { send(.shieldHit(hit)) }

    /// An enforcer's retry landed.
    mutating func enforcementChanged() { send(.enforcementChanged) }

    /// T5: a reconcile and nothing else; the effects it decided.
    @discardableResult
    mutating func reconcile() -> [Effect] {
        let from = effects.count
        send(.reconcile)
        return Array(effects[from...])
    }

    /// Hands `input` to the core at the edge's instant and answers what the core waits for
    /// until it is done; returns the answer to a request.
    @discardableResult
    mutating func send(_ input: Core.Input) -> Response? {
        core.observe(wall: now, boot: boot)
        var answer: Response?
        var batch = core.handle(input, now: now)
        while !batch.isEmpty {
            effects += batch
            var outcome: Core.Outcome?
            for effect in batch {
                switch effect {
                case .journal(let entry): timedJournal.append((now, entry))
                case .beginChange: outcome = .begun
                case .loadConfig:
                    if files == nil { Issue.record("reload with no configuration files given: set `files`") }
                    outcome = .configLoaded(files ?? .failure(CoreError(.internal, "no files")))
                case .commit:
                    if saveFailure == nil {
                        moves += core.takeMoves()
                        core.registry.takeChanges()
                    }
                    outcome = .committed(saveFailure)
                case .enforce(let targets, let changed):
                    enforcements.append(targets)
                    changes.append(changed)
                    outcome = .enforced(report(holding: targets))
                case .reply(let response): answer = response
                default: break
                }
            }
            batch = outcome.map { core.handle($0) } ?? []
        }
        return answer
    }

    /// What the enforcers report when asked to hold `blocked`.
    private func report(holding blocked: [Selection]) -> EnforcementReport {
        let names = Set(blocked.map(\.name))
        var report = EnforcementReport(failures: failing.filter { names.contains($0.key) }.sorted { $0.key < $1.key }
            .map { EnforcementFailure(selection: $0.key, message: $0.value) })
        for (selection, cause) in stuck where !names.contains(selection) { report.lingering[selection] = cause }
        return report
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

extension FakeEdge {
    /// A users table holding only what a test gives it: root, `users` by name, `groups` with
    /// their members, `admins` besides root. Anyone else is unknown (`#1000` for a uid).
    static func users(_ users: [String: UInt32] = [:], groups: [String: [UInt32]] = [:], admins: Set<UInt32> = []) -> UsersTable {
        UsersTable.holding(users: users, groups: groups, admins: admins)
    }
}

func ok(_ r: Response) -> JSONObject? {
    if case .ok(let o) = r { return o }
    Issue.record("expected OK, got \(r.line)")
    return nil
}
