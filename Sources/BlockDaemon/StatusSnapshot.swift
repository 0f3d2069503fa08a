import BlockCore
import Foundation
import Synchronization

/// What the engine knew after its last change, for the read-only requests (`status`,
/// `schedule list`, `limit list`, `failures`, `stats`): published by the engine on its queue
/// and read by the connections on theirs, so that a reader never waits behind the engine.
///
/// Producing one costs the same at 100,000 activities as at 10: it keeps the registry's array
/// and the state's values as they are (copy-on-write values, not copies) and renders nothing.
/// Each answer renders what it shows at answer time, with `now`-dependent fields (remaining
/// seconds, a limit's use today) computed from the data and the clock then. What more than one
/// answer needs (the counts, the active activities) is worked out once, on first use.
final class StatusSnapshot: Sendable {
    let local: LocalClock
    /// The registered activities, in the registry's order.
    let activities: [Activity]
    /// §9: the usage ledger, so that a limit's use is brought up to the answer's `now`.
    let usage: UsageLedger
    /// T5: what the last reconcile found blocked; it holds until `nextTransition`.
    let desired: [Policy.Blocked]
    let failures: [FailureRecord]
    let shieldHits: [String: [String: Int]]
    /// `status`'s enforcement object as of the change, without the enforcers' own notes.
    let enforcement: JSONObject
    let nextTransition: Date?
    let maxActivities: Int
    /// T6: wall minus boot clock as the engine last observed it.
    let wallMinusBoot: TimeInterval?
    /// Whether the state file's last save failed (see `answers(at:boot:)`).
    let saveFailing: Bool
    /// M3: the grants, pending requests and delayed loosenings (`grants`, `requests`, `delayed`).
    let moreTime: JSONObject
    /// Asked at answer time: the enforcers' notes (E2, E5, E7) and the server's counters.
    let enforcementNotes: @Sendable (LocalClock) -> JSONObject
    let serverStats: @Sendable () -> JSONObject
    private let derived = Mutex<Derived?>(nil)

    init(local: LocalClock, activities: [Activity], usage: UsageLedger, desired: [Policy.Blocked], failures: [FailureRecord],
         shieldHits: [String: [String: Int]], enforcement: JSONObject, nextTransition: Date?, maxActivities: Int,
         wallMinusBoot: TimeInterval?, saveFailing: Bool, moreTime: JSONObject = [:],
         enforcementNotes: @escaping @Sendable (LocalClock) -> JSONObject, serverStats: @escaping @Sendable () -> JSONObject) {
        (self.local, self.activities, self.usage, self.desired) = (local, activities, usage, desired)
        (self.failures, self.shieldHits, self.enforcement) = (failures, shieldHits, enforcement)
        (self.nextTransition, self.maxActivities, self.wallMinusBoot, self.saveFailing) = (nextTransition, maxActivities, wallMinusBoot, saveFailing)
        (self.enforcementNotes, self.serverStats, self.moreTime) = (enforcementNotes, serverStats, moreTime)
    }

    /// Whether this snapshot is the truth at wall time `now` (boot clock `boot`); when it is
    /// not, the request goes to the engine, which observes the clock first.
    /// - A boundary passed (`now` ≥ the next transition) that the engine has not handled yet:
    ///   what is blocked and what is active may have changed.
    /// - T6: the wall clock was stepped since the engine last looked (wall − boot moved by a
    ///   second or more, the engine's own threshold). The engine shifts every block by the step
    ///   in `observedNow()`; answering from here would show end times and remaining seconds
    ///   off by the step. Going through the engine makes it notice the step first.
    /// - The state file cannot be saved: the engine retries on its own and clears the problem
    ///   without a change to publish, so `stateProblem` is only current on the engine's side.
    func answers(at now: Date, boot: TimeInterval) -> Bool {
        guard !saveFailing, let offset = wallMinusBoot else { return false }
        if let next = nextTransition, now >= next { return false }
        return abs(now.timeIntervalSince1970 - boot - offset) < 1
    }

    // MARK: Answers

    func answer(_ request: Request, now: Date) -> JSONObject? {
        switch request {
        case .status(let all): return status(all: all, now: now)
        case .scheduleList: return ["schedules": .array(activities.filter { $0.kind == .schedule }.map { shapes.activity($0, at: now) })]
        case .limitList: return ["limits": .array(activities.filter { $0.kind == .limit }.map { shapes.activity(current($0, now), at: now) })]
        case .failures: return ["failures": failuresJSON]
        case .stats: return ["shieldHits": statsJSON]
        default: return nil
        }
    }

    var shapes: Shapes { Shapes(clock: local) }

    /// A limit with its use brought up to `now` (nothing is recorded: the engine does that).
    func current(_ activity: Activity, _ now: Date) -> Activity {
        guard case .limit(let l) = activity else { return activity }
        return .limit(l.refreshed(ledger: usage, at: now, clock: local))
    }

    /// `status`: what is blocked, the activities (every one with `all`, else the active ones)
    /// and `counts`, so that a status with 100,000 idle schedules stays short.
    func status(all: Bool, now: Date) -> JSONObject {
        let d = derive()
        let shown = all ? activities : d.active
        var enforcement = self.enforcement
        for (key, value) in enforcementNotes(local) { enforcement[key] = value }
        var o: JSONObject = [
            "now": .string(local.iso8601(now)),
            "timeZone": .string(local.timeZone.identifier),
            "blocked": .array(desired.map { shapes.blocked($0) }),
            "activities": .array(shown.map { shapes.activity(current($0, now), at: now) }),
            "failures": failuresJSON,
            "all": .bool(all),
            "counts": .object(d.counts),
            "enforcement": .object(enforcement),
            "nextTransition": nextTransition.map { .string(local.iso8601($0)) } ?? .null,
            "maxActivities": .int(Int64(maxActivities)),
            "server": .object(serverStats()),
        ]
        for (key, value) in moreTime { o[key] = value }
        return o
    }

    var failuresJSON: JSON {
        .array(failures.map { shapes.failure(time: $0.time, code: $0.code, message: $0.message, uid: $0.uid, activity: $0.activity) })
    }

    var statsJSON: JSON {
        var out: [JSON] = []
        for day in shieldHits.keys.sorted() {
            for (selection, count) in shieldHits[day]!.sorted(by: { $0.key < $1.key }) {
                out.append(["day": .string(day), "selection": .string(selection), "hits": .int(Int64(count))])
            }
        }
        return .array(out)
    }

    // MARK: Worked out once per snapshot

    struct Derived: Sendable {
        /// The activities that are active, in registry order.
        var active: [Activity]
        /// `{"activities", "active", "blocks", "schedules", "limits"}`.
        var counts: JSONObject
    }

    /// An activity is active exactly when it is one of the reasons of the blocked set (T5),
    /// which holds until the next transition, like the snapshot. Names are only compared for
    /// the kinds that have a reason, so a pass over 100,000 idle schedules with one block
    /// active compares no schedule name.
    private func derive() -> Derived {
        derived.withLock { memo in
            if let memo { return memo }
            let reasons = desired.flatMap(\.reasons)
            let names = Set(reasons.map(\.activity))
            let kinds = Set(reasons.map(\.kind))
            var active: [Activity] = []
            var counts: [Activity.Kind: Int] = [:]
            for a in activities {
                counts[a.kind, default: 0] += 1
                if kinds.contains(a.kind) && names.contains(a.name) { active.append(a) }
            }
            let d = Derived(active: active, counts: [
                "activities": .int(Int64(activities.count)), "active": .int(Int64(active.count)),
                "blocks": .int(Int64(counts[.block] ?? 0)), "schedules": .int(Int64(counts[.schedule] ?? 0)),
                "limits": .int(Int64(counts[.limit] ?? 0)),
            ])
            memo = d
            return d
        }
    }
}
