import BlockCore
import BlockDaemon
import Testing

@Suite("blockd's command line (§7)")
struct BlockdArgumentsTests {
    @Test("blockd flags", arguments: [
        ([], BlockdOptions()),
        (["--config-dir", "/tmp/c", "--state-dir=/tmp/s", "--socket", "/tmp/x.sock", "--hosts-file", "/tmp/hosts", "--log-target", "console"], {
            var o = BlockdOptions()
            o.configDir = "/tmp/c"; o.configDirGiven = true; o.stateDir = "/tmp/s"; o.socketPath = "/tmp/x.sock"; o.hostsFile = "/tmp/hosts"; o.logTarget = .console
            return o
        }()),
        (["--check-config"], { var o = BlockdOptions(); o.mode = .checkConfig; return o }()),
        (["-n"], { var o = BlockdOptions(); o.mode = .checkConfig; return o }()),
        (["--check-config", "/tmp/new.conf"], { var o = BlockdOptions(); o.mode = .checkConfig; o.checkPath = "/tmp/new.conf"; return o }()),
        (["--release"], { var o = BlockdOptions(); o.mode = .release; return o }()),
        (["--force-members", "--release"], { var o = BlockdOptions(); o.mode = .release; o.forceMembers = true; return o }()),
        (["--cat-config"], { var o = BlockdOptions(); o.mode = .catConfig; return o }()),
        (["--version"], { var o = BlockdOptions(); o.mode = .version; return o }()),
        (["--socket", "/x", "--help"], { var o = BlockdOptions(); o.mode = .help; return o }()),
    ])
    func blockd(args: [String], expected: BlockdOptions) throws {
        #expect(try BlockdOptions.parse(args) == expected)
    }

    @Test("blockd usage errors name the problem and point at --help", arguments: [
        ["--bogus"], ["extra"], ["--socket"], ["--log-target", "syslog"], ["--version=1"], ["--release", "--check-config"], ["--state-dir="],
        ["--check-config", "a", "b"], ["a", "--check-config"], ["--force-members"], ["--check-config", "--force-members"],
        ["--release", "--force-members=yes"],
    ])
    func blockdErrors(args: [String]) {
        do {
            _ = try BlockdOptions.parse(args)
            Issue.record("accepted \(args)")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message.contains("blockd --help"))
        }
    }

    @Test("E5, E7: the felt-enforcement and browser-policy flags")
    func enforcementFlags() throws {
        let o = try BlockdOptions.parse(["--firewall", "no", "--cut-sockets=yes", "--resolv-conf", "/x/resolv.conf"])
        #expect(o.firewall == false && o.cutSockets == true && o.resolvConf == "/x/resolv.conf")
        #expect(throws: CoreError.self) { try BlockdOptions.parse(["--firewall", "sometimes"]) }
        let options = try BlockdOptions.parse(["--browser-policies", "yes", "--policy-root", "/tmp/r", "--firefox-policies=/tmp/p.json"])
        #expect(options.browserPolicies == true && options.policyRoot == "/tmp/r" && options.firefoxPolicies == "/tmp/p.json")
        #expect(try BlockdOptions.parse(["--merge-firefox-policies"]).mode == .mergeFirefoxPolicies)
        for bad in [["--browser-policies", "maybe"], ["--policy-root", "rel"], ["--release", "--merge-firefox-policies"]] {
            #expect(throws: CoreError.self) { try BlockdOptions.parse(bad) }
        }
    }
}
