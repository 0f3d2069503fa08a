import FoundationEssentials

/// U3 and W1 at scale: the machine-wide table of a big list is rendered again at every change
/// of what is blocked. Each selection's names are normalised and sorted once while it stays
/// blocked (`NameCache`), and a table's names are those lists merged, so a change costs a merge
/// of what is already in order rather than 100,000 names normalised and sorted again.
extension UserTable {
    /// Each blocked selection's names in table order, kept while its domains stay the same.
    public struct NameCache: Sendable {
        private var lists: [String: (domains: [String], names: [String])] = [:]

        public init() {}

        /// `selection`'s valid domains, normalised, in byte order, without repeats (the hosts
        /// enforcer's rule, E1: a name that cannot be normalised is left out); worked out again
        /// only when its domains changed.
        public mutating func names(of selection: Selection) -> [String] {
            // Equal domains usually share their storage, so this compare is cheap.
            if let kept = lists[selection.name], kept.domains == selection.domains { return kept.names }
            let names = (try? UserTable.sortedNames(selection.domains.compactMap { try? Domain.normalize($0) })) ?? []
            lists[selection.name] = (selection.domains, names)
            return names
        }

        /// Forgets `name`'s names (it is no longer blocked).
        public mutating func forget(_ name: String) { lists[name] = nil }

        /// Forgets every selection but those named `kept` (the ones blocked now).
        public mutating func keep(_ kept: Set<String>) {
            if lists.count > kept.count { lists = lists.filter { kept.contains($0.key) } }
        }
    }

    /// Lists each in `sortedNames` order merged into one in that order, without repeats. The
    /// long lists are merged two at a time, shortest first, so the longest is walked once;
    /// the short ones (a block of a few sites each) are sorted together first.
    public static func merged(_ lists: [[String]]) -> [String] {
        var short: [String] = []
        var long: [[String]] = []
        for list in lists {
            if list.count > 64 { long.append(list) } else { short += list }
        }
        short.sort()  // normalised names are ASCII: String's < is their byte order
        var out = dedupe(short)
        for list in long.sorted(by: { $0.count < $1.count }) { out = mergeTwo(out, list) }
        return out
    }

    /// Two lists in order without repeats merged into one, without repeats.
    static func mergeTwo(_ a: [String], _ b: [String]) -> [String] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [String] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i] < b[j] {
                out.append(a[i]); i += 1
            } else if b[j] < a[i] {
                out.append(b[j]); j += 1
            } else {
                out.append(a[i]); i += 1; j += 1
            }
        }
        out += a[i...]
        out += b[j...]
        return out
    }

    static func dedupe(_ sorted: [String]) -> [String] {
        var out: [String] = []
        out.reserveCapacity(sorted.count)
        for name in sorted where out.last != name { out.append(name) }
        return out
    }
}
