/// U3 and W1 at scale: what every per-user table (and the table `all`) must say, kept from one
/// change to the next. Each blocked selection's part in the tables is remembered, and each
/// table holds its names with a count of the selections that put each there, so a change of
/// one selection re-works the tables it is in, and those only by its own names: a start beside
/// 5,000 blocked selections does not merge 5,000 lists again. `wanted(from:machineWide:)`
/// is the same worked out from scratch; UserTableSetTests checks that the two agree after
/// random sequences of changes.
public struct UserTableSet: Sendable {
    /// What one table must say: the names blocked, and (W2) what an allow-only window lets
    /// through (nil: no window; two windows at once let through only what both allow).
    public struct Wanted: Equatable, Sendable {
        /// The names, normalised, in table order, without repeats.
        public var names: [String] = []
        public var allowOnly: Set<String>?
        /// Always-allowed hosts under a listed name (`Selection.exceptions`).
        public var exceptions: Set<String> = []

        public init(names: [String] = [], allowOnly: Set<String>? = nil, exceptions: Set<String> = []) {
            (self.names, self.allowOnly, self.exceptions) = (names, allowOnly, exceptions)
        }
    }

    /// One enforcement target's part: the tables it writes to and what it puts there.
    struct Part: Sendable {
        var name: String
        var keys: [UInt32]
        var names: [String]
        var allowed: Set<String>?
        var exceptions: [String]
        /// The tables its enforcement rests on alone (`dependents`).
        var rests: [UInt32]
    }

    /// One table's contents, with how many parts put each name and exception there.
    struct Table: Sendable {
        var names = CountedNames()
        /// W2: the allowed hosts of each allow-only part, by selection.
        var allowOnly: [String: [Set<String>]] = [:]
        var exceptions: [String: Int] = [:]
        /// Parts that put names or an allow-only window here: without one, there is no table.
        var contributors = 0

        var wanted: Wanted? {
            guard contributors > 0 else { return nil }
            var allowOnly: Set<String>?
            for hosts in self.allowOnly.values.joined() { allowOnly = allowOnly.map { $0.intersection(hosts) } ?? hosts }
            return Wanted(names: names.names, allowOnly: allowOnly, exceptions: Set(exceptions.keys))
        }
    }

    /// Whether the table `all` is kept (`wanted(from:machineWide:)`); nil until the first update.
    public private(set) var machineWide: Bool?
    private var parts: [String: [Part]] = [:]
    private var tables: [UInt32: Table] = [:]
    private var resting: [UInt32: [String: Int]] = [:]
    /// Each blocked selection's names in table order.
    private var cache = UserTable.NameCache()

    public init() {}

    /// Brings the tables up to `blocked`, looking at the selections named in `changed` alone
    /// (nil, or another `machineWide` than before: at all of them; with `changed`, `blocked`
    /// is in the order of the names). Returns the uids whose tables may have changed (nil:
    /// any may).
    @discardableResult
    public mutating func update(blocked: [Selection], changed: Set<String>?, machineWide: Bool) -> Set<UInt32>? {
        guard let changed, self.machineWide == machineWide else {
            let names = cache
            self = UserTableSet()
            (self.machineWide, cache) = (machineWide, names)
            for selection in blocked { add(part(of: selection)) }
            cache.keep(Set(parts.keys))
            return nil
        }
        var touched = Set<UInt32>()
        let given = blocked.targets(named: changed)
        for name in changed {
            for old in parts.removeValue(forKey: name) ?? [] {
                remove(old)
                touched.formUnion(old.keys)
            }
            for selection in given[name] ?? [] {
                let new = part(of: selection)
                add(new)
                touched.formUnion(new.keys)
            }
            if given[name] == nil { cache.forget(name) }
        }
        return touched
    }

    /// No table has anything to say.
    public var isEmpty: Bool { tables.isEmpty }

    /// The uids with a table.
    public var uids: Set<UInt32> { Set(tables.keys) }

    /// What each table must say, by uid (`UserTable.everyone` for `all`).
    public var wanted: [UInt32: Wanted] { tables.compactMapValues(\.wanted) }

    /// What `uid`'s table must say (nil: it has none).
    public func wanted(_ uid: UInt32) -> Wanted? { tables[uid]?.wanted }

    /// The selections whose enforcement rests on these tables alone (§7 "Truth"), by uid: the
    /// per-user ones with sites, and (W2) every allow-only one, which the hosts file cannot
    /// express. Machine-wide blocks are the hosts file's; `all` only adds their subdomains.
    public var dependents: [UInt32: [String]] { resting.mapValues { $0.keys.sorted() } }

    /// Every selection that rests on a table (`dependents`, all uids together).
    public var allDependents: Set<String> { Set(resting.values.flatMap(\.keys)) }

    /// The selections that put lines in `uid`'s table, in name order (for tamper reports).
    public func owners(of uid: UInt32) -> [String] {
        parts.filter { $0.value.contains { $0.keys.contains(uid) } }.keys.sorted()
    }

    /// `wanted` worked out from scratch: uid → the valid domains of the selections blocked for
    /// that uid only, and, with `machineWide`, `UserTable.everyone` → those of the selections
    /// blocked for everyone (W1: the module covers their subdomains, which the hosts file
    /// cannot). W2: an allow-only selection puts its allowed hosts into its users' tables, or
    /// into `all`.
    public static func wanted(from blocked: [Selection], machineWide: Bool) -> [UInt32: Wanted] {
        var lists: [UInt32: [[String]]] = [:]
        var out: [UInt32: Wanted] = [:]
        for selection in blocked {
            let keys = selection.users ?? (machineWide ? [UserTable.everyone] : [])
            if selection.isAllowOnly {
                let hosts = selection.allowedHosts
                for key in keys { out[key, default: Wanted()].allowOnly = out[key]?.allowOnly.map { $0.intersection(hosts) } ?? hosts }
                continue
            }
            let sorted = (try? UserTable.sortedNames(selection.domains.compactMap { try? Domain.normalize($0) })) ?? []
            guard !sorted.isEmpty else { continue }
            for key in keys {
                lists[key, default: []].append(sorted)
                out[key, default: Wanted()].exceptions.formUnion(selection.exceptions ?? [])
            }
        }
        for (key, each) in lists { out[key]?.names = UserTable.merged(each) }
        return out
    }

    // MARK: Parts

    private mutating func part(of selection: Selection) -> Part {
        let keys = selection.users ?? (machineWide == true ? [UserTable.everyone] : [])
        let restsHere = selection.isAllowOnly || (selection.users != nil && !selection.domains.isEmpty)
        let rests = restsHere ? selection.users ?? [UserTable.everyone] : []
        if selection.isAllowOnly {
            return Part(name: selection.name, keys: keys, names: [], allowed: selection.allowedHosts, exceptions: [], rests: rests)
        }
        let names = cache.names(of: selection)  // the hosts enforcer's rule (E1)
        return Part(name: selection.name, keys: names.isEmpty ? [] : keys, names: names, allowed: nil, exceptions: selection.exceptions ?? [], rests: rests)
    }

    private mutating func add(_ part: Part) {
        parts[part.name, default: []].append(part)
        for key in part.keys { tables[key, default: Table()].add(part) }  // in place: no copy of its names
        for key in part.rests { resting[key, default: [:]][part.name, default: 0] += 1 }
    }

    private mutating func remove(_ part: Part) {
        for key in part.keys {
            tables[key]?.remove(part)
            if tables[key]?.contributors == 0 { tables[key] = nil }
        }
        for key in part.rests {
            resting[key]?.countDown(part.name)
            if resting[key]?.isEmpty == true { resting[key] = nil }
        }
    }
}

extension UserTableSet.Table {
    mutating func add(_ part: UserTableSet.Part) {
        contributors += 1
        if let allowed = part.allowed {
            allowOnly[part.name, default: []].append(allowed)
        } else {
            names.add(part.names)
            for host in part.exceptions { exceptions[host, default: 0] += 1 }
        }
    }

    mutating func remove(_ part: UserTableSet.Part) {
        contributors -= 1
        if let allowed = part.allowed {
            if let i = allowOnly[part.name]?.firstIndex(of: allowed) { allowOnly[part.name]?.remove(at: i) }
            if allowOnly[part.name]?.isEmpty == true { allowOnly[part.name] = nil }
        } else {
            names.remove(part.names)
            for host in part.exceptions { exceptions.countDown(host) }
        }
    }
}

extension Dictionary where Value == Int {
    /// One fewer of `key`; the key goes at zero.
    mutating func countDown(_ key: Key) {
        guard let n = self[key] else { return }
        self[key] = n > 1 ? n - 1 : nil
    }
}

/// Names in order, each with how many lists hold it: adding or removing a short list costs a
/// binary search per name, a long one a walk of both.
struct CountedNames: Sendable {
    private(set) var names: [String] = []
    private var counts: [Int] = []

    mutating func add(_ sorted: [String]) {
        guard sorted.count > 16 else {
            for name in sorted {
                let (i, found) = names.sortedPosition(of: name)
                if found { counts[i] += 1 } else { names.insert(name, at: i); counts.insert(1, at: i) }
            }
            return
        }
        var (outNames, outCounts) = ([String](), [Int]())
        outNames.reserveCapacity(names.count + sorted.count)
        outCounts.reserveCapacity(names.count + sorted.count)
        var i = 0, j = 0
        while i < names.count || j < sorted.count {
            if j == sorted.count || (i < names.count && names[i] < sorted[j]) {
                outNames.append(names[i]); outCounts.append(counts[i]); i += 1
            } else if i == names.count || sorted[j] < names[i] {
                outNames.append(sorted[j]); outCounts.append(1); j += 1
            } else {
                outNames.append(names[i]); outCounts.append(counts[i] + 1); i += 1; j += 1
            }
        }
        (names, counts) = (outNames, outCounts)
    }

    mutating func remove(_ sorted: [String]) {
        guard sorted.count > 16 else {
            for name in sorted {
                let (i, found) = names.sortedPosition(of: name)
                guard found else { continue }
                if counts[i] > 1 { counts[i] -= 1 } else { names.remove(at: i); counts.remove(at: i) }
            }
            return
        }
        var (outNames, outCounts) = ([String](), [Int]())
        outNames.reserveCapacity(names.count)
        outCounts.reserveCapacity(names.count)
        var j = 0
        for (i, name) in names.enumerated() {
            while j < sorted.count && sorted[j] < name { j += 1 }
            let count = j < sorted.count && sorted[j] == name ? counts[i] - 1 : counts[i]
            if count > 0 { outNames.append(name); outCounts.append(count) }
        }
        (names, counts) = (outNames, outCounts)
    }
}
