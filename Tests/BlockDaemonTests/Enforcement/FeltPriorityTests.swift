import BlockCore
import BlockTestSupport
import Foundation
import Synchronization
import Testing
@testable import BlockDaemon

/// E5 with per-user blocks (U3) on a slow resolver: a member's backlog of lookups must not
/// delay a machine-wide block's, nor another member's. The lookup is injected (slow, or hung
/// until the test lets it go) and the cutter records; the tests assert the order in which
/// lookups started, never how long they took (the machine running them is noisy).
@Suite("E5 lookup order in the cut enforcer: a member's slow lookups delay nobody else's")
struct FeltPriorityTests {
    static let kid: UInt32 = 1001, kid2: UInt32 = 1002
    static let everyone = IPAddress("10.0.1.1")!, homework = IPAddress("10.0.2.2")!, backlog = IPAddress("10.0.3.3")!

    /// What the fakes saw: the domains whose lookups started, in order, and the cuts.
    final class Record: Sendable {
        let started = Mutex<[String]>([])
        let cuts = Mutex<[([IPAddress], Set<UInt32>?)]>([])
        /// While false, lookups of the backlog's names (`www.kidN-M.test`) hang: a resolver that never answers.
        let open = Mutex(true)

        func startIndex(of domain: String) -> Int? { started.withLock { $0.firstIndex(of: domain) } }
        func cut(_ address: IPAddress, owners: Set<UInt32>?) -> Bool {
            cuts.withLock { $0.contains { $0.0.contains(address) && $0.1 == owners } }
        }
    }

    static func enforcer(_ record: Record, delay: Double, log: MemorySink = MemorySink()) -> FeltEnforcer {
        let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: false, cutSockets: true, resolvConf: "/nonexistent")
        return FeltEnforcer(settings: settings, log: log,
                            lookup: { domain in
                                record.started.withLock { $0.append(domain) }
                                if domain.hasPrefix("www.kid") {
                                    while !record.open.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.005) }
                                }
                                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                                switch domain {
                                case "youtube.test": return DNSClient.Lookup(addresses: [everyone])
                                case "homework.test": return DNSClient.Lookup(addresses: [homework])
                                default: return DNSClient.Lookup(addresses: [backlog])
                                }
                            },
                            cutter: { addresses, owners in
                                record.cuts.withLock { $0.append((addresses, owners)) }
                                return SocketCutter.Result(destroyed: 1, matched: 1)
                            },
                            monotonic: { 0 })
    }

    static func selection(_ name: String, _ domains: [String], users: [UInt32]?) -> Selection {
        var s = Selection(name: name, domains: domains)
        s.users = users
        return s
    }

    /// The reported case: kid starts 12 blocks of 180 names each, one after the other.
    /// (`www.` names, which the hosts file lists as they are: one lookup each, W1.)
    static let kidBlocks = (0..<12).map { b in selection("kid\(b)", (0..<180).map { "www.kid\(b)-\($0).test" }, users: [kid]) }

    /// Enforces kid's 12 blocks as 12 changes, the way 12 `blockc start`s arrive.
    static func startBacklog(_ felt: FeltEnforcer) {
        for n in 1...kidBlocks.count { _ = felt.enforce(blocked: Array(kidBlocks.prefix(n))) }
    }

    /// Waits (at most `seconds`) until `done` holds; whether it did.
    func wait(seconds: Double, _ done: () -> Bool) async -> Bool {
        for _ in 0..<Int(seconds * 100) where !done() { try? await Task.sleep(for: .milliseconds(10)) }
        return done()
    }

    /// How many of the backlog's lookups started after `mark` and before `domain`'s.
    func backlogBefore(_ domain: String, after mark: Int, in record: Record) -> Int? {
        record.started.withLock { started in
            guard let i = started.firstIndex(of: domain) else { return nil }
            return started[mark..<i].filter { $0.hasPrefix("www.kid") }.count
        }
    }

    @Test("E5: a machine-wide block is looked up and cut ahead of a member's backlog of 12×180 names")
    func machineWideFirst() async {
        let record = Record()
        let felt = Self.enforcer(record, delay: 0.2)
        defer { _ = felt.release() }
        Self.startBacklog(felt)
        #expect(await wait(seconds: 2) { record.started.withLock { $0.count } >= 2 }, "kid's lookups are under way")
        let mark = record.started.withLock { $0.count }
        _ = felt.enforce(blocked: Self.kidBlocks + [Self.selection("youtube", ["youtube.test"], users: nil)])
        // One lookup takes 0.2 s; the backlog would take minutes. 10 s is only a ceiling for a noisy machine.
        let cut = await wait(seconds: 10) { record.cut(Self.everyone, owners: nil) }
        #expect(cut, "youtube.test's address was cut for everyone")
        let before = backlogBefore("youtube.test", after: mark, in: record)
        // Each other worker may pick up one more of kid's names while youtube's is handed over.
        #expect(before.map { $0 <= 3 } == true, "kid's lookups started after the machine-wide block and before its own: \(before.map(String.init) ?? "youtube.test never looked up")")
    }

    @Test("U3: a second member's block is looked up in turn, not after the first member's backlog")
    func roundRobin() async {
        let record = Record()
        let felt = Self.enforcer(record, delay: 0.2)
        defer { _ = felt.release() }
        Self.startBacklog(felt)
        #expect(await wait(seconds: 2) { record.started.withLock { $0.count } >= 2 })
        let mark = record.started.withLock { $0.count }
        _ = felt.enforce(blocked: Self.kidBlocks + [Self.selection("homework", ["homework.test"], users: [Self.kid2])])
        let cut = await wait(seconds: 10) { record.cut(Self.homework, owners: [Self.kid2]) }
        #expect(cut, "homework.test's address was cut for kid2's sockets")
        let before = backlogBefore("homework.test", after: mark, in: record)
        #expect(before.map { $0 <= 3 } == true, "kid's lookups started after kid2's block and before its own: \(before.map(String.init) ?? "homework.test never looked up")")
    }

    @Test("E5/U3: with a member's lookups hung, a machine-wide block and another member's are still cut; the member's excess is dropped and said")
    func hungMember() async {
        let record = Record(), log = MemorySink()
        record.open.withLock { $0 = false }
        let felt = Self.enforcer(record, delay: 0, log: log)
        defer {
            record.open.withLock { $0 = true }
            _ = felt.release()
        }
        Self.startBacklog(felt)
        _ = felt.enforce(blocked: Self.kidBlocks + [Self.selection("youtube", ["youtube.test"], users: nil),
                                                    Self.selection("homework", ["homework.test"], users: [Self.kid2])])
        #expect(await wait(seconds: 10) { record.cut(Self.everyone, owners: nil) }, "the machine-wide block was cut")
        #expect(await wait(seconds: 10) { record.cut(Self.homework, owners: [Self.kid2]) }, "kid2's block was cut")
        let kidStarted = record.started.withLock { $0.filter { $0.hasPrefix("www.kid") }.count }
        #expect(kidStarted == LookupQueue.Limits.standard.perUserRunning,
                "kid's hung lookups hold only kid's share of the workers: \(kidStarted)")
        let dropped = log.entries.compactMap { $0.field(.lookupsDropped).flatMap(Int.init) }.reduce(0, +)
        let kept = LookupQueue.Limits.standard.perUserQueued + LookupQueue.Limits.standard.perUserRunning
        #expect(dropped == 12 * 180 - kept, "kid's names beyond the budget are dropped, and how many is said: \(dropped)")
        #expect(log.entries.contains { $0.message.contains("uid 1001") && $0.field(.lookupsDropped) != nil })
    }
}
