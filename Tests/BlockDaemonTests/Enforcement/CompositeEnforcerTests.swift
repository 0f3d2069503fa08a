import BlockCore
import BlockTestSupport
import Dispatch
import Foundation
import Testing
@testable import BlockDaemon

/// E1, U3: the hosts file and the per-user tables are written side by side, each part on its
/// own queue, and the rest follow in order; what they report comes back in the parts' order.
@Suite("E1, U3: the first parts of the enforcer are enforced side by side")
struct CompositeEnforcerTests {
    /// A part that says it started, then waits (up to `patience`) for `other` to start too:
    /// two of them finish quickly only when they run at once.
    final class Meeting: Enforcer, @unchecked Sendable {
        let mode: String
        let started = DispatchSemaphore(value: 0)
        var other: Meeting?
        let patience: DispatchTimeInterval
        private let lock = NSLock()
        private var met: [Bool] = []
        init(_ mode: String, patience: DispatchTimeInterval) { (self.mode, self.patience) = (mode, patience) }
        func enforce(blocked: [Selection]) -> EnforcementReport {
            started.signal()
            let together = other!.started.wait(timeout: .now() + patience) == .success
            if together { other!.started.signal() }  // left for the other one to see too
            lock.withLock { met.append(together) }
            return EnforcementReport(failures: [EnforcementFailure(selection: nil, message: mode)])
        }
        func release() -> [EnforcementFailure] { [] }
        var meetings: [Bool] { lock.withLock { met } }
    }

    static func pair(patience: DispatchTimeInterval) -> (Meeting, Meeting) {
        let (a, b) = (Meeting("hosts", patience: patience), Meeting("tables", patience: patience))
        (a.other, b.other) = (b, a)
        return (a, b)
    }

    @Test("E1, U3: with together: 2 the hosts file and the tables are enforced at once, and the reports keep the parts' order")
    func sideBySide() {
        let (hosts, tables) = Self.pair(patience: .seconds(30))
        let later = RecordingEnforcer()
        let composite = CompositeEnforcer([hosts, tables, later], together: 2)
        let report = composite.enforce(blocked: [Selection(name: "x", domains: ["x.example"])], changed: nil)
        #expect(hosts.meetings == [true] && tables.meetings == [true], "each part saw the other one start while it ran")
        #expect(report.failures.map(\.message) == ["hosts", "tables"], "the parts' order, whichever finished first")
        #expect(later.applied == [["x"]], "the rest follow")
    }

    @Test("E1, U3: without together, the parts run one after the other (the first waits for the second in vain)")
    func inOrder() {
        let (hosts, tables) = Self.pair(patience: .milliseconds(200))
        let composite = CompositeEnforcer([hosts, tables])
        let report = composite.enforce(blocked: [], changed: nil)
        #expect(hosts.meetings == [false], "the second part had not started while the first ran")
        #expect(report.failures.map(\.message) == ["hosts", "tables"])
    }
}
