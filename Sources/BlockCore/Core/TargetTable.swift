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
    /// Every selection's targets in the order of the names, kept as the table changes, so
    /// that handing them to the enforcers copies nothing.
    public private(set) var all: [Selection] = []
    /// The names with at least one target, sorted.
    public private(set) var targetNames: [String] = []

    public init() {}

    public var isEmpty: Bool { table.isEmpty }
    /// The blocked selections, sorted.
    public var names: [String] { table.names }

    public subscript(name: String) -> [Selection]? { table[name] }

    /// Sets the targets of `name` (nil: not blocked). True when that changed the table.
    @discardableResult
    public mutating func set(_ name: String, _ value: [Selection]?) -> Bool {
        let old = table[name]
        guard old != value else { return false }
        table[name] = value
        let at = all.sortedPosition(of: name, by: \.name)
        all.replaceSubrange(at..<at + (old?.count ?? 0), with: value ?? [])
        let (i, listed) = targetNames.sortedPosition(of: name)
        let lists = !(value ?? []).isEmpty
        if lists && !listed { targetNames.insert(name, at: i) }
        if !lists && listed { targetNames.remove(at: i) }
        return true
    }
}

extension Array where Element == Selection {
    /// The targets named in `names`, by name, from a list in the order of the names (as
    /// `TargetTable.all` is, and as an enforcer told what changed is given it): a binary
    /// search each, not a walk over the list.
    public func targets(named names: some Sequence<String>) -> [String: [Selection]] {
        var out: [String: [Selection]] = [:]
        for name in names {
            var i = sortedPosition(of: name, by: \.name)
            while i < count && self[i].name == name {
                out[name, default: []].append(self[i])
                i += 1
            }
        }
        return out
    }
}
