import Testing
@testable import BlockCore

/// E5 "felt at once": what is cut, what the nftables table refuses and for how long.
@Suite("E5: cutting what is open and refusing new connections")
struct CutPlanTests {
    static func ip(_ s: String) -> IPAddress { IPAddress(s)! }

    @Test("a newly blocked domain is cut at once for addresses already known, rejected for the grace, then released")
    func grace() {
        var plan = CutPlan(grace: 120)
        _ = plan.update(blocked: ["social.test": false], at: 0)
        let first = plan.learned([Self.ip("10.0.0.2")], for: "social.test")
        let second = plan.learned([Self.ip("10.0.0.2")], for: "social.test")
        #expect(first == [Self.ip("10.0.0.2")], "first answer is cut")
        #expect(second.isEmpty, "not cut twice")
        #expect(plan.rejected == [Self.ip("10.0.0.2")])
        #expect(plan.nextExpiry == 120)
        let early = plan.expire(at: 119.9), due = plan.expire(at: 120)
        #expect(!early && due)
        #expect(plan.rejected.isEmpty, "the grace ended")
        _ = plan.update(blocked: [:], at: 130)
        let again = plan.update(blocked: ["social.test": false], at: 200)
        #expect(again.newly == ["social.test"])
        #expect(again.cut == [Self.ip("10.0.0.2")], "known addresses are cut before DNS answers")
        #expect(plan.rejected == [Self.ip("10.0.0.2")])
        #expect(plan.until == 320)
    }

    @Test("Firewall=yes keeps the reject for the whole block; the unlock removes it at once")
    func wholeBlock() {
        var plan = CutPlan(grace: 120)
        _ = plan.update(blocked: ["a.test": true, "b.test": false], at: 0)
        _ = plan.learned([Self.ip("10.0.0.1"), Self.ip("2001:db8::1")], for: "a.test")
        _ = plan.learned([Self.ip("10.0.0.9")], for: "b.test")
        let expired = plan.expire(at: 500)
        #expect(expired)
        #expect(plan.rejected == [Self.ip("10.0.0.1"), Self.ip("2001:db8::1")])
        #expect(plan.nextExpiry == nil)
        let still = plan.update(blocked: ["a.test": true], at: 501)
        #expect(still.newly.isEmpty && still.cut.isEmpty, "nothing newly blocked")
        _ = plan.update(blocked: [:], at: 600)
        #expect(plan.rejected.isEmpty, "unlocked: nothing refused")
        let late = plan.learned([Self.ip("10.0.0.3")], for: "a.test")
        #expect(late.isEmpty, "a late answer after the unlock cuts nothing")
    }

    @Test("the sinks, loopback services and unspecified addresses are never cut or refused")
    func neverCut() {
        var plan = CutPlan(grace: 120)
        _ = plan.update(blocked: ["x.test": false], at: 0)
        let answer = ["0.0.0.0", "::", "127.0.0.1", "::1", "127.0.0.53", "127.0.0.253", "100::1", "127.0.0.2"].map(Self.ip)
        let cut = plan.learned(answer, for: "x.test")
        #expect(cut == [Self.ip("127.0.0.2")])
        #expect(plan.rejected == [Self.ip("127.0.0.2")])
    }

    @Test("the nft script replaces the whole table atomically and refuses with reset / admin-prohibited")
    func script() {
        let text = NftScript.script(rejecting: [Self.ip("10.0.0.2"), Self.ip("127.0.0.253"), Self.ip("100::1")])
        #expect(text == """
            add table inet blockd
            delete table inet blockd
            table inet blockd {
            \tset r0v4 { type ipv4_addr; elements = { 10.0.0.2, 127.0.0.253 }; }
            \tset r0v6 { type ipv6_addr; elements = { 100::1 }; }
            \tchain output {
            \t\ttype filter hook output priority filter; policy accept;
            \t\tip daddr @r0v4 meta l4proto tcp reject with tcp reset
            \t\tip daddr @r0v4 reject with icmpx type admin-prohibited
            \t\tip6 daddr @r0v6 meta l4proto tcp reject with tcp reset
            \t\tip6 daddr @r0v6 reject with icmpx type admin-prohibited
            \t}
            }

            """)
        #expect(NftScript.removal == "add table inet blockd\ndelete table inet blockd\n")
        #expect(NftScript.script(rejecting: [Self.ip("10.0.0.2")]).contains("\tset r0v6 { type ipv6_addr; }\n"),
                "an empty IPv6 set is kept, for an address that comes later")
    }

    @Test("T5, E5: with the same rules' owners and windows, a change of addresses is made element by element; otherwise the table is written whole")
    func delta() {
        let a = Self.ip("10.0.0.2"), b = Self.ip("10.0.0.3"), c = Self.ip("100::1"), d = Self.ip("10.0.0.9")
        let window = AllowOnlyNet.Rule(users: [1001], allowed: [a], hosts: 1)
        let old = (rules: [CutPlan.Rule(addresses: [a, c]), CutPlan.Rule(users: [1001], addresses: [b])], windows: [window])
        let new = (rules: [CutPlan.Rule(addresses: [a, d]), CutPlan.Rule(users: [1001], addresses: [b, c])], windows: [window])
        #expect(NftScript.delta(from: old, to: new) == """
            delete element inet blockd r0v6 { 100::1 }
            add element inet blockd r0v4 { 10.0.0.9 }
            add element inet blockd r1v6 { 100::1 }

            """, "rule by rule, its deletions then its additions")
        #expect(NftScript.delta(from: old, to: old) == "", "nothing changed: nothing to do")
        #expect(NftScript.delta(from: old, to: (new.rules, [])) == nil, "the windows changed")
        #expect(NftScript.delta(from: old, to: ([CutPlan.Rule(addresses: [a]), CutPlan.Rule(users: [1002], addresses: [b])], [window])) == nil,
                "a rule's owners changed")
        #expect(NftScript.delta(from: old, to: ([CutPlan.Rule(addresses: [a])], [window])) == nil, "a rule went")
        #expect(NftScript.delta(from: ([], []), to: new) == nil, "no table yet")
        #expect(NftScript.delta(from: old, to: ([], [])) == nil, "the table goes")
        #expect(NftScript.delta(from: ([CutPlan.Rule(addresses: [a])], []), to: ([CutPlan.Rule(addresses: [a]), CutPlan.Rule(users: [], addresses: [d])], [])) == "",
                "a rule that refuses nobody is not in the table either way")
    }

    @Test("T5, E5: a change made element by element that fails is made whole at once; a whole one that fails leaves the next one whole")
    func changesFallBack() {
        let a = Self.ip("10.0.0.2"), b = Self.ip("10.0.0.3")
        var changes = NftScript.Changes()
        var ran: [String] = []
        var failing: (String) -> Bool = { _ in false }
        let run = { (script: String) -> String? in
            ran.append(script.hasPrefix("add table") ? "whole" : "elements")
            return failing(script) ? "No such file or directory" : nil
        }
        #expect(changes.apply(([CutPlan.Rule(addresses: [a])], []), run: run) == nil)
        #expect(changes.apply(([CutPlan.Rule(addresses: [a, b])], []), run: run) == nil)
        #expect(ran == ["whole", "elements"], "the first change whole, the next element by element")
        #expect(changes.apply(([CutPlan.Rule(addresses: [a, b])], []), run: run) == nil)
        #expect(ran.count == 2, "nothing changed: nothing run")
        // Someone deleted the table: the elements cannot be added; the table is written whole.
        failing = { !$0.hasPrefix("add table") }
        #expect(changes.apply(([CutPlan.Rule(addresses: [b])], []), run: run) == nil)
        #expect(ran.suffix(2) == ["elements", "whole"])
        #expect(changes.holds?.rules == [CutPlan.Rule(addresses: [b])])
        // A whole change that fails is reported, and the next one is whole again.
        failing = { _ in true }
        #expect(changes.apply(([CutPlan.Rule(addresses: [a])], []), run: run) == "No such file or directory")
        #expect(changes.holds == nil)
        failing = { _ in false }
        #expect(changes.apply(([CutPlan.Rule(addresses: [a, b])], []), run: run) == nil)
        #expect(ran.last == "whole", "after a failure the table is not trusted: written whole")
    }

    @Test("the hosts section points at the sink, and a section with either sink is recognised")
    func sink() throws {
        let section = try #require(HostsFile.section(for: ["social.test"], sink: .reject))
        #expect(String(decoding: section, as: UTF8.self).contains("\n127.0.0.253 social.test\n100::1 social.test\n"))
        let file = Array("127.0.0.1 localhost\n".utf8)
        let withReject = HostsFile.splice(file, section: section)
        #expect(HostsFile.blockedDomains(in: withReject) == ["social.test"])
        let switched = HostsFile.splice(withReject, section: HostsFile.section(for: ["social.test"]))
        #expect(String(decoding: switched, as: UTF8.self).split(separator: "\n").filter { $0.hasSuffix(" social.test") }.count == 2, "replaced, not doubled")
        #expect(HostsFile.splice(withReject, section: nil) == file)
    }

    @Test("ConnectGrace=, Firewall=, CutSockets=, ResolvConf= and their flags layer like HostsFile=")
    func config() throws {
        let file = try DaemonConfig.parse(file: "b.conf", text: "[Daemon]\nConnectGrace=3s\nFirewall=no\nCutSockets=off\nResolvConf=/tmp/r.conf\n")
        #expect(file.felt == DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: false, cutSockets: false, resolvConf: "/tmp/r.conf"))
        #expect(DaemonConfig.defaults.felt == DaemonConfig.FeltSettings(connectGraceSeconds: 120, firewall: true, cutSockets: true, resolvConf: "/etc/resolv.conf"))
        #expect(throws: CoreError.self) { try DaemonConfig.parse(file: "b.conf", text: "[Daemon]\nFirewall=maybe\n") }
        #expect(throws: CoreError.self) { try DaemonConfig.parse(file: "b.conf", text: "[Daemon]\nConnectGrace=2d\n") }
        let flags = DaemonConfig.Layer(firewall: true)
        #expect(file.applying(flags).felt.firewall == true && file.applying(flags).felt.connectGraceSeconds == 3)
        let selection = try ConfigFiles.parseSelection(file: "s.conf", text: "[Selection]\nName=social\nDomains=social.test\nFirewall=yes\n")
        #expect(selection.firewall == true)
    }
}
