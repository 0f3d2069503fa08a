import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// What the engine knew after its last change, for the read-only requests (`status`,
/// `limit list`, `failures`, `stats`): published by the engine on its queue and read by the
/// connections on theirs, so that a reader never waits behind the engine.
///
/// Producing one costs the same at 100,000 activities as at 10: it holds what `status` shows
/// (the blocked selections, the active activities, the limits, the counts), never the whole
/// registry. Holding the registry's storage would make the engine's next change copy all of
/// it (copy-on-write), so `status --all` and `schedule list`, which list every activity
/// anyway, are answered by the engine. `status` is rendered to bytes once per snapshot and
/// view (StatusSnapshot+Line.swift); what depends on the answer's `now` (`now`, remaining
/// seconds, a limit's use today), the enforcers' notes and the server's counters are put in
/// at answer time.
public final class StatusSnapshot: Sendable {
    let local: LocalClock
    /// The activities that are reasons for a blocked selection, in registration order.
    /// nil when more than `maxActive` are active: listing them is O(active), which a change must
    /// not pay, so such a status is answered by the engine.
    let active: [Activity]?
    static let maxActive = 1000
    /// §9: the usage limits, and the usage ledger to bring their use up to the answer's `now`.
    let limits: [Activity]
    let usage: UsageLedger
    let counts: StatusCounts
    /// T5: what the last reconcile found blocked; it holds until `nextTransition`.
    let desired: [Policy.Blocked]
    let failures: [FailureRecord]
    let shieldHits: [String: [String: Int]]
    /// `status`'s enforcement object as of the change, without the enforcers' own notes.
    let enforcement: JSONObject
    /// The selections applied, in name order: `enforcement`'s `applied`, made into JSON only
    /// when a status is written (at 5,000 blocked, building it at every change was most of
    /// the publish).
    let applied: [String]
    let nextTransition: Date?
    let maxActivities: Int
    /// T6: wall minus boot clock as the engine last observed it.
    let wallMinusBoot: TimeInterval?
    /// Whether the state file's last save failed (see `answers(at:boot:)`).
    let saveFailing: Bool
    /// M3: the grants, pending requests and delayed loosenings (`grants`, `requests`, `delayed`).
    let moreTime: RequestsReply
    /// Screen time: who is kept off the screen, as of the change (it holds until `nextTransition`).
    let screen: [ScreenReply]
    /// Per-user blocks exist: `status` and `limit list` depend on who asks (the engine answers).
    let scoped: Bool
    /// F3: when the enforcers last converged with no failure and every selection enforced.
    let lastEnforced: Date?
    /// Asked at answer time: the enforcers' notes (E2, E5, E7) and the server's counters.
    let enforcementNotes: @Sendable (LocalClock) -> JSONObject
    /// See `Engine.Collaborators.notesVersion`; `notesCache` holds what it counted.
    let notesVersion: (@Sendable () -> UInt64)?
    let notesCache = ReadMostly<NotesCache?>(nil)
    let serverStats: @Sendable () -> JSONObject
    /// `status` rendered once per view (nil: everyone's, else a member's uid), on first ask.
    let lines = ReadMostly<[UInt32?: StatusLine]>([:])
    /// Every activity, in a snapshot the engine makes on its queue for one answer
    /// (`Engine.snapshotNow`) and never publishes: with it `status --all` and `schedule list`
    /// are answered here too, by the same renderer.
    let every: [Activity]?

    struct Parts {
        var active: [Activity]?
        var limits: [Activity]
        var counts: StatusCounts
        var desired: [Policy.Blocked]
        /// Some activity has a user scope: views differ by caller, so the engine answers.
        var scoped = false
    }

    init(local: LocalClock, parts: Parts, usage: UsageLedger, failures: [FailureRecord],
         shieldHits: [String: [String: Int]], enforcement: JSONObject, nextTransition: Date?, maxActivities: Int,
         wallMinusBoot: TimeInterval?, saveFailing: Bool, moreTime: RequestsReply = RequestsReply(), screen: [ScreenReply] = [], lastEnforced: Date? = nil,
         enforcementNotes: @escaping @Sendable (LocalClock) -> JSONObject, notesVersion: (@Sendable () -> UInt64)? = nil,
         serverStats: @escaping @Sendable () -> JSONObject, applied: [String] = [], every: [Activity]? = nil) {
        self.applied = applied
        self.every = every
        (self.local, self.active, self.limits, self.counts, self.desired) = (local, parts.active, parts.limits, parts.counts, parts.desired)
        self.scoped = parts.scoped
        (self.usage, self.failures, self.shieldHits, self.enforcement) = (usage, failures, shieldHits, enforcement)
        (self.nextTransition, self.maxActivities, self.wallMinusBoot, self.saveFailing) = (nextTransition, maxActivities, wallMinusBoot, saveFailing)
        (self.enforcementNotes, self.serverStats, self.moreTime) = (enforcementNotes, serverStats, moreTime)
        self.notesVersion = notesVersion
        self.lastEnforced = lastEnforced
        self.screen = screen
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

    /// The one renderer of the read-only answers, for the published snapshot (off the engine's
    /// queue) and for the one the engine makes for an answer (`every` given) alike; nil when
    /// this snapshot cannot give it (the engine then works it out: a view of one user, more
    /// than `maxActive` active, every activity asked of a published snapshot). `private`: the
    /// uid of a caller who sees only their own and the machine-wide things (a member, A1); nil
    /// for an administrator or root, who see everything.
    func answer(_ request: Request, now: Date, private uid: UInt32? = nil) -> JSONObject? {
        switch request {
        case .status(let all, let view):
            if let every { return Authority.view(uid, document(all: all, every: all ? every : nil, now: now)).json }
            guard !(all || view != .caller || scoped || active == nil) else { return nil }
            return Authority.view(uid, document(all: false, now: now)).json
        case .scheduleList:
            guard let every else { return nil }
            return ListReply(.schedules, every.filter { $0.kind == .schedule }.map { shapes.activityReply($0, at: now) }).json
        case .limitList where scoped: return nil
        case .limitList: return ListReply(.limits, limits.map { shapes.activityReply(current($0, now), at: now) }).json
        case .failures: return ListReply(.failures, Authority.view(uid, failures.map(shapes.failureReply))).json
        case .stats: return stats(uid).json
        case .hello, .start, .stop, .scheduleAdd, .scheduleRemove, .selections, .selectionShow, .failuresClear, .limitAdd, .limitRemove, .more, .requests, .approve, .deny, .cancel, .report, .screen, .foreground, .web, .watch, .reload:
            return nil
        }
    }

    var shapes: Shapes { Shapes(clock: local) }

    /// A limit with its use brought up to `now` (nothing is recorded: the engine does that).
    func current(_ activity: Activity, _ now: Date) -> Activity {
        guard case .limit(let l) = activity else { return activity }
        return .limit(l.refreshed(ledger: usage, at: now, clock: local))
    }

    /// `status`: what is blocked, the activities (the active ones; `all` adds every idle one,
    /// which the engine passes in) and `counts`, so that a status with 100,000 idle schedules
    /// stays short. The enforcers' notes and the server's counters are asked for unless given
    /// (a `StatusLine` is rendered with none, and gets them at answer time).
    func document(all: Bool, every: [Activity]? = nil, now: Date, notes: JSONObject? = nil, server: JSONObject? = nil) -> StatusDocument {
        var enforcement = self.enforcement
        if enforcement["applied"] != nil { enforcement["applied"] = .array(applied.map { .string($0) }) }  // in its place
        for (key, value) in notes ?? enforcementNotes(local) { enforcement[key] = value }
        return StatusDocument(answeredAt: local.iso8601(now), timeZone: local.zone.identifier, blocked: desired.map(shapes.blockedReply),
                              activities: (every ?? active ?? []).map { shapes.activityReply(current($0, now), at: now) },
                              failures: failureReplies, all: all, counts: counts, enforcement: enforcement,
                              nextTransition: nextTransition.map(local.iso8601), maxActivities: maxActivities,
                              server: server ?? serverStats(), moreTime: moreTime, screen: screen)
    }

    /// T4: `status` shows the current failures; `failures` lists the resolved ones too.
    var failureReplies: [FailureReply] {
        failures.filter(\.isCurrent).map(shapes.failureReply)
    }

    /// `stats`: every hit by day and selection, or (`uid`, A1) only that user's own.
    func stats(_ uid: UInt32? = nil) -> StatsReply {
        var out: [StatsReply.Hits] = []
        for key in shieldHits.keys.sorted() {
            guard let day = ShieldHitDays.day(of: key, for: uid) else { continue }
            for (selection, count) in shieldHits[key]!.sorted(by: { $0.key < $1.key }) {
                out.append(StatsReply.Hits(day: day, selection: selection, hits: count))
            }
        }
        return StatsReply(shieldHits: out)
    }
}
