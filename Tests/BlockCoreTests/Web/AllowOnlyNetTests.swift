import Testing
@testable import BlockCore

/// W2's network part: which windows the firewall holds, what each allows, and the table text.
@Suite("W2 connections: an allow-only window refuses its users' connections to all but the allowed sites' addresses")
struct AllowOnlyNetTests {
    static func ip(_ s: String) -> IPAddress { IPAddress(s)! }

    static func window(_ allowed: [String], users: [UInt32]? = nil) -> Selection {
        var s = Selection(name: AllowOnly.name(allowing: allowed))
        s.allowed = allowed.map { Selection(name: $0, domains: [$0]) }
        s.users = users
        return s
    }

    /// Answers blockd's DNS would give: name → addresses.
    static let dns: [String: [String]] = [
        "school.test": ["192.0.2.10", "2001:db8::10"], "www.school.test": ["192.0.2.11"],
        "editor.test": ["192.0.2.20"], "m.editor.test": ["198.51.100.20"],
    ]

    struct Case: Sendable, CustomTestStringConvertible {
        var rule: String
        var blocked: [Selection]
        var rules: [AllowOnlyNet.Rule]
        var testDescription: String { rule }
    }

    static let cases: [Case] = [
        Case(rule: "W2: a window for everyone holds for login users and allows its hosts' learned addresses, www. and m. forms too",
             blocked: [window(["school.test"])],
             rules: [.init(users: nil, allowed: [ip("192.0.2.10"), ip("192.0.2.11"), ip("2001:db8::10")], hosts: 1)]),
        Case(rule: "W2: a per-user window holds for its uids only, never root",
             blocked: [window(["editor.test"], users: [1002, 0, 1001])],
             rules: [.init(users: [1001, 1002], allowed: [ip("192.0.2.20"), ip("198.51.100.20")], hosts: 1)]),
        Case(rule: "W2: two windows are two rules, each rejecting on its own, so a user in both reaches what both allow",
             blocked: [window(["school.test", "editor.test"]), window(["school.test"], users: [1001])],
             rules: [.init(users: nil, allowed: ["192.0.2.10", "192.0.2.11", "192.0.2.20", "198.51.100.20", "2001:db8::10"].map(ip), hosts: 2),
                     .init(users: [1001], allowed: [ip("192.0.2.10"), ip("192.0.2.11"), ip("2001:db8::10")], hosts: 1)]),
        Case(rule: "W2: a window whose hosts DNS does not know allows nothing (fail closed)",
             blocked: [window(["unknown.test"])],
             rules: [.init(users: nil, allowed: [], hosts: 1)]),
        Case(rule: "W2: ordinary blocks, a window for root alone or for nobody make no window rule",
             blocked: [Selection(name: "social", domains: ["social.test"]), window(["school.test"], users: [0]), window(["editor.test"], users: [])],
             rules: []),
    ]

    @Test("W2: the rules for each kind of window", arguments: cases)
    func rules(_ c: Case) {
        var net = AllowOnlyNet()
        let newly = net.update(windows: AllowOnlyNet.windows(c.blocked))
        #expect(newly == net.names, "everything is looked up when the windows start")
        for name in newly { _ = net.learned((Self.dns[name] ?? []).map(Self.ip), for: name) }
        #expect(net.rules == c.rules)
    }

    @Test("W2: learned addresses accumulate while a window lasts and go with the last window allowing the host")
    func accumulate() {
        var net = AllowOnlyNet()
        let a = Self.window(["school.test"]), b = Self.window(["school.test", "editor.test"], users: [1001])
        let first = net.update(windows: AllowOnlyNet.windows([a]))
        #expect(first == ["m.school.test", "school.test", "www.school.test"])
        let changes = [net.learned([Self.ip("192.0.2.10")], for: "school.test"),
                       net.learned([Self.ip("192.0.2.12")], for: "school.test"),
                       net.learned([Self.ip("192.0.2.12")], for: "school.test"),
                       net.learned([Self.ip("192.0.2.99")], for: "other.test"),
                       net.learned([Self.ip("127.0.0.1"), Self.ip("0.0.0.0")], for: "school.test")]
        #expect(changes == [true, true, false, false, false],
                "a new answer (a refresh) adds to the old; nothing new, a name no window looks up, loopback and 0.0.0.0 change nothing")
        #expect(net.rules.map(\.allowed) == [[Self.ip("192.0.2.10"), Self.ip("192.0.2.12")]])
        let more = net.update(windows: AllowOnlyNet.windows([a, b]))
        #expect(more == ["editor.test", "m.editor.test", "www.editor.test"], "only the names not looked up yet")
        #expect(net.rules.last?.allowed == [Self.ip("192.0.2.10"), Self.ip("192.0.2.12")], "the second window knows school.test at once")
        let fewer = net.update(windows: AllowOnlyNet.windows([b]))
        #expect(fewer.isEmpty)
        #expect(net.learned["school.test"] != nil, "a window still allows school.test")
        let none = net.update(windows: [])
        #expect(none.isEmpty && net.learned.isEmpty && net.rules.isEmpty, "no window: nothing kept")
        _ = net.update(windows: AllowOnlyNet.windows([a]))
        #expect(net.rules.map(\.allowed) == [[]], "a window again starts from what DNS answers now")
    }

    @Test("W2: the script: block rejects first, then local addresses pass, then for each window DNS to the nameservers passes and the rest is rejected")
    func script() {
        let dns = [Self.ip("192.0.2.53"), Self.ip("2001:db8::53")]
        let text = NftScript.script(rules: [CutPlan.Rule(addresses: [Self.ip("192.0.2.11")])],
                                    windows: [.init(users: nil, allowed: [Self.ip("192.0.2.10"), Self.ip("192.0.2.11"), Self.ip("2001:db8::10")], hosts: 1, nameservers: dns),
                                              .init(users: [1001, 1002], allowed: [], hosts: 2, nameservers: [Self.ip("192.0.2.53")])])
        // The table's frame is E5's (CutPlanTests); here, its rules in order.
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("\t\t") && !$0.contains(" hook output ") }.map { String($0.dropFirst(2)) }
        #expect(text.hasPrefix(NftScript.removal + "table inet blockd {\n") && text.hasSuffix("\t}\n}\n"))
        #expect(lines == [
            "ip daddr @r0v4 meta l4proto tcp reject with tcp reset",
            "ip daddr @r0v4 reject with icmpx type admin-prohibited",
            "ip6 daddr @r0v6 meta l4proto tcp reject with tcp reset",
            "ip6 daddr @r0v6 reject with icmpx type admin-prohibited",
            "fib daddr type local accept",
            "meta skuid 1000-60000 ip daddr { 192.0.2.53 } meta l4proto { tcp, udp } th dport 53 accept",
            "meta skuid 1000-60000 ip6 daddr { 2001:db8::53 } meta l4proto { tcp, udp } th dport 53 accept",
            "meta skuid 1000-60000 ip daddr != { 192.0.2.10, 192.0.2.11 } meta l4proto tcp reject with tcp reset",
            "meta skuid 1000-60000 ip daddr != { 192.0.2.10, 192.0.2.11 } reject with icmpx type admin-prohibited",
            "meta skuid 1000-60000 ip6 daddr != { 2001:db8::10 } meta l4proto tcp reject with tcp reset",
            "meta skuid 1000-60000 ip6 daddr != { 2001:db8::10 } reject with icmpx type admin-prohibited",
            "meta skuid { 1001, 1002 } ip daddr { 192.0.2.53 } meta l4proto { tcp, udp } th dport 53 accept",
            "meta skuid { 1001, 1002 } meta nfproto ipv4 meta l4proto tcp reject with tcp reset",
            "meta skuid { 1001, 1002 } meta nfproto ipv4 reject with icmpx type admin-prohibited",
            "meta skuid { 1001, 1002 } meta nfproto ipv6 meta l4proto tcp reject with tcp reset",
            "meta skuid { 1001, 1002 } meta nfproto ipv6 reject with icmpx type admin-prohibited",
        ], "a blocked address inside a window stays refused: its reject comes before any accept")
        let alone = NftScript.script(rules: [], windows: [.init(users: [1001], allowed: [], hosts: 1)])
        #expect(alone.contains("table inet blockd {") && alone.contains("meta skuid { 1001 } meta nfproto ipv4 reject"),
                "a window alone keeps the table")
        #expect(NftScript.script(rules: [], windows: []) == NftScript.removal, "no block and no window: the table removed")
        #expect(!NftScript.script(rules: [CutPlan.Rule(addresses: [Self.ip("192.0.2.11")])]).contains("dport 53"),
                "without a window the table is E5's alone")
    }

    @Test("W2: port 53 is no door: no rule accepts port 53 but to the nameservers, and with none known DNS passes only to the machine's own addresses (it used to accept port 53 of any address)")
    func portFiftyThreeOnlyToNameservers() {
        var net = AllowOnlyNet()
        _ = net.update(windows: [AllowOnlyNet.Window(name: "only:school.example", users: [1001], hosts: ["school.example"])])
        net.nameservers = [Self.ip("192.0.2.53"), Self.ip("192.0.2.53"), Self.ip("2001:db8::53")]
        #expect(net.rules.map(\.nameservers) == [[Self.ip("192.0.2.53"), Self.ip("2001:db8::53")]], "each rule carries the nameservers, once each")
        let text = NftScript.script(rules: [], windows: net.rules)
        let accepts = text.split(separator: "\n").filter { $0.contains("dport 53") }
        #expect(accepts.count == 2 && accepts.allSatisfy { $0.contains("meta skuid { 1001 } ip") && $0.contains("daddr { ") },
                "port 53 passes only with a nameserver's address: \(accepts)")
        #expect(!text.contains("dport 853"), "DoT (853) is refused like any other port")
        net.nameservers = []
        #expect(!NftScript.script(rules: [], windows: net.rules).contains("dport 53"), "no nameserver known: no port 53 accept at all")
        #expect(NftScript.script(rules: [], windows: net.rules).contains("fib daddr type local accept"), "a local stub (127.0.0.53) still passes")
    }
}
