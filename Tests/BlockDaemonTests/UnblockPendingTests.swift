import BlockCore
import Foundation
import Testing
@testable import BlockDaemon

/// §7 "Truth" for unlocks: with the hosts file's disk full, a stop used to be journalled
/// "Unblocked reddit" and status said "Nothing is blocked" while the file still held reddit's
/// lines. An unlock whose write has not landed is pending: still applied, shown, unannounced.
@Suite("§7 Truth: an unlock whose write failed is pending until it lands")
struct UnblockPendingTests {
    @Test("§7: a stop that cannot be written is 'unblock pending', not 'Unblocked', until the write lands")
    func pendingUntilItLands() throws {
        let h = Harness()
        _ = try #require(ok(h.send(#"start {"selections":["reddit"],"seconds":600}"#)))
        h.enforcer.stuck = ["reddit": "cannot write /etc/hosts: No space left on device"]
        _ = try #require(ok(h.send(#"stop {"name":"reddit"}"#)))
        #expect(h.entries(.unlock).isEmpty, "no 'Unblocked' while the lines are still in the file: \(h.entries(.unlock).map(\.message))")
        let status = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(status["enforcement"]?["applied"] == .array(["reddit"]), "still in force: \(status["enforcement"] ?? .null)")
        #expect(status["enforcement"]?["unblockPending"] == .array([["selection": "reddit", "cause": "cannot write /etc/hosts: No space left on device"]]))
        #expect(status["blocked"] == .array([]), "no longer wanted")
        // Space is freed; the enforcer's retry lands and tells the engine.
        h.enforcer.stuck = [:]
        h.run { h.engine.enforcementChanged() }
        #expect(h.entries(.unlock).count == 1 && h.entries(.unlock)[0].message.hasPrefix("Unblocked reddit"), "\(h.entries(.unlock).map(\.message))")
        let after = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(after["enforcement"]?["applied"] == .array([]) && after["enforcement"]?["unblockPending"] == nil)
    }
}
