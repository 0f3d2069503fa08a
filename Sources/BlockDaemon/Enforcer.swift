import BlockCore
import Foundation

/// What carries out the desired set (DESIGN §4). `apply` converges the machine to exactly
/// `blocked` (idempotent: applying the same set twice changes nothing) and returns one
/// failure per thing it could not do; it never "unblocks everything" on its own (T5).
public protocol Enforcer: AnyObject {
    /// A short name for `blockc status` (`hosts+fanotify`, ...).
    var mode: String { get }
    func apply(blocked: [Selection]) -> [EnforcementFailure]
    /// Removes all enforcement (blockd --release, E4).
    func release() -> [EnforcementFailure]
}

/// A denied launch or a repaired tamper (S5): counted per selection per day, logged, and
/// sent to `watch` subscribers. Enforcers report them from any thread through `ShieldHitSink`.
public struct ShieldHit: Equatable, Sendable {
    public enum Kind: String, Sendable { case deniedLaunch = "denied-launch", killed, tamper }
    public var kind: Kind
    public var selection: String
    /// The executable (denied launch, killed process) or the file (tamper).
    public var path: String
    /// A name for people, where known (the app's name from its desktop file, or the executable's).
    public var app: String?
    public var pid: Int32?

    public init(kind: Kind, selection: String, path: String, app: String? = nil, pid: Int32? = nil) {
        self.kind = kind
        self.selection = selection
        self.path = path
        self.app = app
        self.pid = pid
    }
}

public typealias ShieldHitSink = @Sendable (ShieldHit) -> Void

/// Several enforcers as one (the hosts file and the app shield): each gets the whole desired
/// set and converges its part; failures are collected from all.
public final class CompositeEnforcer: Enforcer {
    public let parts: [any Enforcer]
    public init(_ parts: [any Enforcer]) { self.parts = parts }
    public var mode: String { parts.map(\.mode).joined(separator: "+") }
    public func apply(blocked: [Selection]) -> [EnforcementFailure] { parts.flatMap { $0.apply(blocked: blocked) } }
    public func release() -> [EnforcementFailure] { parts.flatMap { $0.release() } }
}

public struct EnforcementFailure: Error, Equatable, Sendable {
    public var selection: String?
    public var message: String
    public init(selection: String?, message: String) {
        self.selection = selection
        self.message = message
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
