/// Binary search over a collection kept sorted, for the structures that a change updates in
/// place (the targets, the applied list, the hosts section's order, the published blocked
/// view) instead of sorting again: O(log n) to find, a move of the tail to insert.
extension RandomAccessCollection where Index == Int {
    /// The first position whose key is not below `key`, in a collection sorted by `keyOf`.
    public func sortedPosition<Key: Comparable>(of key: Key, by keyOf: (Element) -> Key) -> Int {
        var lo = startIndex, hi = endIndex
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if keyOf(self[mid]) < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}

extension RandomAccessCollection where Index == Int, Element: Comparable {
    /// Where `element` is, or goes, in this sorted collection, and whether it is there.
    public func sortedPosition(of element: Element) -> (index: Int, found: Bool) {
        let i = sortedPosition(of: element, by: { $0 })
        return (i, i < endIndex && self[i] == element)
    }
}

/// Values kept in the order of their names, each name once: a lookup is O(log n), and the
/// values in order cost no sort (a snapshot's blocked list, the targets of every selection).
public struct ByName<Value> {
    /// The names, sorted, and the value of each (same positions).
    public private(set) var names: [String] = []
    public private(set) var values: [Value] = []

    public init() {}

    public var count: Int { names.count }
    public var isEmpty: Bool { names.isEmpty }

    /// The value of `name`; setting nil takes the name out.
    public subscript(name: String) -> Value? {
        get {
            let (i, found) = names.sortedPosition(of: name)
            return found ? values[i] : nil
        }
        set {
            let (i, found) = names.sortedPosition(of: name)
            switch (newValue, found) {
            case (let value?, true): values[i] = value
            case (let value?, false):
                names.insert(name, at: i)
                values.insert(value, at: i)
            case (nil, true):
                names.remove(at: i)
                values.remove(at: i)
            case (nil, false): break
            }
        }
    }
}

extension ByName: Sendable where Value: Sendable {}
extension ByName: Equatable where Value: Equatable {}
