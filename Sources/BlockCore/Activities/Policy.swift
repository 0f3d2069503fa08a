import FoundationEssentials

/// What must be blocked at an instant, and when that can next change.
///
/// T5: the blocked set is the union of the selections of every activity active at `t`.
/// Nothing here ever means "unblock everything": the daemon takes `desired(at:)` and applies
/// the difference, so an activity ending lifts only what no other activity still covers.
public struct Policy: Sendable {
    public var clock: LocalClock
    /// Chains of back-to-back activities longer than this are reported as having no end.
    public static let horizon: TimeInterval = 400 * 86_400

    public init(clock: LocalClock) { self.clock = clock }

    /// One blocked selection with every reason that holds now and the instant it will be
    /// lifted if nothing changes (nil: a chain of windows with no end in sight).
    public struct Blocked: Hashable, Sendable {
        public var selection: String
        public var reasons: [Reason]
        public var until: Date?

        public init(selection: String, reasons: [Reason], until: Date?) {
            (self.selection, self.reasons, self.until) = (selection, reasons, until)
        }
    }

    /// The selections blocked at `t`, sorted by name; each with its reasons in activity order.
    /// Linear in the activities plus, per blocked selection, the activities that list it.
    public func desired(at t: Date, activities: [Activity]) -> [Blocked] {
        var covering: [String: [Activity]] = [:]
        var reasons: [String: [Reason]] = [:]
        for activity in activities {
            for selection in activity.selections { covering[selection, default: []].append(activity) }
            guard let w = activity.activeWindow(at: t, clock: clock) else { continue }
            for selection in activity.selections {
                let reason = Reason(activity: activity.name, kind: activity.kind, until: w.end, scope: activity.blockedScope(at: t))
                if !(reasons[selection]?.contains(reason) ?? false) { reasons[selection, default: []].append(reason) }
            }
        }
        return reasons.keys.sorted().map { name in
            Blocked(selection: name, reasons: reasons[name]!, until: until(from: t, covering: covering[name] ?? []))
        }
    }

    /// The first instant after `t` at which no activity covers `selection`: the latest end of
    /// the windows covering it, followed through windows that start exactly as another ends
    /// (a manual block ending inside bedtime is lifted at bedtime's end, T5). `t` itself when
    /// nothing covers the selection at `t`; nil when the chain runs past `horizon`.
    public func until(_ selection: String, from t: Date, activities: [Activity]) -> Date? {
        until(from: t, covering: activities.filter { $0.selections.contains(selection) })
    }

    func until(from t: Date, covering: [Activity]) -> Date? {
        var u = t
        while u.timeIntervalSince(t) < Policy.horizon {
            let ends = covering.compactMap { $0.activeWindow(at: u, clock: clock)?.end }
            guard let latest = ends.max() else { return u }
            u = latest
        }
        return nil
    }

    /// The next instant after `t` at which any activity starts or ends: the one timer the
    /// daemon arms (T9). Nil when nothing will ever change.
    public func nextTransition(after t: Date, activities: [Activity]) -> Date? {
        var next: Date?
        for activity in activities {
            if let b = activity.nextBoundary(after: t, clock: clock), next.map({ b < $0 }) ?? true { next = b }
        }
        return next
    }
}
