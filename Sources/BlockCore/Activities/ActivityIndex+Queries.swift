import FoundationEssentials

/// Answers from the index. Everything on a change's path is O(1) or O(the selection's own
/// activities); the ordered listings (`activities`) are for list commands and reloads.
extension ActivityIndex {
    public var count: Int { entries.count }

    public func activity(named name: String) -> Activity? { entries[name]?.activity }

    /// Every activity, in registration order. O(n log n): for listings, not per change.
    public var activities: [Activity] { ordered(entries.keys) }

    /// The usage limits (§9), in registration order.
    public var limits: [Limit] {
        ordered(limitNames).compactMap { if case .limit(let l) = $0 { l } else { nil } }
    }

    /// The screen-time limits (`Limit.session`), in registration order: none to sort while
    /// there are none, however many other limits there are.
    public var screenLimits: [Limit] {
        ordered(screenLimitNames).compactMap { if case .limit(let l) = $0 { l } else { nil } }
    }

    /// The schedules of allowed hours (`Schedule.session`), in registration order.
    public var allowedHours: [Schedule] {
        ordered(hoursNames).compactMap { if case .schedule(let s) = $0, s.session != nil { s } else { nil } }
    }

    /// Whether any activity lists `selection`.
    public func isNamed(_ selection: String) -> Bool { covering[selection] != nil }

    /// The activities that list `selection`, in registration order.
    public func activities(covering selection: String) -> [Activity] { ordered(covering[selection] ?? []) }

    /// The number of registered blocks whose end is at or before `now`: O(those blocks).
    public func endedBlockCount(by now: Date) -> Int {
        var n = 0
        blockEnds.forEach(while: { $0.date <= now }) { d in
            if entries[d.name]?.version == d.stamp { n += 1 }
        }
        return n
    }

    /// T9: the next instant after `evaluatedAt` at which any activity starts or ends.
    public var nextTransition: Date? { evaluatedAt == nil ? nil : due.min?.date }

    /// T5: why `selection` is blocked at `evaluatedAt` (nil: it is not), in registration order.
    public func reasons(for selection: String) -> [Reason]? {
        blocked[selection]?.map(\.reason)
    }

    /// Whether `selection` is blocked at `evaluatedAt`. O(1).
    public func isBlocked(_ selection: String) -> Bool { blocked[selection] != nil }

    public var blockedCount: Int { blocked.count }

    /// The selections blocked at `evaluatedAt`, by name. O(blocked · log blocked).
    public var blockedSelections: [String] { blocked.keys.sorted() }

    /// When `selection` will be lifted, following only the activities that list it (T5).
    public func until(_ selection: String, from t: Date) -> Date? {
        // The order does not matter here: no sort, however many activities list the selection.
        Policy(clock: clock).until(from: t, covering: (covering[selection] ?? []).compactMap { entries[$0]?.activity })
    }

    /// U2: when `selection` is lifted for `viewer` (nil: a user no activity names), following
    /// only the activities that list it and apply to them.
    public func until(_ selection: String, from t: Date, viewer: UInt32?) -> Date? {
        let covering = (covering[selection] ?? []).compactMap { entries[$0]?.activity }
        return Policy(clock: clock).until(from: t, covering: covering.filter { a in a.scope.map { s in viewer.map(s.contains) ?? false } ?? true })
    }

    /// One blocked selection as `Policy.desired` gives it.
    public func blocked(_ selection: String) -> Policy.Blocked? {
        guard let at = evaluatedAt, let reasons = reasons(for: selection) else { return nil }
        return Policy.Blocked(selection: selection, reasons: reasons, until: until(selection, from: at))
    }

    /// The whole union at `evaluatedAt`, as `Policy.desired` gives it (for tests and answers
    /// that list everything).
    public func desired() -> [Policy.Blocked] { blockedSelections.compactMap(blocked) }

    /// The activities of these names (unknown ones left out), in registration order.
    public func activities<S: Sequence<String>>(named names: S) -> [Activity] { ordered(names) }

    private func ordered<S: Sequence<String>>(_ names: S) -> [Activity] {
        names.compactMap { entries[$0] }.sorted { $0.seq < $1.seq }.map(\.activity)
    }
}
