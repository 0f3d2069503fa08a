/// T5 at scale: what enforcement was last asked for, per blocked selection, kept from one
/// reconcile to the next, so that a change works out the targets of the selections it touched
/// and not of every selection blocked.
///
/// Each blocked selection keeps the targets it is enforced with (several when per-user files
/// split it, W2), in the order of the names. `all` is what the enforcers are given: every
/// selection's targets, by name. `changed` says which selections' targets differ from the
/// previous `all` (nil: any of them may), so an enforcer that keeps its own state can touch
/// those alone. CoreTargetsTests checks the table against one worked out from scratch after
/// random sequences of changes.
public struct TargetTable: Sendable, Equatable {
    /// The blocked selections, sorted, and the targets of each (same positions).
    public private(set) var names: [String] = []
    private var targets: [[Selection]] = []

    public init() {}

    public var isEmpty: Bool { names.isEmpty }

    public subscript(name: String) -> [Selection]? {
        let (i, found) = position(of: name)
        return found ? targets[i] : nil
    }

    /// Sets the targets of `name` (nil: not blocked). True when that changed the table.
    @discardableResult
    public mutating func set(_ name: String, _ value: [Selection]?) -> Bool {
        let (i, found) = position(of: name)
        switch (value, found) {
        case (let value?, true):
            guard targets[i] != value else { return false }
            targets[i] = value
        case (let value?, false):
            names.insert(name, at: i)
            targets.insert(value, at: i)
        case (nil, true):
            names.remove(at: i)
            targets.remove(at: i)
        case (nil, false):
            return false
        }
        return true
    }

    /// Every blocked selection's targets, by name.
    public var all: [Selection] {
        var out: [Selection] = []
        out.reserveCapacity(targets.count)
        for each in targets { out += each }
        return out
    }

    /// Where `name` is, or goes, in `names`: O(log n).
    private func position(of name: String) -> (Int, Bool) {
        var lo = 0, hi = names.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if names[mid] < name { lo = mid + 1 } else { hi = mid }
        }
        return (lo, lo < names.count && names[lo] == name)
    }
}
