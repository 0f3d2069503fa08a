import BlockCore
import Dispatch
import Foundation
import Testing
import BlockTestSupport
import BlockTestTools
@testable import BlockDaemon

/// T9 and §7 for the browser policy files: a loosening is written after `enforce` returns (an
/// unlock does not wait for a file per browser), anything else before it returns, and the
/// files always end as the last change asked, in the order the changes came. The enforcer's
/// queue is plugged by the test to hold a deferred write where it can be looked at.
@Suite("E7, T9: browser policy files: loosenings after the unlock, tightenings before the answer")
struct BrowserPolicyOrderTests {
    final class Fixture: @unchecked Sendable {
        let temp: TempDir
        let browsers: BrowserPolicyEnforcer
        /// How many times a deferred write asked for a reconcile.
        let changes = Counter()
        var file: String { temp.path + "/etc/chromium/policies/managed/blockd.json" }

        init() throws {
            temp = try TempDir(prefix: "bd-browsers-")
            try FileManager.default.createDirectory(atPath: temp.path + "/etc/chromium", withIntermediateDirectories: true)
            var daemon = DaemonConfig.defaults
            daemon.policyRoot = temp.path
            let changes = changes
            browsers = BrowserPolicyEnforcer(config: daemon, stateDir: temp.path, log: MemorySink(),
                                             onChange: { changes.bump() })
        }

        /// What the Chromium file blocks now (nil: no file).
        func listed() -> [String]? {
            guard let data = FileManager.default.contents(atPath: file), let json = try? JSON.parse(bytes: Array(data)) else { return nil }
            return (json["URLBlocklist"]?.array ?? []).compactMap(\.string)
        }

        /// Holds the enforcer's queue until the returned semaphore is signalled.
        func plug() -> DispatchSemaphore { Run.plug(browsers.queue) }

        /// `enforce` on a thread of its own; whether it returned within 10 s (it is let go
        /// either way once the test unplugs the queue).
        func enforceReturns(_ blocked: [Selection]) -> Bool {
            let browsers = browsers
            return Run.returns { _ = browsers.enforce(blocked: blocked) }
        }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func bump() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    static let a = Selection(name: "a", domains: ["a.example"])
    static let b = Selection(name: "b", domains: ["b.example"])
    static let c = Selection(name: "c", domains: ["c.example"])

    @Test("T9: an unlock's loosening returns at once and is written after it; the files then hold what is left")
    func looseningDeferred() throws {
        let f = try Fixture()
        #expect(f.browsers.enforce(blocked: [Self.a, Self.b]).failures.isEmpty)
        #expect(f.listed() == ["a.example", "b.example"], "a tightening is on disk when enforce returns")
        let gate = f.plug()
        let returned = f.enforceReturns([Self.a])
        #expect(f.listed() == ["a.example", "b.example"], "held: the loosening waits behind the plug")
        gate.signal()
        #expect(returned, "the loosening did not wait for the files")
        f.browsers.queue.sync {}
        #expect(f.listed() == ["a.example"])
        #expect(f.changes.value == 0, "a write that worked asks for no reconcile")
    }

    @Test("§7: a tightening is written before enforce returns, after any loosening still pending")
    func tighteningWaits() throws {
        let f = try Fixture()
        _ = f.browsers.enforce(blocked: [Self.a, Self.b])
        let gate = f.plug()
        #expect(f.enforceReturns([Self.a]))
        let tightening = DispatchSemaphore(value: 0)
        let browsers = f.browsers
        Thread.detachNewThread { _ = browsers.enforce(blocked: [Self.a, Self.c]); tightening.signal() }
        #expect(tightening.wait(timeout: .now() + 0.2) == .timedOut, "a tightening waits for the files (and for the loosening before it)")
        gate.signal()
        #expect(tightening.wait(timeout: .now() + 10) == .success)
        #expect(f.listed() == ["a.example", "c.example"], "the last change wins, and it is on disk when enforce returns")
    }

    @Test("§7: a deferred write that fails asks for a reconcile, whose retry reports the failure")
    func deferredFailure() throws {
        let f = try Fixture()
        _ = f.browsers.enforce(blocked: [Self.a, Self.b])
        // The file's place taken by a directory with something in it: no rename can replace it.
        try FileManager.default.removeItem(atPath: f.file)
        try FileManager.default.createDirectory(atPath: f.file + "/x", withIntermediateDirectories: true)
        #expect(f.browsers.enforce(blocked: [Self.a]).failures.isEmpty, "nothing is known yet when a loosening returns")
        f.browsers.queue.sync {}
        #expect(f.changes.value == 1, "the failed write asked for a reconcile")
        let retry = f.browsers.enforce(blocked: [Self.a])
        #expect(retry.failures.map(\.message).contains { $0.contains("cannot update the chromium policy") }, "\(retry.failures)")
    }
}
