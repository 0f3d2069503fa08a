/// §7, T5: every change to the targets kept per selection (`DaemonState.targets`), in order,
/// with the value it replaced. With it a change that cannot be saved is put back, and the save
/// writes what changed, in O(change): nothing else needs a copy of the whole dictionary (at
/// 5,000 blocked selections, copying it for the mark and the last save, and freeing the copies,
/// was a fifth of a `start`).
///
/// Positions are absolute (they survive `forget`): a mark keeps the position it was taken at,
/// and the save the position it last wrote up to.
public struct TargetUndo: Sendable {
    private var entries: [(name: String, before: Selection?)] = []
    /// The position of `entries[0]`.
    private var base = 0

    public init() {}

    /// The position after the last change.
    public var end: Int { base + entries.count }

    /// Records that `name`'s targets are about to change from `before`.
    mutating func record(_ name: String, before: Selection?) {
        entries.append((name, before))
    }

    /// Each selection changed since `position`, with its targets as they were there.
    func before(since position: Int) -> [String: Selection?] {
        var out: [String: Selection?] = [:]
        for entry in entries.dropFirst(max(position - base, 0)) where out.index(forKey: entry.name) == nil {
            out[entry.name] = .some(entry.before)
        }
        return out
    }

    /// Puts `targets` back as they were at `position`, newest change first. A position
    /// already forgotten cannot be reached; the caller then works the targets out again.
    mutating func undo(to position: Int, in targets: inout [String: Selection]) -> Bool {
        while end > position, let last = entries.popLast() {
            targets[last.name] = last.before
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
