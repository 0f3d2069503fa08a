/// E5 "felt at once", as pure state: which addresses are known for each blocked domain, which
/// of them the nftables table rejects and until when. Times are seconds on the daemon's
/// monotonic clock, passed in (BlockCore never reads a clock).
///
/// A domain that becomes blocked has its known addresses cut at once and rejected for the
/// grace period (`ConnectGrace=`), longer than browsers keep addresses cached; a selection
/// with `Firewall=yes` keeps them rejected for the whole block. Addresses learned later from
/// DNS join the same entry. An unblocked domain's entry goes at once.
public struct CutPlan: Equatable, Sendable {
    public struct Entry: Equatable, Sendable {
        public var addresses: Set<IPAddress>
        /// nil: for as long as the domain is blocked (`Firewall=yes`).
        public var until: Double?
    }

    /// What blockd learned about each domain's addresses, kept across blocks (a domain blocked
    /// again is cut at once, before DNS answers).
    public private(set) var known: [String: Set<IPAddress>] = [:]
    /// Domains blocked now → whether their selection holds the reject for the whole block.
    public private(set) var blocked: [String: Bool] = [:]
    /// The reject entries, per domain.
    public private(set) var entries: [String: Entry] = [:]
    public var grace: Double

    public init(grace: Double) { self.grace = grace }

    /// Addresses never rejected nor cut: the sinks and what a resolver reading the hosts file
    /// (systemd-resolved) might answer, and the machine's own loopback services.
    public static let neverCut: Set<IPAddress> = Set(["0.0.0.0", "::", "127.0.0.1", "::1", "127.0.0.53", "127.0.0.54"]
        .compactMap(IPAddress.init) + HostsFile.Sink.reject.addresses)

    /// The new desired set of blocked domains (domain → `Firewall=yes`). Returns the domains
    /// that just became blocked, to look up, and the known addresses to cut now.
    public mutating func update(blocked now: [String: Bool], at time: Double) -> (newly: [String], cut: [IPAddress]) {
        let newly = now.keys.filter { blocked[$0] == nil }.sorted()
        for domain in entries.keys where now[domain] == nil { entries[domain] = nil }
        for (domain, whole) in now {
            if newly.contains(domain) {
                entries[domain] = Entry(addresses: known[domain] ?? [], until: whole ? nil : time + grace)
            } else if var e = entries[domain] {
                // Firewall= switched by a reload: follow it for what is left of the block.
                e.until = whole ? nil : (e.until ?? time + grace)
                entries[domain] = e
            } else if whole {
                entries[domain] = Entry(addresses: known[domain] ?? [], until: nil)
            }
        }
        blocked = now
        var cut = Set<IPAddress>()
        for d in newly { cut.formUnion(known[d] ?? []) }
        return (newly, cut.sorted())
    }

    /// DNS answered `addresses` for `domain`: remembers them and returns the ones not cut yet
    /// for this block (to cut now). Nothing is cut for a domain no longer blocked.
    public mutating func learned(_ addresses: [IPAddress], for domain: String) -> [IPAddress] {
        let usable = Set(addresses).subtracting(CutPlan.neverCut)
        guard !usable.isEmpty else { return [] }
        let before = known[domain] ?? []
        known[domain] = before.union(usable)
        guard blocked[domain] != nil else { return [] }
        if var e = entries[domain] {
            e.addresses.formUnion(usable)
            entries[domain] = e
        }
        return usable.subtracting(before).sorted()
    }

    /// Drops entries whose grace ended by `time`; whether anything changed.
    public mutating func expire(at time: Double) -> Bool {
        let ended = entries.filter { $0.value.until.map { $0 <= time } ?? false }.keys
        for d in ended { entries[d] = nil }
        return !ended.isEmpty
    }

    /// The earliest end of a grace period, for the one timer.
    public var nextExpiry: Double? { entries.values.compactMap(\.until).min() }

    /// Addresses the table rejects now (without the sink): sorted, IPv4 first.
    public var rejected: [IPAddress] {
        entries.values.reduce(into: Set<IPAddress>()) { $0.formUnion($1.addresses) }.subtracting(CutPlan.neverCut).sorted()
    }

    /// The latest end of a grace period now in force (nil when none or all are for the whole block).
    public var until: Double? { entries.values.compactMap(\.until).max() }
}

/// The nftables script for blockd's own table (E5), applied atomically in one
/// `nft_run_cmd_from_buffer` transaction. nft 1.0.6 has no `destroy`, so `add table` (a no-op
/// when it exists) followed by `delete table` makes a re-apply idempotent.
public enum NftScript {
    public static let family = "inet"
    public static let table = "blockd"

    /// The whole table: an output-hook chain that rejects every new connection to
    /// `addresses` (TCP with a reset, everything else with ICMP administratively prohibited),
    /// so a connect fails at once instead of timing out. Nil addresses: the table removed.
    public static func script(rejecting addresses: [IPAddress]) -> String {
        var out = "add table \(family) \(table)\ndelete table \(family) \(table)\n"
        guard !addresses.isEmpty else { return out }
        let v4 = addresses.filter(\.isIPv4).map(\.description)
        let v6 = addresses.filter { !$0.isIPv4 }.map(\.description)
        out += "table \(family) \(table) {\n\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n"
        for (match, list) in [("ip daddr", v4), ("ip6 daddr", v6)] where !list.isEmpty {
            let set = "{ \(list.joined(separator: ", ")) }"
            out += "\t\t\(match) \(set) meta l4proto tcp reject with tcp reset\n"
            out += "\t\t\(match) \(set) reject with icmpx type admin-prohibited\n"
        }
        return out + "\t}\n}\n"
    }

    /// Removes the table; harmless when it does not exist.
    public static var removal: String { script(rejecting: []) }
}
