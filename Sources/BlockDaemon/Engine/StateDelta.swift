import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The part of the state other than the activities, as the change from one state to the next
/// (§7). Only what changed is kept, and the parts that grow with the number of blocked
/// selections or days (applied, targets, shield hits, failures) are kept as keyed changes, so a
/// state-log record costs the size of the change, not of the state.
public struct StateDelta: Codable, Equatable, Sendable {
    public var lastReconcile: Date?
    public var appliedAdd: [String]?
    public var appliedRemove: [String]?
    /// Targets set (added or changed), by selection.
    public var targets: [String: Selection]?
    public var targetsRemove: [String]?
    /// Failures appended at the end of the list (the list stays bounded, T4).
    public var failuresAdd: [FailureRecord]?
    /// The whole failure list, when it changed other than by appending (`failures --clear`).
    public var failures: [FailureRecord]?
    /// Shield hits of these days, each day replaced whole (an empty day is removed).
    public var shieldHits: [String: [String: Int]]?
    public var usage: UsageLedger?
    /// R1: what changed in the ledger's days, each holding only the users whose figures
    /// changed (merged user by user), the days dropped, and its open intervals set and closed,
    /// by key. A start changes one user's count: the record carries that count, not the day.
    public var historyDays: [String: UsageHistory.Day]?
    public var historyDaysRemove: [String]?
    public var historyOpen: [String: Date]?
    public var historyClosed: [String]?
    public var lastGoodConfig: StoredConfig?
    /// M3: grants, requests, delayed loosenings and allowances, whole (a handful of entries).
    public var moreTime: MoreTimeBook?

    public init() {}

    public var isEmpty: Bool { self == StateDelta() }

    /// The change from `old` to `new`. `selections`, when known, are the only selections whose
    /// applied entry or recorded targets may differ (the core notes each change): those parts
    /// then cost the size of the change, not of every selection blocked; so do the report's
    /// open intervals with `intervals`, the only keys that may differ there
    /// (`UsageHistory.touched`). A list that does not account for the change in size is not
    /// trusted: the parts are compared whole. With `targetsBefore` (each target changed since
    /// `old`, as it was then: the core's undo log) the targets are not compared at all, and
    /// `old` need not hold them; the same for the open intervals with `openBefore`.
    public init(from old: DaemonState, to new: DaemonState, selections: Set<String>? = nil, intervals: Set<String>? = nil,
                targetsBefore: [String: Selection?]? = nil, openBefore: [String: Date?]? = nil) {
        if new.lastReconcile != old.lastReconcile { lastReconcile = new.lastReconcile }
        var old = old
        if targetsBefore != nil { old.targets = new.targets }  // `old` holds none: they are said below
        if selections.map({ selectionsFrom(old, to: new, only: $0) }) != true { selectionsWhole(old, to: new) }
        // Each target changed, as it was (the core's undo log).
        if let targetsBefore { (targets, targetsRemove) = StateDelta.keyed(targetsBefore) { new.targets[$0] } }
        if new.failures != old.failures {
            if let added = StateDelta.appended(old.failures, new.failures) {
                failuresAdd = Array(new.failures.suffix(added))
            } else {
                failures = new.failures
            }
        }
        if new.shieldHits != old.shieldHits {
            var days: [String: [String: Int]] = [:]
            for day in Set(old.shieldHits.keys).union(new.shieldHits.keys) where old.shieldHits[day] != new.shieldHits[day] {
                days[day] = new.shieldHits[day] ?? [:]
            }
            shieldHits = days
        }
        if new.usage != old.usage { usage = new.usage }
        if new.history.days != old.history.days || new.history.schema != old.history.schema {
            var days: [String: UsageHistory.Day] = [:]
            for (day, now) in new.history.days where old.history.days[day] != now {
                days[day] = now.changed(since: old.history.days[day] ?? UsageHistory.Day())
            }
            historyDays = days.isEmpty ? nil : days
            historyDaysRemove = StateDelta.nonEmpty(old.history.days.keys.filter { new.history.days[$0] == nil }.sorted())
        }
        // The open intervals: each one changed, as it was (the ledger's undo log); else those
        // the ledger says it changed, or all of them compared.
        if let openBefore {
            (historyOpen, historyClosed) = StateDelta.keyed(openBefore) { new.history.open[$0] }
        } else if intervals.map({ historyFrom(old, to: new, only: $0) }) != true && new.history.open != old.history.open {
            let set = new.history.open.filter { old.history.open[$0.key] != $0.value }
            historyOpen = set.isEmpty ? nil : set
            historyClosed = StateDelta.nonEmpty(old.history.open.keys.filter { new.history.open[$0] == nil }.sorted())
        }
        if new.lastGoodConfig != old.lastGoodConfig { lastGoodConfig = new.lastGoodConfig }
        if new.moreTime != old.moreTime { moreTime = new.moreTime }
    }

    /// The report's open intervals, looked at for the keys the ledger says it changed alone;
    /// false when they do not account for the change in size.
    private mutating func historyFrom(_ old: DaemonState, to new: DaemonState, only keys: Set<String>) -> Bool {
        var (set, closed) = ([String: Date](), [String]())
        for key in keys {
            switch (old.history.open[key], new.history.open[key]) {
            case (let a, let b?) where a != b: set[key] = b
            case (_?, nil): closed.append(key)
            default: break
            }
        }
        let opened = set.keys.filter { old.history.open[$0] == nil }.count
        guard new.history.open.count - old.history.open.count == opened - closed.count else { return false }
        (historyOpen, historyClosed) = (set.isEmpty ? nil : set, StateDelta.nonEmpty(closed.sorted()))
        return true
    }

    /// Each key changed since the last save, set to its value now or gone: from the undo
    /// log's values then (`before`), so the dictionary is never compared whole. One rule for
    /// the targets and the report's open intervals.
    private static func keyed<Value: Equatable>(_ before: [String: Value?], now: (String) -> Value?) -> (set: [String: Value]?, gone: [String]?) {
        var (set, gone) = ([String: Value](), [String]())
        for (key, was) in before {
            switch (was, now(key)) {
            case (let a, let b?) where a != b: set[key] = b
            case (_?, nil): gone.append(key)
            default: break
            }
        }
        return (set.isEmpty ? nil : set, StateDelta.nonEmpty(gone.sorted()))
    }

    /// The applied list and the targets, compared whole.
    private mutating func selectionsWhole(_ old: DaemonState, to new: DaemonState) {
        if new.applied != old.applied {
            let (o, n) = (Set(old.applied), Set(new.applied))
            appliedAdd = StateDelta.nonEmpty(n.subtracting(o).sorted())
            appliedRemove = StateDelta.nonEmpty(o.subtracting(n).sorted())
        }
        if new.targets != old.targets {
            var set: [String: Selection] = [:]
            for (name, target) in new.targets where old.targets[name] != target { set[name] = target }
            targets = set.isEmpty ? nil : set
            targetsRemove = StateDelta.nonEmpty(old.targets.keys.filter { new.targets[$0] == nil }.sorted())
        }
    }

    /// The applied list (sorted, as the core keeps it) and the targets, looked at for `names`
    /// alone; false when what they account for does not match the change in size.
    private mutating func selectionsFrom(_ old: DaemonState, to new: DaemonState, only names: Set<String>) -> Bool {
        var (add, remove, set, gone) = ([String](), [String](), [String: Selection](), [String]())
        for name in names.sorted() {
            let (was, now) = (StateDelta.contains(old.applied, name), StateDelta.contains(new.applied, name))
            if now && !was { add.append(name) }
            if was && !now { remove.append(name) }
            switch (old.targets[name], new.targets[name]) {
            case (let a, let b?) where a != b: set[name] = b
            case (_?, nil): gone.append(name)
            default: break
            }
        }
        let newTargets = set.keys.filter { old.targets[$0] == nil }.count
        guard new.applied.count - old.applied.count == add.count - remove.count,
              new.targets.count - old.targets.count == newTargets - gone.count else { return false }
        (appliedAdd, appliedRemove) = (StateDelta.nonEmpty(add), StateDelta.nonEmpty(remove))
        (targets, targetsRemove) = (set.isEmpty ? nil : set, StateDelta.nonEmpty(gone))
        return true
    }

    /// Whether the sorted list `list` holds `name`: O(log n).
    static func contains(_ list: [String], _ name: String) -> Bool { list.sortedPosition(of: name).found }

    public func apply(to state: inout DaemonState) {
        if let lastReconcile { state.lastReconcile = lastReconcile }
        if appliedAdd != nil || appliedRemove != nil {
            state.applied = Set(state.applied).subtracting(appliedRemove ?? []).union(appliedAdd ?? []).sorted()
        }
        for (name, target) in targets ?? [:] { state.targets[name] = target }
        for name in targetsRemove ?? [] { state.targets[name] = nil }
        if let failures { state.failures = FailureRecord.bounded(failures) }
        if let failuresAdd { state.failures = FailureRecord.bounded(state.failures + failuresAdd) }
        for (day, hits) in shieldHits ?? [:] { state.shieldHits[day] = hits.isEmpty ? nil : hits }
        if let usage { state.usage = usage }
        for (day, change) in historyDays ?? [:] { state.history.days[day, default: UsageHistory.Day()].merge(change) }
        for day in historyDaysRemove ?? [] { state.history.days[day] = nil }
        for (key, since) in historyOpen ?? [:] { state.history.open[key] = since }
        for key in historyClosed ?? [] { state.history.open[key] = nil }
        if let lastGoodConfig { state.lastGoodConfig = lastGoodConfig }
        if let moreTime { state.moreTime = moreTime }
    }

    /// How many records `new` has that were appended to `old` (which the bound may have cut);
    /// nil when `new` is not `old` plus appended records, as `apply` would make it: a record
    /// changed in place (resolved, T4) or removed from the middle (a member's `failures --clear`)
    /// is written as the whole list.
    static func appended(_ old: [FailureRecord], _ new: [FailureRecord]) -> Int? {
        guard !new.isEmpty else { return nil }
        for added in 1...new.count {
            let kept = new.count - added
            guard kept <= old.count, new.prefix(kept).elementsEqual(old.suffix(kept)) else { continue }
            if FailureRecord.bounded(old + new.suffix(added)) == new { return added }
        }
        return nil
    }

    private static func nonEmpty(_ names: [String]) -> [String]? { names.isEmpty ? nil : names }
}
