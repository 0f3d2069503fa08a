import BlockCore
import BlockTestSupport
import Foundation
import Synchronization
import Testing
@testable import BlockDaemon
import BlockTestTools

/// E5 per user (U3) through the enforcer itself, with a recording cutter and a fixed lookup:
/// whose sockets `enforce` asks to destroy for which blocks.
@Suite("E5 per user: the cut enforcer asks for the sockets of the users in scope only")
struct FeltUsersTests {
    final class Cuts: @unchecked Sendable {
        let calls = Mutex<[([IPAddress], Set<UInt32>?)]>([])
    }

    static func enforcer(_ cuts: Cuts) -> FeltEnforcer {
        let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: false, cutSockets: true, resolvConf: "/nonexistent")
        return FeltEnforcer(settings: settings, log: MemorySink(),
                            lookup: { DNSClient.Lookup(addresses: [IPAddress($0 == "www.social.test" ? "10.0.0.2" : "10.0.0.3")!]) },
                            cutter: { addresses, owners in
                                cuts.calls.withLock { $0.append((addresses, owners)) }
                                return SocketCutter.Result(destroyed: 1, matched: 1)
                            },
                            monotonic: { 0 })
    }

    static func selection(_ name: String, _ domain: String, users: [UInt32]?) -> Selection {
        var s = Selection(name: name, domains: [domain])
        s.users = users
        return s
    }

    func waitFor(_ cuts: Cuts, count: Int) async -> [([IPAddress], Set<UInt32>?)] {
        for _ in 0..<200 where cuts.calls.withLock({ $0.count }) < count { try? await Task.sleep(for: .milliseconds(10)) }
        return cuts.calls.withLock { $0 }
    }

    @Test("a block for uid 1001 cuts 1001's sockets; a machine-wide one everyone's")
    func owners() async {
        let cuts = Cuts()
        let felt = Self.enforcer(cuts)
        _ = felt.enforce(blocked: [Self.selection("social", "www.social.test", users: [1001]),
                                   Self.selection("nobody", "www.nobody.test", users: [])])
        let first = await waitFor(cuts, count: 1)
        #expect(first.count == 1 && first.first?.0 == [IPAddress("10.0.0.2")!] && first.first?.1 == [1001],
                "the per-user block's sockets only, and a scope of nobody cuts nothing: \(first)")
        _ = felt.enforce(blocked: [Self.selection("social", "www.social.test", users: [1001]),
                                   Self.selection("news", "www.news.test", users: nil)])
        let second = await waitFor(cuts, count: 2)
        #expect(second.count == 2 && second.last?.0 == [IPAddress("10.0.0.3")!] && second.last?.1 == nil,
                "a machine-wide block cuts anyone's: \(second)")
        _ = felt.enforce(blocked: [Self.selection("social", "www.social.test", users: [1001]),
                                   Self.selection("social2", "www.social.test", users: [1002])])
        let third = await waitFor(cuts, count: 3)
        #expect(third.count == 3 && third.last?.0 == [IPAddress("10.0.0.2")!] && third.last?.1 == [1002],
                "a second user's block of a known domain cuts that user's sockets at once: \(third)")
        _ = felt.release()
    }

    @Test("scopes merge: everyone wins, users add up, Firewall=yes of any holds")
    func merge() {
        var fw = Self.selection("b", "a.test", users: [2])
        fw.firewall = true
        let blocks = FeltEnforcer.blocks([Self.selection("a", "a.test", users: [1]), fw, Self.selection("c", "c.test", users: [3]),
                                          Self.selection("d", "c.test", users: nil), Self.selection("e", "e.test", users: [])])
        let apexes = blocks.filter { !$0.key.hasPrefix("www.") && !$0.key.hasPrefix("m.") }
        #expect(apexes == ["a.test": CutPlan.Block(whole: true, users: [1, 2]), "c.test": CutPlan.Block(users: nil)])
        #expect(blocks.keys.sorted() == ["a.test", "c.test", "m.a.test", "m.c.test", "www.a.test", "www.c.test"],
                "W1: the www. and m. forms the hosts file lists are looked up too")
        #expect(blocks["www.a.test"] == blocks["a.test"] && blocks["m.c.test"] == blocks["c.test"], "W1: in the same scope")
        let rules = FeltEnforcer.withSink([CutPlan.Rule(users: [1], addresses: [IPAddress("10.0.0.2")!])],
                                          sink: HostsFile.Sink.reject.addresses)
        #expect(rules == [CutPlan.Rule(addresses: HostsFile.Sink.reject.addresses.sorted()),
                          CutPlan.Rule(users: [1], addresses: [IPAddress("10.0.0.2")!])], "the sink is refused for everyone")
    }
}

/// E5 at scale: a 100,000-name list blocked at once must not become 100,000 DNS queries.
@Suite("E5 at scale: lookups are bounded, and nothing is done when nothing would act")
struct FeltScaleTests {
    final class Count: Sendable { let n = Mutex(0) }

    static func enforcer(cutSockets: Bool, lookups: Count, log: MemorySink) -> FeltEnforcer {
        let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: false, cutSockets: cutSockets, resolvConf: "/nonexistent")
        return FeltEnforcer(settings: settings, log: log,
                            lookup: { _ in lookups.n.withLock { $0 += 1 }; return DNSClient.Lookup() },
                            cutter: { _, _ in SocketCutter.Result(destroyed: 0, matched: 0) },
                            monotonic: { 0 })
    }

    static let big = Selection(name: "big", domains: (0..<3000).map { "www.d\($0).example.com" })  // one name each (W1)

    /// The barrier for "no more lookups": none waits and none runs. A lookup is queued and
    /// started on the enforcer's queue, in `enforce` or when another finishes, so after this
    /// none starts until something is enforced again.
    static func lookupsDone(_ felt: FeltEnforcer) -> Bool {
        felt.queue.sync { felt.lookupQueue.queued == 0 && felt.lookupQueue.runningCount == 0 }
    }

    @Test("E5: 3,000 names blocked at once are looked up 1,024 at most, and the rest is said")
    func boundedLookups() async {
        let lookups = Count(), log = MemorySink()
        let felt = Self.enforcer(cutSockets: true, lookups: lookups, log: log)
        _ = felt.enforce(blocked: [Self.big])
        #expect(Run.eventually { Self.lookupsDone(felt) })
        #expect(lookups.n.withLock { $0 } == FeltEnforcer.maxLookups)
        #expect(log.entries.contains { $0.message.hasPrefix("3000 domains became blocked at once") })
        _ = felt.release()
    }

    @Test("E5: with CutSockets=no and no table, a block costs no lookup")
    func nothingToDo() async {
        let lookups = Count(), log = MemorySink()
        let felt = Self.enforcer(cutSockets: false, lookups: lookups, log: log)
        #expect(felt.enforce(blocked: [Self.big]) == EnforcementReport())
        #expect(Run.eventually { Self.lookupsDone(felt) })
        #expect(lookups.n.withLock { $0 } == 0)
        _ = felt.release()
    }
}

/// E5 under a sandbox: a lookup that cannot be sent (the shipped unit once forbade IP sockets)
/// must not pass for "no addresses". It is logged once per reason, counted in status, and the
/// table's line counts learned addresses apart from the sink.
@Suite("E5: a failing DNS lookup is logged once, counted in status, and never hidden by the sink")
struct FeltLookupFailureTests {
    final class Answers: Sendable { let next = Mutex(DNSClient.Lookup()) }

    @Test("E5: failures are counted and logged once per reason; a working lookup is said once and clears it")
    func failuresVisible() async throws {
        let answers = Answers(), log = MemorySink()
        let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: false, cutSockets: true, resolvConf: "/nonexistent")
        let felt = FeltEnforcer(settings: settings, log: log, lookup: { _ in answers.next.withLock { $0 } },
                                cutter: { _, _ in SocketCutter.Result(destroyed: 0, matched: 0) }, monotonic: { 0 })
        defer { _ = felt.release() }
        var lookedUp = 0
        func dns() async -> JSONObject {
            for _ in 0..<200 {
                let notes = felt.notes(wallNow: Date(), iso: { "\($0)" })
                if let d = notes["dns"]?.object, d["lookups"]?.int == lookedUp { return d }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return felt.notes(wallNow: Date(), iso: { "\($0)" })["dns"]?.object ?? [:]
        }
        let denied = "cannot send a DNS query to 10.0.0.1: Operation not permitted"
        answers.next.withLock { $0 = DNSClient.Lookup(problem: denied) }
        _ = felt.enforce(blocked: [Selection(name: "a", domains: ["www.a.test", "www.b.test"])])
        lookedUp = 2
        var d = await dns()
        #expect(d["failed"]?.int == 2 && d["problem"]?.string == denied, "\(d)")
        let warnings = log.entries.filter { $0.message.hasPrefix("Cannot learn the addresses of blocked sites") }
        #expect(warnings.count == 1, "logged once for two failures of the same reason: \(log.entries.map(\.message))")
        #expect(warnings.first?.message.hasSuffix(denied) == true && warnings.first?.priority == .warning)

        answers.next.withLock { $0 = DNSClient.Lookup(addresses: [IPAddress("10.0.0.9")!]) }
        _ = felt.enforce(blocked: [Selection(name: "a", domains: ["www.a.test", "www.b.test", "www.c.test"])])
        lookedUp = 3
        d = await dns()
        #expect(d["failed"]?.int == 2 && d["problem"] == nil, "a lookup that works clears the problem: \(d)")
        #expect(log.entries.filter { $0.message.hasPrefix("DNS lookups for blocked sites work again") }.count == 1)
    }

    @Test("E5: a nameserver that does not answer is a problem; none listed is one too")
    func clientProblems() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bd-dns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = dir.appendingPathComponent("empty.conf").path, silent = dir.appendingPathComponent("silent.conf").path
        try "# no servers\n".write(toFile: empty, atomically: true, encoding: .utf8)
        #expect(DNSClient(resolvConf: empty).lookup("a.test") == DNSClient.Lookup(problem: "\(empty) lists no nameserver"))
        // A loopback address nothing listens on: the query stays on this machine and is refused.
        try "nameserver 127.83.1.1\n".write(toFile: silent, atomically: true, encoding: .utf8)
        let answer = DNSClient(resolvConf: silent, timeout: 0.2).lookup("a.test")
        #expect(answer.addresses.isEmpty && answer.problem != nil, "\(answer)")
    }
}
