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
            \tchain output {
            \t\ttype filter hook output priority filter; policy accept;
            \t\tip daddr { 10.0.0.2, 127.0.0.253 } meta l4proto tcp reject with tcp reset
            \t\tip daddr { 10.0.0.2, 127.0.0.253 } reject with icmpx type admin-prohibited
            \t\tip6 daddr { 100::1 } meta l4proto tcp reject with tcp reset
            \t\tip6 daddr { 100::1 } reject with icmpx type admin-prohibited
            \t}
            }

            """)
        #expect(NftScript.removal == "add table inet blockd\ndelete table inet blockd\n")
        #expect(!NftScript.script(rejecting: [Self.ip("10.0.0.2")]).contains("ip6"), "no empty IPv6 set")
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
