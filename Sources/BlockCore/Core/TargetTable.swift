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
    /// The blocked selections and the targets of each, by name.
    private var table = ByName<[Selection]>()

    public init() {}

    public var isEmpty: Bool { table.isEmpty }
    /// The blocked selections, sorted.
    public var names: [String] { table.names }

    public subscript(name: String) -> [Selection]? { table[name] }

    /// Sets the targets of `name` (nil: not blocked). True when that changed the table.
    @discardableResult
    public mutating func set(_ name: String, _ value: [Selection]?) -> Bool {
        guard table[name] != value else { return false }
        table[name] = value
        return true
    }

    /// Every blocked selection's targets, by name.
    public var all: [Selection] {
        var out: [Selection] = []
        out.reserveCapacity(table.count)
        for each in table.values { out += each }
        return out
    }
}
