import Testing
@testable import BlockCore

/// E5 for blocks scoped to some users (U3): the cut and the table's rules follow the owners
/// of the sockets, machine-wide blocks stay as they were.
@Suite("E5 per user: cuts and nftables rules for the sockets of the users in scope")
struct CutPlanUsersTests {
    static func ip(_ s: String) -> IPAddress { IPAddress(s)! }

    @Test("a per-user block cuts and refuses only its users' sockets, with meta skuid in the table")
    func perUser() {
        var plan = CutPlan(grace: 120)
        _ = plan.learned([Self.ip("10.0.0.2")], for: "social.test")  // known from an earlier block
        _ = plan.update(blocks: [:], at: 0)
        let start = plan.update(blocks: ["social.test": .init(users: [1001])], at: 10)
        #expect(start.newly == ["social.test"])
        #expect(start.cuts == [CutPlan.Cut(users: [1001], addresses: [Self.ip("10.0.0.2")])], "A's sockets only")
        let dns = plan.learnedCut([Self.ip("10.0.0.3")], for: "social.test")
        #expect(dns == CutPlan.Cut(users: [1001], addresses: [Self.ip("10.0.0.3")]), "what DNS adds is cut for A only too")
        #expect(plan.rules == [CutPlan.Rule(users: [1001], addresses: [Self.ip("10.0.0.2"), Self.ip("10.0.0.3")])])
        #expect(plan.nextExpiry == 130, "the grace is ConnectGrace=, as machine-wide")
        let text = NftScript.script(rules: plan.rules)
        #expect(text.contains("\tset r0v4 { type ipv4_addr; elements = { 10.0.0.2, 10.0.0.3 }; }\n"))
        #expect(text.contains("\t\tmeta skuid { 1001 } ip daddr @r0v4 meta l4proto tcp reject with tcp reset\n"))
        #expect(text.contains("\t\tmeta skuid { 1001 } ip daddr @r0v4 reject with icmpx type admin-prohibited\n"))
        _ = plan.expire(at: 130)
        #expect(plan.rules.isEmpty, "the grace ended")
    }

    @Test("a user added to the scope is cut and gets a fresh grace; going machine-wide cuts everyone's")
    func widening() {
        var plan = CutPlan(grace: 120)
        _ = plan.update(blocks: ["a.test": .init(users: [1001])], at: 0)
        _ = plan.learned([Self.ip("10.0.0.2")], for: "a.test")
        let same = plan.update(blocks: ["a.test": .init(users: [1001])], at: 5)
        #expect(same.cuts.isEmpty && same.newly.isEmpty, "nothing changed, nothing cut")
        let more = plan.update(blocks: ["a.test": .init(users: [1001, 1002])], at: 50)
        #expect(more.newly.isEmpty, "already looked up")
        #expect(more.cuts == [CutPlan.Cut(users: [1002], addresses: [Self.ip("10.0.0.2")])], "only the user added is cut")
        #expect(plan.rules == [CutPlan.Rule(users: [1001, 1002], addresses: [Self.ip("10.0.0.2")])])
        #expect(plan.nextExpiry == 170, "for B the block just started")
        let all = plan.update(blocks: ["a.test": .init()], at: 60)
        #expect(all.cuts == [CutPlan.Cut(users: nil, addresses: [Self.ip("10.0.0.2")])], "everyone's sockets")
        #expect(plan.rules == [CutPlan.Rule(users: nil, addresses: [Self.ip("10.0.0.2")])])
        let narrower = plan.update(blocks: ["a.test": .init(users: [1002])], at: 70)
        #expect(narrower.cuts.isEmpty, "a narrower scope cuts nothing")
        #expect(plan.rules == [CutPlan.Rule(users: [1002], addresses: [Self.ip("10.0.0.2")])], "and refuses for B only")
    }

    @Test("an address shared by blocks of different scopes is refused for the union; everyone wins")
    func shared() {
        var plan = CutPlan(grace: 120)
        let both = plan.update(blocks: ["a.test": .init(users: [1001]), "b.test": .init(whole: true, users: [1002]),
                                        "c.test": .init(), "d.test": .init(users: [1003])], at: 0)
        #expect(both.newly == ["a.test", "b.test", "c.test", "d.test"] && both.cuts.isEmpty, "nothing known yet")
        _ = plan.learned([Self.ip("10.0.0.1"), Self.ip("2001:db8::1")], for: "a.test")
        _ = plan.learned([Self.ip("10.0.0.1"), Self.ip("10.0.0.2")], for: "b.test")
        _ = plan.learned([Self.ip("10.0.0.3")], for: "c.test")
        _ = plan.learned([Self.ip("10.0.0.3"), Self.ip("10.0.0.4")], for: "d.test")
        #expect(plan.rules == [
            CutPlan.Rule(users: nil, addresses: [Self.ip("10.0.0.3")]),
            CutPlan.Rule(users: [1001], addresses: [Self.ip("2001:db8::1")]),
            CutPlan.Rule(users: [1001, 1002], addresses: [Self.ip("10.0.0.1")]),
            CutPlan.Rule(users: [1002], addresses: [Self.ip("10.0.0.2")]),
            CutPlan.Rule(users: [1003], addresses: [Self.ip("10.0.0.4")]),
        ])
        #expect(plan.rejected.count == 5)
        _ = plan.expire(at: 500)
        #expect(plan.rules == [CutPlan.Rule(users: [1002], addresses: [Self.ip("10.0.0.1"), Self.ip("10.0.0.2")])],
                "Firewall=yes of B's block holds for the whole block, for B only")
    }

    @Test("the nft script: the machine-wide rule first, unscoped, then one pair per scope and family")
    func script() {
        let text = NftScript.script(rules: [CutPlan.Rule(addresses: [Self.ip("127.0.0.253"), Self.ip("100::1")]),
                                            CutPlan.Rule(users: [1001, 1002], addresses: [Self.ip("10.0.0.2")]),
                                            CutPlan.Rule(users: [], addresses: [Self.ip("10.0.0.9")])])
        #expect(text == """
            add table inet blockd
            delete table inet blockd
            table inet blockd {
            \tset r0v4 { type ipv4_addr; elements = { 127.0.0.253 }; }
            \tset r0v6 { type ipv6_addr; elements = { 100::1 }; }
            \tset r1v4 { type ipv4_addr; elements = { 10.0.0.2 }; }
            \tset r1v6 { type ipv6_addr; }
            \tchain output {
            \t\ttype filter hook output priority filter; policy accept;
            \t\tip daddr @r0v4 meta l4proto tcp reject with tcp reset
            \t\tip daddr @r0v4 reject with icmpx type admin-prohibited
            \t\tip6 daddr @r0v6 meta l4proto tcp reject with tcp reset
            \t\tip6 daddr @r0v6 reject with icmpx type admin-prohibited
            \t\tmeta skuid { 1001, 1002 } ip daddr @r1v4 meta l4proto tcp reject with tcp reset
            \t\tmeta skuid { 1001, 1002 } ip daddr @r1v4 reject with icmpx type admin-prohibited
            \t\tmeta skuid { 1001, 1002 } ip6 daddr @r1v6 meta l4proto tcp reject with tcp reset
            \t\tmeta skuid { 1001, 1002 } ip6 daddr @r1v6 reject with icmpx type admin-prohibited
            \t}
            }

            """, "a rule with no users refuses nobody and is left out")
        #expect(NftScript.script(rules: [CutPlan.Rule(users: [], addresses: [Self.ip("10.0.0.9")])]) == NftScript.removal)
    }
}
