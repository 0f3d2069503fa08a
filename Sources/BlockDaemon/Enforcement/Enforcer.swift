import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// What carries out the desired set (§4). `enforce` converges the machine to exactly
/// `blocked` (idempotent: applying the same set twice changes nothing) and reports one
/// failure per thing it could not do and which selections are not really enforced
/// (§7 "Truth": `applied` lists only what is); it never "unblocks everything" on its own (T5).
public protocol Enforcer: AnyObject {
    /// A short name for `blockc status` (`hosts+fanotify`, ...).
    var mode: String { get }
    /// Why this part enforces nothing now (`mode` then stays out of the mode line), for
    /// `blockc status`; nil while it does its part.
    var off: String? { get }
    func enforce(blocked: [Selection]) -> EnforcementReport
    /// `enforce(blocked:)`, told which selections' targets differ from the previous call's
    /// (nil: any may). An enforcer that keeps its own state may then look at those alone; the
    /// others converge to `blocked` as always. With `changed`, `blocked` comes in the order
    /// of the selections' names (the core's `TargetTable.all`), so the changed ones are found
    /// by `targets(named:)` without a walk over all of them.
    func enforce(blocked: [Selection], changed: Set<String>?) -> EnforcementReport
    /// Removes all enforcement (blockd --release, E4).
    func release() -> [EnforcementFailure]
}

extension Enforcer {
    public var off: String? { nil }

    public func enforce(blocked: [Selection], changed: Set<String>?) -> EnforcementReport { enforce(blocked: blocked) }

    /// `enforce`, for callers that need only the failures (tests).
    public func apply(blocked: [Selection]) -> [EnforcementFailure] { enforce(blocked: blocked).failures }
}

/// Counts the changes to what an enforcer shows in `status`'s notes (E5, E7, U3), so that an
/// answer can reuse the notes rendered for an earlier one while no count has moved
/// (`StatusSnapshot`'s notes cache). The properties the notes are made of bump it in their
/// `didSet`, after the change: a reader that loads the count before rendering the notes can at
/// worst keep newer notes under an older count, which the next answer renders again.
public final class NotesVersion: Sendable {
    private let count = Atomic<UInt64>(0)

    public init() {}

    public func bump() { count.add(1, ordering: .releasing) }

    public var value: UInt64 { count.load(ordering: .acquiring) }
}

/// T9 and §7 for an enforcer with a queue of its own (the browser policies, E7; the cut
/// enforcer's table, E5): a change that only loosens is carried out on `queue` after `enforce`
/// returns, so that an unlock's hosts file and journal entry do not wait for it and the layer
/// blocks a few milliseconds longer, never less; anything else is carried out before `enforce`
/// returns, after any loosening still pending (the queue is serial). A deferred change that
/// `failed` calls `onChange`, so that the engine reconciles and the synchronous retry reports
/// why. Returns `work`'s result, or nil when it was deferred.
public enum LooseningOrder {
    public static func carryOut<Result: Sendable>(loosening: Bool, on queue: DispatchQueue,
                                                  failed: @escaping @Sendable (Result) -> Bool,
                                                  onChange: @escaping @Sendable () -> Void,
                                                  _ work: @escaping @Sendable () -> Result) -> Result? {
        guard loosening else { return queue.sync(execute: work) }
        queue.async { if failed(work()) { onChange() } }
        return nil
    }
}

public typealias ShieldHitSink = @Sendable (ShieldHit) -> Void

/// Several enforcers as one (the hosts file and the app shield): each gets the whole desired
/// set and converges its part; failures are collected from all, in the parts' order.
public final class CompositeEnforcer: Enforcer {
    public let parts: [any Enforcer]
    /// How many of the first parts are enforced side by side (each on its own queue), before
    /// the rest in order: the hosts file and the per-user tables hold the same names for two
    /// resolvers, and neither needs the other, so a change waits for the slower of the two
    /// files to be written and synced, not for both one after the other.
    public let together: Int
    public init(_ parts: [any Enforcer], together: Int = 1) {
        self.parts = parts
        self.together = min(max(together, 1), parts.count)
        sideQueues = (1..<max(self.together, 1)).map { DispatchQueue(label: "blockd.enforce.\($0)") }
    }
    private let sideQueues: [DispatchQueue]
    /// The parts that act, in order: a part that is off is not claimed (its reason is in `offs`).
    public var mode: String { parts.filter { $0.off == nil }.map(\.mode).filter { !$0.isEmpty }.joined(separator: "+") }
    /// `[{"part", "why"}]` for each part that is off.
    public var offs: JSON {
        .array(parts.compactMap { part in part.off.map { ["part": .string(part.mode.isEmpty ? "?" : part.mode), "why": .string($0)] } })
    }
    public func enforce(blocked: [Selection]) -> EnforcementReport { enforce(blocked: blocked, changed: nil) }

    public func enforce(blocked: [Selection], changed: Set<String>?) -> EnforcementReport {
        var report = EnforcementReport()
        var rest = parts[...]
        if together > 1 {
            // The first part here, each other one on a queue of its own (a serial queue gets a
            // thread of its own even on one CPU, where concurrentPerform would take turns).
            let reports = Mutex<[Int: EnforcementReport]>([:])
            let group = DispatchGroup()
            for i in 1..<together {
                nonisolated(unsafe) let part = parts[i]  // each part guards its own state on its own queue
                sideQueues[i - 1].async(group: group) {
                    let r = part.enforce(blocked: blocked, changed: changed)
                    reports.withLock { $0[i] = r }
                }
            }
            report.merge(parts[0].enforce(blocked: blocked, changed: changed))
            group.wait()
            let done = reports.withLock { $0 }
            for i in 1..<together { report.merge(done[i] ?? EnforcementReport()) }
            rest = parts.dropFirst(together)
        }
        for part in rest { report.merge(part.enforce(blocked: blocked, changed: changed)) }
        return report
    }
    public func release() -> [EnforcementFailure] { parts.flatMap { $0.release() } }
}
