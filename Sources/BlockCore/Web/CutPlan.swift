/// E5 "felt at once", as pure state: which addresses are known for each blocked domain, which
/// of them the nftables table rejects and until when. Times are seconds on the daemon's
/// monotonic clock, passed in (BlockCore never reads a clock).
///
/// A domain that becomes blocked has its known addresses cut at once and rejected for the
/// grace period (`ConnectGrace=`), longer than browsers keep addresses cached; a selection
/// with `Firewall=yes` keeps them rejected for the whole block. Addresses learned later from
/// DNS join the same entry. An unblocked domain's entry goes at once.
///
/// A domain blocked for some users only (U3) is cut and refused for their sockets only: cuts
/// carry the owners' uids, and the table's rules match them with `meta skuid`.
public struct CutPlan: Equatable, Sendable {
    /// Whose sockets a block, a cut or a reject applies to: nil, everyone's; else the owners'
    /// uids (`idiag_uid` for the cut, `meta skuid` for the table).
    public typealias Owners = Set<UInt32>?

    /// One blocked domain: whether its selection holds the reject for the whole block
    /// (`Firewall=yes`), and for whom it is blocked.
    public struct Block: Equatable, Sendable {
        public var whole: Bool
        public var users: Owners
        public init(whole: Bool = false, users: Owners = nil) {
            self.whole = whole
            self.users = users
        }
    }

    public struct Entry: Equatable, Sendable {
        public var addresses: Set<IPAddress>
        /// nil: for as long as the domain is blocked (`Firewall=yes`).
        public var until: Double?
        public var users: Owners = nil
    }

    /// Sockets to destroy: those of `users` (nil: anyone's) whose peer is one of `addresses`.
    public struct Cut: Equatable, Sendable {
        public var users: Owners
        public var addresses: [IPAddress]
        public init(users: Owners = nil, addresses: [IPAddress]) {
            self.users = users
            self.addresses = addresses
        }
    }

    /// One group of the table: connections from sockets of `users` (nil: anyone's) to
    /// `addresses` are refused.
    public struct Rule: Equatable, Sendable {
        public var users: [UInt32]?
        public var addresses: [IPAddress]
        public init(users: [UInt32]? = nil, addresses: [IPAddress]) {
            self.users = users
            self.addresses = addresses
        }
    }

    /// What blockd learned about each domain's addresses, kept across blocks (a domain blocked
    /// again is cut at once, before DNS answers).
    public private(set) var known: [String: Set<IPAddress>] = [:]
    /// Domains blocked now, with their `Firewall=` and scope.
    public private(set) var blocked: [String: Block] = [:]
    /// The reject entries, per domain.
    public private(set) var entries: [String: Entry] = [:]
    public var grace: Double

    public init(grace: Double) { self.grace = grace }

    /// Addresses never rejected nor cut: the sinks and what a resolver reading the hosts file
    /// (systemd-resolved) might answer, and the machine's own loopback services.
    public static let neverCut: Set<IPAddress> = Set(["0.0.0.0", "::", "127.0.0.1", "::1", "127.0.0.53", "127.0.0.54"]
        .compactMap(IPAddress.init) + HostsFile.Sink.reject.addresses)

    /// Machine-wide blocks only (domain → `Firewall=yes`), as before per-user scopes.
    public mutating func update(blocked now: [String: Bool], at time: Double) -> (newly: [String], cut: [IPAddress]) {
        let (newly, cuts) = update(blocks: now.mapValues { Block(whole: $0) }, at: time)
        return (newly, cuts.flatMap(\.addresses).sorted())
    }

    /// The new desired set of blocked domains. Returns the domains that just became blocked,
    /// to look up, and the known addresses to cut now, grouped by whose sockets: a domain newly
    /// blocked is cut for its whole scope, one whose scope grew for the users it gained (and
    /// gets a fresh grace: for them the block just started).
    public mutating func update(blocks now: [String: Block], at time: Double) -> (newly: [String], cuts: [Cut]) {
        let newly = now.keys.filter { blocked[$0] == nil }.sorted()
        for domain in entries.keys where now[domain] == nil { entries[domain] = nil }
        var cuts: [Owners: Set<IPAddress>] = [:]
        for (domain, block) in now {
            let gained = CutPlan.gained(from: blocked[domain], to: block)
            if let gained {
                entries[domain] = Entry(addresses: known[domain] ?? [], until: block.whole ? nil : time + grace, users: block.users)
                cuts[gained, default: []].formUnion(known[domain] ?? [])
            } else if var e = entries[domain] {
                // Firewall= switched by a reload, or the scope shrank: follow it for what is left.
                e.until = block.whole ? nil : (e.until ?? time + grace)
                e.users = block.users
                entries[domain] = e
            } else if block.whole {
                entries[domain] = Entry(addresses: known[domain] ?? [], until: nil, users: block.users)
            }
        }
        blocked = now
        let list = cuts.filter { !$0.value.isEmpty }.map { Cut(users: $0.key, addresses: $0.value.sorted()) }
        return (newly, list.sorted { CutPlan.order($0.users, $1.users) })
    }

    /// Whose sockets a change of scope newly blocks (nil inside: everyone's), or nil when nobody's.
    static func gained(from old: Block?, to new: Block) -> Owners? {
        guard let old else { return .some(new.users) }
        guard let was = old.users else { return nil }
        guard let now = new.users else { return .some(nil) }
        let added = now.subtracting(was)
        return added.isEmpty ? nil : .some(added)
    }

    /// Two scopes together: everyone when either is.
    public static func union(_ a: Owners, _ b: Owners) -> Owners {
        guard let a, let b else { return nil }
        return a.union(b)
    }

    /// Machine-wide first, then by the uids.
    static func order(_ a: Owners, _ b: Owners) -> Bool {
        switch (a, b) {
        case (nil, nil), (_, nil): return false
        case (nil, _): return true
        case let (x?, y?): return x.sorted().lexicographicallyPrecedes(y.sorted())
        }
    }

    /// DNS answered `addresses` for `domain`: remembers them and returns the ones not cut yet
    /// for this block (to cut now). Nothing is cut for a domain no longer blocked.
    public mutating func learned(_ addresses: [IPAddress], for domain: String) -> [IPAddress] {
        learnedCut(addresses, for: domain)?.addresses ?? []
    }

    /// `learned`, with whose sockets to cut (the domain's scope); nil when nothing is to cut.
    public mutating func learnedCut(_ addresses: [IPAddress], for domain: String) -> Cut? {
        let usable = Set(addresses).subtracting(CutPlan.neverCut)
        guard !usable.isEmpty else { return nil }
        let before = known[domain] ?? []
        known[domain] = before.union(usable)
        guard let block = blocked[domain] else { return nil }
        if var e = entries[domain] {
            e.addresses.formUnion(usable)
            entries[domain] = e
        }
        let fresh = usable.subtracting(before)
        return fresh.isEmpty ? nil : Cut(users: block.users, addresses: fresh.sorted())
    }

    /// Drops entries whose grace ended by `time`; whether anything changed.
    public mutating func expire(at time: Double) -> Bool {
        let ended = entries.filter { $0.value.until.map { $0 <= time } ?? false }.keys
        for d in ended { entries[d] = nil }
        return !ended.isEmpty
    }

    /// The earliest end of a grace period, for the one timer.
    public var nextExpiry: Double? { entries.values.compactMap(\.until).min() }

    /// Addresses the table rejects now for anyone (without the sink): sorted, IPv4 first.
    public var rejected: [IPAddress] { rules.flatMap(\.addresses).sorted() }

    /// The table's groups: each address refused for the union of its entries' scopes (for
    /// everyone when any entry is machine-wide); addresses with the same owners share a rule.
    /// Machine-wide first, then by the uids; addresses sorted, IPv4 first.
    public var rules: [Rule] {
        var owners: [IPAddress: Owners] = [:]
        for entry in entries.values {
            for address in entry.addresses.subtracting(CutPlan.neverCut) {
                let merged: Owners
                if let seen = owners[address] {
                    merged = CutPlan.union(seen, entry.users)
                } else {
                    merged = entry.users
                }
                owners[address] = .some(merged)
            }
        }
        let groups = Dictionary(grouping: owners.keys) { owners[$0]! }
        return groups.map { Rule(users: $0.key?.sorted(), addresses: $0.value.sorted()) }
            .sorted { CutPlan.order($0.users.map(Set.init), $1.users.map(Set.init)) }
    }

    /// The latest end of a grace period now in force (nil when none or all are for the whole block).
    public var until: Double? { entries.values.compactMap(\.until).max() }
}

/// The nftables script for blockd's own table (E5), applied atomically in one
/// `nft_run_cmd_from_buffer` transaction. nft 1.0.6 has no `destroy`, so `add table` (a no-op
/// when it exists) followed by `delete table` makes a re-apply idempotent.
///
/// Each rule's addresses are in named sets of its own (`r0v4`, `r0v6`, …, in the rules'
/// order), so that a change of addresses alone is made element by element (`delta`): the
/// table is rebuilt only when its rules' owners or W2's windows change (T5: a change costs its
/// own size, not that of everything refused).
public enum NftScript {
    public static let family = "inet"
    public static let table = "blockd"

    /// The whole table: an output-hook chain that rejects every new connection to
    /// `addresses` (TCP with a reset, everything else with ICMP administratively prohibited),
    /// so a connect fails at once instead of timing out. Nil addresses: the table removed.
    public static func script(rejecting addresses: [IPAddress]) -> String {
        script(rules: addresses.isEmpty ? [] : [CutPlan.Rule(addresses: addresses)])
    }

    /// The rules the table holds: those with addresses and someone to refuse them for.
    static func kept(_ rules: [CutPlan.Rule]) -> [CutPlan.Rule] {
        rules.filter { !$0.addresses.isEmpty && $0.users?.isEmpty != true }
    }

    /// The names of rule `index`'s two sets.
    static func sets(_ index: Int) -> (v4: String, v6: String) { ("r\(index)v4", "r\(index)v6") }

    /// The table with one pair of rejects per rule and family, each on the rule's set of that
    /// family; a rule with users matches only packets from sockets they own (`meta skuid`,
    /// known for locally generated packets, which is all the output hook sees). W2's `windows`
    /// follow the rejects (`windowLines`). No rules and no windows: the table removed.
    public static func script(rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule] = []) -> String {
        var out = "add table \(family) \(table)\ndelete table \(family) \(table)\n"
        let rules = kept(rules)
        guard !rules.isEmpty || !windows.isEmpty else { return out }
        out += "table \(family) \(table) {\n"
        for (index, rule) in rules.enumerated() {
            let (v4, v6) = sets(index)
            for (name, type, list) in [(v4, "ipv4_addr", rule.addresses.filter(\.isIPv4)), (v6, "ipv6_addr", rule.addresses.filter { !$0.isIPv4 })] {
                let elements = list.isEmpty ? "" : " elements = { \(list.map(\.description).joined(separator: ", ")) };"
                out += "\tset \(name) { type \(type);\(elements) }\n"
            }
        }
        out += "\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n"
        for (index, rule) in rules.enumerated() {
            let owner = rule.users.map { "meta skuid { \($0.map(String.init).joined(separator: ", ")) } " } ?? ""
            let (v4, v6) = sets(index)
            for (match, set) in [("ip daddr", v4), ("ip6 daddr", v6)] {
                out += "\t\t\(owner)\(match) @\(set) meta l4proto tcp reject with tcp reset\n"
                out += "\t\t\(owner)\(match) @\(set) reject with icmpx type admin-prohibited\n"
            }
        }
        return out + windowLines(windows) + "\t}\n}\n"
    }

    /// The change from a table that holds `old` to one that holds `new`, element by element,
    /// when the two have the same rules' owners in the same order and the same windows ("":
    /// nothing to do); nil when the table must be written whole (`script`): a rule's owners
    /// changed, one came or went, the windows changed, or there is no table on either side.
    public static func delta(from old: (rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule]),
                             to new: (rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule])) -> String? {
        let (before, after) = (kept(old.rules), kept(new.rules))
        guard !after.isEmpty || !new.windows.isEmpty, !before.isEmpty || !old.windows.isEmpty,
              old.windows == new.windows, before.map(\.users) == after.map(\.users) else { return nil }
        var out = ""
        for (index, (was, now)) in zip(before, after).enumerated() {
            let (v4, v6) = sets(index)
            let (had, has) = (Set(was.addresses), Set(now.addresses))
            for (verb, list) in [("delete", had.subtracting(has)), ("add", has.subtracting(had))] {
                for (set, isV4) in [(v4, true), (v6, false)] {
                    let part = list.filter { $0.isIPv4 == isV4 }.sorted()
                    guard !part.isEmpty else { continue }
                    out += "\(verb) element \(family) \(table) \(set) { \(part.map(\.description).joined(separator: ", ")) }\n"
                }
            }
        }
        return out
    }

    /// Removes the table; harmless when it does not exist.
    public static var removal: String { script(rejecting: []) }

    /// What the table holds since the last change that succeeded, and how the next change is
    /// made: element by element where it can be, else whole; a change that fails element by
    /// element (the table was changed behind blockd's back) is made whole at once. `run` carries
    /// out one script and says why it failed (nil: done).
    public struct Changes: Sendable {
        public typealias State = (rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule])
        /// Nil: not known (nothing written yet, or the last change failed).
        public private(set) var holds: State?

        public init() {}

        public mutating func apply(_ new: State, run: (String) -> String?) -> String? {
            if let holds, let delta = NftScript.delta(from: holds, to: new), delta.isEmpty || run(delta) == nil {
                self.holds = new
                return nil
            }
            let problem = run(NftScript.script(rules: new.rules, windows: new.windows))
            holds = problem == nil ? new : nil
            return problem
        }
    }
}
