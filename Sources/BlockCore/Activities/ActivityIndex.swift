import FoundationEssentials

/// The registered activities, kept so that the work per change does not grow with their
/// number: activities by name; for each selection the activities that list it; a queue of
/// each activity's next boundary (its top is the one timer, T9); and the union of T5 — for
/// each selection blocked at `evaluatedAt`, its reasons — updated only for the activities a
/// change or a passing boundary touches.
///
/// `Policy.desired` and `Policy.nextTransition` are the full recomputation this must agree
/// with (ActivityIndexTests checks it on randomized histories). Reasons come out in
/// registration order, which is the order of `activities` and so the reference's order.
public struct ActivityIndex: Sendable {
    public private(set) var clock: LocalClock
    /// The instant the union is kept for (nil: not built yet, or the clock changed; the next
    /// `advance(to:)` builds it from scratch).
    public private(set) var evaluatedAt: Date?

    struct Entry: Sendable {
        var activity: Activity
        /// Registration order: kept when the activity is replaced, new when it is re-added.
        var seq: UInt64
        /// The activity's window containing `evaluatedAt`, if it is active then.
        var window: Window?
        /// Its next boundary after `evaluatedAt`, and the stamp of its element in `due`.
        var boundary: Date?
        var stamp: UInt64
        /// The stamp of the last `put`, naming the block's element in `blockEnds`.
        var version: UInt64
    }

    /// An element of a queue; it is current only while its stamp matches its entry's.
    struct Due: Comparable, Sendable {
        var date: Date
        var stamp: UInt64
        var name: String
        static func < (a: Due, b: Due) -> Bool { (a.date, a.stamp) < (b.date, b.stamp) }
    }

    var entries: [String: Entry] = [:]
    var covering: [String: Set<String>] = [:]
    var limitNames: Set<String> = []
    /// Schedules of allowed hours (`Schedule.session`): they hold no selection.
    var hoursNames: Set<String> = []
    /// Screen-time limits (`Limit.session`): what they count is time at the screen.
    var screenLimitNames: Set<String> = []
    var due = Heap<Due>()
    /// Blocks by end, for expiry and the cap's count (T4) without a walk.
    var blockEnds = Heap<Due>()
    /// For each blocked selection its reasons, kept in registration order (by `seq`), so that
    /// reading them costs no sort however many activities list the selection.
    var blocked: [String: [Held]] = [:]

    struct Held: Sendable {
        var seq: UInt64
        var reason: Reason
    }
    var touched: Set<String> = []
    var nextSeq: UInt64 = 0
    /// How many activities of each kind are registered (status's counts without a walk).
    public private(set) var kindCounts: [Activity.Kind: Int] = [:]
    /// How many activities have a user scope (per-user blocks) or are limits (§9: each person
    /// has their own allowance, so a limit blocks people one by one): while there is none,
    /// every view of the union is the whole one.
    public private(set) var scopedCount = 0
    /// How many activities each client uid registered (A1: a member's quota without a walk).
    public private(set) var ownerCounts: [UInt32: Int] = [:]
    /// How many activities are active (have a window containing `evaluatedAt`).
    public private(set) var activeCount = 0
    var counter: UInt64 = 0

    public init(clock: LocalClock, activities: [Activity] = []) {
        self.clock = clock
        for activity in activities { put(activity) }
    }

    /// Adds `activity`, or replaces the one of the same name in place. O(selections · log n).
    public mutating func put(_ activity: Activity) {
        let name = activity.name
        let seq: UInt64
        if let old = entries[name] {
            seq = old.seq
            kindCounts[old.activity.kind, default: 1] -= 1
            if old.activity.isPerPerson { scopedCount -= 1 }
            countOwner(old.activity, -1)
            detach(name, old)
        } else {
            seq = nextSeq
            nextSeq += 1
        }
        let stamp = tick()
        entries[name] = Entry(activity: activity, seq: seq, window: nil, boundary: nil, stamp: stamp, version: stamp)
        kindCounts[activity.kind, default: 0] += 1
        if activity.isPerPerson { scopedCount += 1 }
        countOwner(activity, 1)
        for selection in activity.selections { covering[selection, default: []].insert(name) }
        if case .limit(let l) = activity {
            limitNames.insert(name)
            if l.session != nil { screenLimitNames.insert(name) }
        }
        if case .schedule(let s) = activity, s.session != nil { hoursNames.insert(name) }
        if case .block(let b) = activity { blockEnds.push(Due(date: b.end, stamp: stamp, name: name)) }
        evaluate(name)
        tidy()
    }

    /// Removes the activity named `name` and returns it. O(selections · log n).
    @discardableResult
    public mutating func remove(_ name: String) -> Activity? {
        guard let old = entries.removeValue(forKey: name) else { return nil }
        kindCounts[old.activity.kind, default: 1] -= 1
        if old.activity.isPerPerson { scopedCount -= 1 }
        countOwner(old.activity, -1)
        detach(name, old)
        tidy()
        return old.activity
    }

    private mutating func countOwner(_ activity: Activity, _ delta: Int) {
        guard case .client(let uid) = activity.origin else { return }
        let n = ownerCounts[uid, default: 0] + delta
        ownerCounts[uid] = n > 0 ? n : nil
    }

    /// Brings the union to `t`: only the activities whose boundary is due by `t` are looked at
    /// again (an activity's window cannot change between its boundaries). Time going back,
    /// or a first look, rebuilds everything (T6, T7).
    public mutating func advance(to t: Date) {
        guard let at = evaluatedAt, t >= at else { return rebuild(at: t) }
        evaluatedAt = t
        while let top = due.min, top.date <= t {
            due.popMin()
            if entries[top.name]?.stamp == top.stamp { evaluate(top.name) }
        }
        tidy()
    }

    /// T7: another time zone moves every schedule; the next `advance(to:)` rebuilds the union.
    public mutating func setClock(_ clock: LocalClock) {
        self.clock = clock
        evaluatedAt = nil
    }

    /// Removes and returns the blocks that have ended by `now`, in registration order.
    public mutating func removeEndedBlocks(by now: Date) -> [Block] {
        var ended: [(UInt64, Block)] = []
        while let top = blockEnds.min, top.date <= now {
            blockEnds.popMin()
            guard let e = entries[top.name], e.version == top.stamp, case .block(let b) = e.activity else { continue }
            ended.append((e.seq, b))
            remove(top.name)
        }
        return ended.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The selections whose reasons may have changed since the last call, and forgets them.
    public mutating func takeTouched() -> Set<String> {
        defer { touched = [] }
        return touched
    }

    // MARK: Keeping the union

    private mutating func tick() -> UInt64 {
        counter += 1
        return counter
    }

    private mutating func rebuild(at t: Date) {
        evaluatedAt = t
        touched.formUnion(blocked.keys)
        blocked = [:]
        activeCount = 0
        due = Heap()
        // In registration order, so that each selection's reasons are appended, not inserted.
        for name in entries.keys.sorted(by: { entries[$0]!.seq < entries[$1]!.seq }) {
            entries[name]!.window = nil
            evaluate(name)
        }
        tidy()
    }

    /// Looks at one activity at `evaluatedAt` and updates the reasons of its selections.
    private mutating func evaluate(_ name: String) {
        guard let t = evaluatedAt, var e = entries[name] else { return }
        let window = e.activity.activeWindow(at: t, clock: clock)
        if (window != nil) != (e.window != nil) { activeCount += window != nil ? 1 : -1 }
        // §9: a limit's reason names the people whose allowance is used up, which changes while
        // its window (from the first of them to midnight) does not.
        if window != e.window || (window != nil && e.activity.kind == .limit) {
            let reason = window.map { Reason(activity: name, kind: e.activity.kind, until: $0.end, scope: e.activity.blockedScope(at: t)) }
            for selection in e.activity.selections { setReason(reason, seq: e.seq, for: selection) }
        }
        e.window = window
        e.stamp = tick()
        e.boundary = e.activity.nextBoundary(after: t, clock: clock).flatMap { $0 > t ? $0 : nil }
        if let b = e.boundary { due.push(Due(date: b, stamp: e.stamp, name: name)) }
        entries[name] = e
    }

    private mutating func detach(_ name: String, _ old: Entry) {
        for selection in old.activity.selections {
            covering[selection]?.remove(name)
            if covering[selection]?.isEmpty == true {
                covering[selection] = nil
                touched.insert(selection)  // no longer named: its recorded targets go (§7)
            }
            if old.window != nil { setReason(nil, seq: old.seq, for: selection) }
        }
        if old.window != nil { activeCount -= 1 }
        limitNames.remove(name)
        hoursNames.remove(name)
        screenLimitNames.remove(name)
    }

    /// Sets (or with nil removes) the reason of the activity registered as `seq`. O(log R) to
    /// find it, plus the move of the array's tail on an insertion or removal.
    private mutating func setReason(_ reason: Reason?, seq: UInt64, for selection: String) {
        let (lo, found, same) = position(of: seq, reason, in: selection)
        if let reason {
            if found {
                guard !same else { return }
                blocked[selection]![lo].reason = reason
            } else {
                blocked[selection, default: []].insert(Held(seq: seq, reason: reason), at: lo)
            }
        } else {
            guard found else { return }
            blocked[selection]!.remove(at: lo)
            if blocked[selection]!.isEmpty { blocked[selection] = nil }
        }
        touched.insert(selection)
    }

    /// Where the reason of `seq` is (or goes) among `selection`'s, whether it is there, and
    /// whether it equals `reason`. Reads without keeping a reference, so the caller's mutation
    /// that follows happens in place.
    private func position(of seq: UInt64, _ reason: Reason?, in selection: String) -> (Int, Bool, Bool) {
        guard let held = blocked[selection] else { return (0, false, false) }
        var lo = 0, hi = held.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if held[mid].seq < seq { lo = mid + 1 } else { hi = mid }
        }
        let found = lo < held.count && held[lo].seq == seq
        return (lo, found, found && held[lo].reason == reason)
    }

    /// Lazy deletion's upkeep: the queues' tops are current, and neither queue holds more
    /// than about twice the activities (amortized O(1) per change).
    private mutating func tidy() {
        while let top = due.min, entries[top.name]?.stamp != top.stamp { due.popMin() }
        let bound = 2 * entries.count + 64
        if due.count > bound {
            due = Heap(entries.compactMap { name, e in e.boundary.map { Due(date: $0, stamp: e.stamp, name: name) } })
        }
        if blockEnds.count > bound {
            blockEnds = Heap(entries.compactMap { name, e in
                guard case .block(let b) = e.activity else { return nil }
                return Due(date: b.end, stamp: e.version, name: name)
            })
        }
    }
}
