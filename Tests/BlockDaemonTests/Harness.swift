import BlockCore
import Dispatch
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon
import ZoneInfo

/// A test harness around one Engine: manual clock, recording enforcer, memory log, temp state
/// dir, recorded events and timer arms. What it does not supply (a configuration loader, hooks
/// unless `hookTimeout` is given) fails the test if the engine uses it.
final class Harness: @unchecked Sendable {
    let clock: ManualClock
    let enforcer = RecordingEnforcer()
    /// The journal, each entry with the manual clock's time when it was written.
    let log: MemorySink
    let dir: String
    var engine: Engine!
    /// The inbox of the current engine (each engine gets its own).
    private(set) var inbox = EngineInbox()
    /// Where the engine publishes `watch` events (a ControlServer serves from it).
    let hub = EventHub()
    /// Every event the engine published, in order.
    let events = EventBox()
    let zone = SystemTimeZone.named("Asia/Tokyo")!
    /// E3: run real hooks with this timeout (nil: a hook that would run fails the test).
    let hookTimeout: TimeInterval?

    let persistent: Bool
    /// Set to an errno to make every state save fail with it (full disk, read-only).
    let saveFault = SaveFault()

    /// Per-user blocks: the user database the engine resolves names with.
    let users: UsersTable
    /// Where the engine reads its users table instead (nil: exactly `users`).
    let database: UserDatabase?

    /// `users`: root alone unless a test gives more (`UsersTable.only`), and never the
    /// machine's database: a test's outcome must not depend on who has an account where it
    /// runs (uid 1000 may be an administrator on one machine and absent on the next).
    init(now: String = "2026-11-29T13:05:00+09:00", dir: String? = nil, config: ConfigSet = .builtIn, persistent: Bool = true,
         hookTimeout: TimeInterval? = nil, users: UsersTable = .holding(), database: UserDatabase? = nil) {
        clock = ManualClock(wall: iso(now))
        log = MemorySink(clock: clock)
        self.users = users
        self.database = database
        self.persistent = persistent
        self.hookTimeout = hookTimeout
        self.dir = dir ?? Harness.tempDir()
        try? FileManager.default.createDirectory(atPath: self.dir, withIntermediateDirectories: true)
        engine = makeEngine(config: config)
        run { engine.startUp() }
    }

    static func tempDir() -> String {
        let d = NSTemporaryDirectory() + "blockd-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    func makeEngine(config: ConfigSet = .builtIn, loader: (@Sendable () throws(CoreError) -> ConfigSet)? = nil) -> Engine {
        let state: DaemonState
        if case .loaded(let s) = StateStore(directory: dir).load(now: clock.wallNow()) { state = s } else { state = DaemonState() }
        inbox = EngineInbox()
        let store = StateStore(directory: dir, io: persistent ? saveFault.io : SaveFault.discard)
        var c = Engine.Collaborators.unsupplied(clock: clock, store: store)
        (c.enforcer, c.log, c.users) = (enforcer, log, database ?? .fixed(users))
        if let loader { c.loadConfig = loader }
        if let hookTimeout { c.hooks = HookRunner(timeout: hookTimeout, inbox: inbox) }
        let (hub, events, arms) = (hub, events, timerArms)
        c.armTimer = { arms.add($0) }
        c.status = { _ in }
        c.limitsChanged = { _ in }
        c.events = { events.add($0); hub.publish($0) }
        c.enforcementNotes = { _ in [:] }
        c.serverStats = { hub.counters.json }
        c.executableApps = { Harness.executables[$0] ?? [] }
        return Engine(config: config, state: state, timeZone: zone, inbox: inbox, collaborators: c)
    }

    /// R1: what the usage monitor would count an executable as (foreground).
    static let executables: [String: Set<String>] = ["/usr/lib/steam/steam": ["steam"], "/usr/games/supertux2": ["supertux2", "/usr/games/supertux2"]]

    /// Every instant the engine armed the timer for (nil: disarmed), in order.
    let timerArms = ArmBox()

    func run<T>(_ body: () -> T) -> T { engine.queue.sync(execute: body) }

    @discardableResult
    func send(_ line: String, as peer: Peer = .root) -> Response {
        let request: Request
        do { request = try Request.parse(line) } catch { return .error(error) }
        return run { engine.handle(request, from: peer) }
    }

    func advance(_ seconds: TimeInterval) {
        clock.advance(seconds)
        run { engine.wake() }
    }

    func entries(_ event: LogEvent) -> [JournalEntry] { log.entries.filter { $0.event == event } }

    deinit { try? FileManager.default.removeItem(atPath: dir) }
}

/// State I/O whose every write (snapshot, log append, sync) fails with `code` while it is set,
/// and that counts the bytes written.
final class SaveFault: @unchecked Sendable {
    private let lock = NSLock()
    private var _code: Int32?
    private var _syncCode: Int32?
    private var _bytes = 0
    private var _syncs = 0
    private var _refused = 0
    var code: Int32? {
        get { lock.withLock { _code } }
        set { lock.withLock { _code = newValue } }
    }
    /// Set to an errno to make only the fdatasync of the log fail with it.
    var syncCode: Int32? {
        get { lock.withLock { _syncCode } }
        set { lock.withLock { _syncCode = newValue } }
    }
    /// Bytes handed to the disk (snapshots and log appends).
    var bytes: Int { lock.withLock { _bytes } }
    /// fdatasyncs of the log that succeeded.
    var syncs: Int { lock.withLock { _syncs } }
    /// Writes and syncs that failed because `code` or `syncCode` was set.
    var refused: Int { lock.withLock { _refused } }
    private func count(_ n: Int) { lock.withLock { _bytes += n } }
    private func refuse(_ failure: DaemonError) -> DaemonError {
        lock.withLock { _refused += 1 }
        return failure
    }

    var io: StateStore.IO {
        StateStore.IO(
            replace: { [self] data, path throws(DaemonError) in
                if let code { throw refuse(.system("cannot write \(path)", code)) }
                count(data.count)
                try StateStore.IO.real.replace(data, path)
            },
            append: { [self] fd, data throws(DaemonError) in
                if let code { throw refuse(.system("cannot write the state log", code)) }
                count(data.count)
                try StateStore.IO.real.append(fd, data)
            },
            sync: { [self] fd throws(DaemonError) in
                if let code = code ?? syncCode { throw refuse(.system("cannot sync the state log", code)) }
                try StateStore.IO.real.sync(fd)
                lock.withLock { _syncs += 1 }
            })
    }

    static let discard = StateStore.IO(replace: { _, _ throws(DaemonError) in }, append: { _, _ throws(DaemonError) in },
                                       sync: { _ throws(DaemonError) in })
}

func iso(_ text: String) -> Date {
    try! TimeText.parseISO8601(text, clock: LocalClock.utc)
}

func ok(_ r: Response) -> JSONObject? {
    if case .ok(let o) = r { return o }
    Issue.record("expected OK, got \(r.line)")
    return nil
}
