import BlockCore
import Foundation

/// What carries out the desired set (DESIGN §4). `apply` converges the machine to exactly
/// `blocked` (idempotent: applying the same set twice changes nothing) and returns one
/// failure per thing it could not do; it never "unblocks everything" on its own (T5).
public protocol Enforcer: AnyObject {
    /// A short name for `blockc status` (`hosts+fanotify`, `log-only`, ...).
    var mode: String { get }
    func apply(blocked: [Selection]) -> [EnforcementFailure]
    /// Removes all enforcement (blockd --release, E4).
    func release() -> [EnforcementFailure]
}

public struct EnforcementFailure: Error, Equatable, Sendable {
    public var selection: String?
    public var message: String
    public init(selection: String?, message: String) {
        self.selection = selection
        self.message = message
    }
}

/// Enforces nothing and says so: what blockd does until the hosts and app enforcers are
/// configured, and in sandboxes. The engine still logs every lock and unlock.
public final class LogOnlyEnforcer: Enforcer {
    public let mode = "log-only"
    public private(set) var blocked: [String] = []
    public init() {}
    public func apply(blocked: [Selection]) -> [EnforcementFailure] {
        self.blocked = blocked.map(\.name)
        return []
    }
    public func release() -> [EnforcementFailure] {
        blocked = []
        return []
    }
}

/// Records every call, for tests; can be told to fail.
public final class RecordingEnforcer: Enforcer, @unchecked Sendable {
    public let mode = "recording"
    private let lock = NSLock()
    private var calls: [[String]] = []
    private var failNext: [EnforcementFailure] = []

    public init() {}

    public func apply(blocked: [Selection]) -> [EnforcementFailure] {
        lock.withLock {
            calls.append(blocked.map(\.name).sorted())
            defer { failNext = [] }
            return failNext
        }
    }

    public func release() -> [EnforcementFailure] {
        lock.withLock { calls.append([]) }
        return []
    }

    public var applied: [[String]] { lock.withLock { calls } }
    public var current: [String] { lock.withLock { calls.last ?? [] } }
    public func failOnce(_ failures: [EnforcementFailure]) { lock.withLock { failNext = failures } }
}
