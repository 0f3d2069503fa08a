import BlockCore
import BlockDaemon
import Foundation

// The test doubles of blockd's collaborators. Only test targets depend on this target.

/// A clock that moves only when told, for tests: `advance` moves both clocks (time passes),
/// `stepWall` moves only the wall clock (someone set the time).
public final class ManualClock: SystemClock, @unchecked Sendable {
    private let lock = NSLock()
    private var wall: Date
    private var boot: TimeInterval

    public init(wall: Date, boot: TimeInterval = 1000) {
        self.wall = wall
        self.boot = boot
    }

    public func wallNow() -> Date { lock.withLock { wall } }
    public func bootNow() -> TimeInterval { lock.withLock { boot } }

    public func advance(_ seconds: TimeInterval) {
        lock.withLock {
            wall += seconds
            boot += seconds
        }
    }

    public func stepWall(_ seconds: TimeInterval) { lock.withLock { wall += seconds } }
}

/// Keeps every log entry, for tests, with the wall time of `clock` when it was written
/// (journald's timestamp of the entry), when given one.
public final class MemorySink: LogSink, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [(time: Date?, entry: JournalEntry)] = []
    private let clock: ManualClock?

    public init(clock: ManualClock? = nil) { self.clock = clock }

    public func log(_ entry: JournalEntry) {
        let time = clock?.wallNow()
        lock.lock()
        stored.append((time, entry))
        lock.unlock()
    }

    public var entries: [JournalEntry] {
        lock.lock()
        defer { lock.unlock() }
        return stored.map(\.entry)
    }

    /// The entries with their times (nil without a clock).
    public var timed: [(time: Date?, entry: JournalEntry)] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}

/// Records every call, for tests.
public final class RecordingEnforcer: Enforcer, @unchecked Sendable {
    public let mode = "recording"
    private let lock = NSLock()
    private var calls: [[String]] = []
    private var lastUsers: [String: [UInt32]] = [:]
    private var lastSelections: [Selection] = []

    /// Selections whose unlock cannot land (as a hosts file on a full disk): reported as
    /// lingering while they are not in the blocked set.
    public var stuck: [String: String] {
        get { lock.withLock { stuckNow } }
        set { lock.withLock { stuckNow = newValue } }
    }
    private var stuckNow: [String: String] = [:]

    public init() {}

    public func enforce(blocked: [Selection]) -> EnforcementReport {
        lock.withLock {
            lastUsers = [:]
            lastSelections = blocked
            for s in blocked { if let users = s.users { lastUsers[s.name] = users } }
            calls.append(blocked.map(\.name).sorted())
            var report = EnforcementReport(failures: [])
            let names = Set(blocked.map(\.name))
            for (selection, cause) in stuckNow where !names.contains(selection) { report.lingering[selection] = cause }
            return report
        }
    }

    public func release() -> [EnforcementFailure] {
        lock.withLock { calls.append([]) }
        return []
    }

    public var applied: [[String]] { lock.withLock { calls } }
    public var current: [String] { lock.withLock { calls.last ?? [] } }
    /// Per-user blocks: the selections of the last call blocked for some users only, with the uids.
    public var users: [String: [UInt32]] { lock.withLock { lastUsers } }
    /// The selections of the last call, as handed over (targets, scopes, exceptions).
    public var selections: [Selection] { lock.withLock { lastSelections } }
}

/// The events an engine published, in order.
public final class EventBox: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [WatchEvent] = []
    public init() {}
    public func add(_ e: WatchEvent) { lock.withLock { events.append(e) } }
    /// Each as its `EVENT` line's object, as a watcher would read it.
    public var all: [JSONObject] { lock.withLock { events.map(\.json) } }
    public var typed: [WatchEvent] { lock.withLock { events } }
}

/// The instants an engine armed its timer for (nil: disarmed), in order.
public final class ArmBox: @unchecked Sendable {
    private let lock = NSLock()
    private var arms: [Date?] = []
    public init() {}
    public func add(_ date: Date?) { lock.withLock { arms.append(date) } }
    public var all: [Date?] { lock.withLock { arms } }
}
