/// W2's network part, as pure state: while an allow-only window is active, its users' other
/// outbound connections are refused by E5's table `inet blockd`, except DNS to the machine's
/// nameservers (port 53 of those addresses only: a VPN or proxy on port 53 elsewhere is
/// refused like any other address), the machine's own addresses and the addresses blockd
/// learned for the window's allowed hosts.
///
/// Each window is one rule: packets from its scope (login users, `AllowOnly.loginUsers`, for
/// a window for everyone; else its uids, never root) to an address it does not allow are
/// rejected. Windows reject on their own, so a user in two windows reaches only what both
/// allow; a window that learned nothing yet rejects everything (fail closed). The rules come
/// after E5's block rejects, so a blocked address stays refused inside a window.
///
/// Learned addresses accumulate while a window allowing the host lasts (a connection opened to
/// an earlier answer keeps working) and go with the last window allowing it. Nothing here reads
/// a clock or does I/O: the daemon looks the names up (`names`) and reports the answers.
public struct AllowOnlyNet: Equatable, Sendable {
    /// One active allow-only selection, as the firewall sees it.
    public struct Window: Equatable, Sendable {
        public var name: String
        /// Whose packets it holds: nil, login users; else these uids (sorted, root left out).
        public var users: [UInt32]?
        /// Its allowed hosts (`Selection.allowedHosts`), sorted.
        public var hosts: [String]
        public init(name: String, users: [UInt32]?, hosts: [String]) {
            self.name = name
            self.users = users
            self.hosts = hosts
        }

        /// The names blockd looks up for it: each allowed host and its `www.`/`m.` forms (W1).
        public var names: [String] { hosts.flatMap(Site.hostsNames) }
    }

    /// One window's reject, as `NftScript` renders it: packets from `users` (nil: login users)
    /// to any address but `allowed` are refused, except DNS (TCP and UDP port 53) to
    /// `nameservers`. `hosts` counts the allowed hosts, for status.
    public struct Rule: Equatable, Sendable {
        public var users: [UInt32]?
        public var allowed: [IPAddress]
        public var hosts: Int
        /// The machine's nameservers (sorted), the only addresses its users reach on port 53.
        public var nameservers: [IPAddress]
        public init(users: [UInt32]?, allowed: [IPAddress], hosts: Int, nameservers: [IPAddress] = []) {
            self.users = users
            self.allowed = allowed
            self.hosts = hosts
            self.nameservers = nameservers
        }
    }

    public private(set) var windows: [Window] = []
    /// What DNS answered for each name a window looks up, kept while a window does.
    public private(set) var learned: [String: Set<IPAddress>] = [:]
    /// The nameservers the machine asks (resolv.conf's, and the servers systemd-resolved's
    /// stub forwards to): DNS to them passes a window; port 53 of any other address does not.
    /// A stub on the machine's own address passes as the machine's own does.
    public var nameservers: [IPAddress] = [] {
        didSet { nameservers = Array(Set(nameservers)).sorted() }
    }

    public init() {}

    /// The windows among the blocked selections: each allow-only one whose scope holds someone
    /// but root, in the given order.
    public static func windows(_ blocked: [Selection]) -> [Window] {
        blocked.compactMap { selection in
            guard selection.isAllowOnly else { return nil }
            let users = selection.users.map { Array(Set($0).subtracting([0])).sorted() }
            guard users?.isEmpty != true else { return nil }
            return Window(name: selection.name, users: users, hosts: selection.allowedHosts.sorted())
        }
    }

    /// Every name the windows look up, sorted, each once: what a refresh asks again.
    public var names: [String] { Set(windows.flatMap(\.names)).sorted() }

    /// The windows now. Returns the names newly looked up (to ask DNS at once); the addresses
    /// of names no window looks up any more are forgotten.
    public mutating func update(windows now: [Window]) -> [String] {
        let before = Set(names)
        windows = now
        let wanted = Set(names)
        learned = learned.filter { wanted.contains($0.key) }
        return wanted.subtracting(before).sorted()
    }

    /// DNS answered `addresses` for `name`: they join what the windows allow. Whether the rules
    /// changed (false for a name no window looks up, or nothing new).
    public mutating func learned(_ addresses: [IPAddress], for name: String) -> Bool {
        guard windows.contains(where: { $0.names.contains(name) }) else { return false }
        let usable = Set(addresses).subtracting(CutPlan.neverCut)
        let before = learned[name] ?? []
        guard !usable.isSubset(of: before) else { return false }
        learned[name] = before.union(usable)
        return true
    }

    /// One rule per window, in the windows' order, each allowing what its names taught.
    public var rules: [Rule] {
        windows.map { w in
            let allowed = w.names.reduce(into: Set<IPAddress>()) { $0.formUnion(learned[$1] ?? []) }
            return Rule(users: w.users, allowed: allowed.sorted(), hosts: w.hosts.count, nameservers: nameservers)
        }
    }
}

extension NftScript {
    /// The lines that follow the block rejects while windows are active: the machine's own
    /// addresses pass for everyone; then, for each window's scope, DNS to the machine's
    /// nameservers passes (port 53 of those addresses only, never of any other) and every
    /// address it does not allow is rejected (TCP with a reset, the rest with
    /// admin-prohibited, as the block rejects); a family with nothing allowed is rejected
    /// whole. Empty without windows.
    static func windowLines(_ windows: [AllowOnlyNet.Rule]) -> String {
        guard !windows.isEmpty else { return "" }
        var out = "\t\tfib daddr type local accept\n"
        let login = "\(AllowOnly.loginUsers.lowerBound)-\(AllowOnly.loginUsers.upperBound)"
        for rule in windows {
            let owner = "meta skuid " + (rule.users.map { "{ \($0.map(String.init).joined(separator: ", ")) }" } ?? login)
            let v4 = rule.allowed.filter(\.isIPv4).map(\.description)
            let v6 = rule.allowed.filter { !$0.isIPv4 }.map(\.description)
            for (match, servers) in [("ip daddr", rule.nameservers.filter(\.isIPv4)), ("ip6 daddr", rule.nameservers.filter { !$0.isIPv4 })] where !servers.isEmpty {
                out += "\t\t\(owner) \(match) { \(servers.map(\.description).joined(separator: ", ")) } meta l4proto { tcp, udp } th dport 53 accept\n"
            }
            for (family, match, list) in [("ipv4", "ip daddr", v4), ("ipv6", "ip6 daddr", v6)] {
                let to = list.isEmpty ? "meta nfproto \(family)" : "\(match) != { \(list.joined(separator: ", ")) }"
                out += "\t\t\(owner) \(to) meta l4proto tcp reject with tcp reset\n"
                out += "\t\t\(owner) \(to) reject with icmpx type admin-prohibited\n"
            }
        }
        return out
    }
}
