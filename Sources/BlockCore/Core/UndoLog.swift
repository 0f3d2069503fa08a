/// §7, T5: every change to a keyed part of the state, in order, with the value it replaced:
/// the targets kept per selection (`DaemonState.targets`) and the report's open intervals
/// (`UsageHistory.open`). With it a change that cannot be saved is put back, and the save writes
/// what changed, in O(change): nothing else needs a copy of the whole dictionary (at 5,000
/// blocked selections, copying those for the mark and the last save, and freeing the copies,
/// was a quarter of a `start`).
///
/// Positions are absolute (they survive `forget`): a mark keeps the position it was taken at,
/// and the save the position it last wrote up to.
public struct UndoLog<Value: Sendable>: Sendable {
    private var entries: [(key: String, before: Value?)] = []
    /// The position of `entries[0]`.
    private var base = 0

    public init() {}

    /// The position after the last change.
    public var end: Int { base + entries.count }

    /// Records that `key`'s value is about to change from `before`.
    mutating func record(_ key: String, before: Value?) {
        entries.append((key, before))
    }

    /// Each key changed since `position`, with its value as it was there.
    public func before(since position: Int) -> [String: Value?] {
        var out: [String: Value?] = [:]
        for entry in entries.dropFirst(max(position - base, 0)) where out.index(forKey: entry.key) == nil {
            out[entry.key] = .some(entry.before)
        }
        return out
    }

    /// Puts `values` back as they were at `position`, newest change first. False when the
    /// position was already forgotten (the caller then works the values out again).
    mutating func undo(to position: Int, in values: inout [String: Value]) -> Bool {
        while end > position, let last = entries.popLast() {
            values[last.key] = last.before
        }
        return end == position
    }

    /// Forgets the changes before `position`: no mark and no save will go back further.
    mutating func forget(before position: Int) {
        let drop = min(max(position - base, 0), entries.count)
        guard drop > 0 else { return }
        entries.removeFirst(drop)
        base += drop
    }
}
