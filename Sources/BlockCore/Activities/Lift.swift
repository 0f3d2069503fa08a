import FoundationEssentials

/// M3 with A1: what grants lift from one selection. Per activity, the users it is lifted for,
/// or nil for the reason as a whole (a machine-wide reason under an administrator's grant).
/// A grant lifts its asker's own view and nobody else's: kid's more time over bedtime for
/// `@kids` takes kid out of bedtime's scope, and kid2 keeps it.
public struct Lift: Equatable, Sendable {
    public var byActivity: [String: Set<UInt32>?] = [:]
    public init() {}

    public var isEmpty: Bool { byActivity.isEmpty }

    public mutating func add(_ activity: String, uids: Set<UInt32>?) {
        switch (byActivity[activity], uids) {
        case (nil, _): byActivity[activity] = .some(uids)
        case (.some(nil), _), (_, nil): byActivity[activity] = .some(nil)
        case (.some(let a?), let b?): byActivity[activity] = .some(a.union(b))
        }
    }

    public mutating func add(_ other: Lift) {
        for (activity, uids) in other.byActivity { add(activity, uids: uids) }
    }
}

extension Policy.Blocked {
    /// The selection with what `lift` lifts taken out: whole reasons, or some users from a
    /// reason's scope; nil when nothing is left.
    public func without(_ lift: Lift) -> Policy.Blocked? {
        guard !lift.isEmpty else { return self }
        var rest = self
        rest.reasons = reasons.compactMap { reason in
            guard let lifted = lift.byActivity[reason.activity] else { return reason }
            guard let users = lifted, var scope = reason.scope else { return nil }
            scope.uids.removeAll { users.contains($0) }
            guard !scope.uids.isEmpty else { return nil }
            var narrowed = reason
            narrowed.scope = scope
            return narrowed
        }
        return rest.reasons.isEmpty ? nil : rest
    }
}

extension Grant {
    /// A1, U2: what the grant lifts at `t`: the asker's own view only. A reason for several
    /// users stays for the others; a machine-wide one goes as a whole (only an administrator's
    /// grant can hold one: `blockc more` refuses it to a member).
    public func lift(from blocked: Policy.Blocked, at t: Date) -> Lift {
        var out = Lift()
        let gone = lifted(from: blocked, at: t)
        for reason in blocked.reasons where gone.contains(reason.activity) {
            out.add(reason.activity, uids: reason.scope == nil ? nil : [uid])
        }
        return out
    }
}
