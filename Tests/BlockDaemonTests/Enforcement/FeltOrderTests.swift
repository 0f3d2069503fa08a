import BlockCore
import BlockTestSupport
import BlockTestTools
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import BlockDaemon

/// T9 and §7 for the cut enforcer's table (E5), as for the browser policy files: a loosening
/// is carried out after `enforce` returns (an unlock's journal entry does not wait for
/// libnftables), anything else before it returns, and the table always ends as the last change
/// asked, in the order the changes came. The table is the test's own (`Table`), so what it was
/// asked to hold, and when, can be looked at; the enforcer's queue is plugged by the test to
/// hold a deferred update where it can be seen.
@Suite("E5, T9: the cut enforcer's table: loosenings after the unlock, tightenings before the answer")
struct FeltOrderTests {
    /// A firewall table that keeps the addresses it was last told to refuse, and fails while
    /// `failing` is set.
    final class Table: FirewallTable {
        let state = Mutex<(refused: [String], applied: Int, failing: Bool)>(([], 0, false))

        func apply(rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule]) -> String? {
            state.withLock {
                if $0.failing { return "the test's table refuses every change" }
                $0.refused = rules.flatMap(\.addresses).map(\.description).sorted()
                $0.applied += 1
                return nil
            }
        }

        var refused: [String] { state.withLock { $0.refused } }
        var applied: Int { state.withLock { $0.applied } }
        func fail(_ on: Bool) { state.withLock { $0.failing = on } }
    }

    final class Counter: Sendable {
        let n = Mutex(0)
        var value: Int { n.withLock { $0 } }
    }

    final class Fixture: @unchecked Sendable {
        let table = Table()
        let felt: FeltEnforcer
        /// How many times a deferred update asked for a reconcile.
        let changes = Counter()

        init() {
            let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: true, cutSockets: false, resolvConf: "/nonexistent")
            let changes = changes
            // Each name answers with an address of its own, so the table shows which are refused.
            felt = FeltEnforcer(settings: settings, log: MemorySink(), table: (table, nil),
                                lookup: { name in DNSClient.Lookup(addresses: [IPAddress(FeltOrderTests.address(of: name))!]) },
                                cutter: { _, _ in SocketCutter.Result(destroyed: 0, matched: 0) }, monotonic: { 0 },
                                onChange: { changes.n.withLock { $0 += 1 } })
        }

        /// Holds the enforcer's queue until the returned semaphore is signalled.
        func plug() -> DispatchSemaphore { Run.plug(felt.queue) }

        /// `enforce` on a thread of its own; whether it returned within 10 s (it is let go
        /// either way once the test unplugs the queue).
        func enforceReturns(_ blocked: [Selection]) -> Bool {
            let felt = felt
            return Run.returns { _ = felt.enforce(blocked: blocked) }
        }

        /// The learned addresses refused (the sink's left out).
        var learned: [String] { table.refused.filter { $0.hasPrefix("192.0.2.") } }

        /// The learned addresses refused once they are `expected`, or after 10 s.
        func refusedOnceLearned(_ expected: [String]) -> [String] {
            _ = Run.eventually { self.felt.queue.sync {}; return self.learned == expected }
            return learned
        }
    }

    /// Each blocked domain's address; its `www.` and `m.` names (W1) answer the same.
    static func address(of name: String) -> String {
        let domain = name.split(separator: ".").suffix(2).joined(separator: ".")
        return ["a.test": "192.0.2.1", "b.test": "192.0.2.2", "c.test": "192.0.2.3"][domain] ?? "198.51.100.1"
    }
    static let a = Selection(name: "a", domains: ["a.test"])
    static let b = Selection(name: "b", domains: ["b.test"])
    static let c = Selection(name: "c", domains: ["c.test"])

    @Test("T9: an unlock's loosening returns at once and the table is changed after it; it then refuses what is left")
    func looseningDeferred() {
        let f = Fixture()
        defer { _ = f.felt.release() }
        #expect(f.felt.enforce(blocked: [Self.a, Self.b]).failures.isEmpty)
        #expect(f.refusedOnceLearned(["192.0.2.1", "192.0.2.2"]) == ["192.0.2.1", "192.0.2.2"])
        let applied = f.table.applied
        let gate = f.plug()
        let returned = f.enforceReturns([Self.a])
        #expect(f.table.applied == applied && f.learned.contains("192.0.2.2"), "held: the loosening waits behind the plug")
        gate.signal()
        #expect(returned, "the loosening did not wait for the table")
        f.felt.queue.sync {}
        #expect(f.learned == ["192.0.2.1"], "b's address is no longer refused")
        #expect(f.changes.value == 0, "an update that worked asks for no reconcile")
    }

    @Test("§7: a tightening is done before enforce returns, after any loosening still pending")
    func tighteningWaits() {
        let f = Fixture()
        defer { _ = f.felt.release() }
        _ = f.felt.enforce(blocked: [Self.a])
        #expect(f.refusedOnceLearned(["192.0.2.1"]) == ["192.0.2.1"])
        let gate = f.plug()
        #expect(f.enforceReturns([]), "the unlock of everything returns at once")
        #expect(f.learned == ["192.0.2.1"], "held: the table still refuses a")
        // A new block after it: enforce must not return while the loosening waits.
        let done = DispatchSemaphore(value: 0)
        let felt = f.felt
        Thread.detachNewThread { _ = felt.enforce(blocked: [Self.c]); done.signal() }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "a tightening waits for the queue")
        gate.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        // c's own address is learned by a lookup after enforce returns (E5); the sink is refused before.
        #expect(f.table.refused.contains("127.0.0.253") && !f.learned.contains("192.0.2.1"),
                "when enforce returns, the loosening came first and the new block's sink is refused: \(f.table.refused)")
        #expect(f.refusedOnceLearned(["192.0.2.3"]) == ["192.0.2.3"])
    }

    @Test("§7: a deferred update that fails asks for a reconcile, whose synchronous retry reports the failure")
    func deferredFailure() {
        let f = Fixture()
        defer { _ = f.felt.release() }
        _ = f.felt.enforce(blocked: [Self.a, Self.b])
        #expect(f.refusedOnceLearned(["192.0.2.1", "192.0.2.2"]) == ["192.0.2.1", "192.0.2.2"])
        f.table.fail(true)
        #expect(f.felt.enforce(blocked: [Self.a]).failures.isEmpty, "a loosening reports nothing when it returns")
        f.felt.queue.sync {}
        #expect(f.changes.value == 1, "the failed update asked for a reconcile")
        let retry = f.felt.enforce(blocked: [Self.a])
        #expect(retry.failures.map(\.message) == ["cannot update the nftables table inet blockd: the test's table refuses every change"],
                "the same set again is done at once and says why it failed")
        f.table.fail(false)
        #expect(f.felt.enforce(blocked: [Self.a]).failures.isEmpty, "once the table works the retry converges")
        #expect(f.learned == ["192.0.2.1"])
    }

    @Test("T9: only dropping names or windows is a loosening; a scope narrowed, a name added, or nothing changed is not")
    func whatLoosens() {
        typealias Ask = FeltEnforcer.Ask
        let everyone = CutPlan.Block(), kid = CutPlan.Block(users: [1001])
        let window = AllowOnlyNet.Window(name: "w", users: nil, hosts: ["school.test"])
        let before = Ask(blocks: ["a.test": everyone, "b.test": kid], windows: [window])
        let cases: [(String, Ask, Bool)] = [
            ("a name dropped", Ask(blocks: ["a.test": everyone], windows: [window]), true),
            ("a window dropped", Ask(blocks: ["a.test": everyone, "b.test": kid], windows: []), true),
            ("everything dropped", Ask(blocks: [:], windows: []), true),
            ("nothing changed", before, false),
            ("a name added", Ask(blocks: ["a.test": everyone, "b.test": kid, "c.test": everyone], windows: [window]), false),
            ("one dropped, one added", Ask(blocks: ["a.test": everyone, "c.test": everyone], windows: [window]), false),
            ("a scope changed while another name is dropped", Ask(blocks: ["a.test": kid], windows: [window]), false),
            ("a window changed while a name is dropped", Ask(blocks: ["a.test": everyone], windows: [.init(name: "w", users: [1001], hosts: ["school.test"])]), false),
        ]
        for (what, after, loosens) in cases {
            #expect(after.loosens(from: before) == loosens, "\(what)")
        }
    }
}
