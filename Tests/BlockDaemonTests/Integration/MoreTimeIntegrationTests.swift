import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// More time on the real binaries: a stop that waits for `--delay` and is cancelled (M2), and
/// a used-up limit lifted by `blockc more` for exactly the allowance asked (M3).
@Suite("Integration: blockc more, --delay and cancel against blockd", .serialized)
struct MoreTimeIntegrationTests {
    @Test("M2 end to end: a stop under --delay waits, status says how to keep the block, 'blockc cancel' keeps it")
    func delayedStopCancelled() throws {
        let s = Sandbox()
        try s.start()
        let start = try s.blockc(["start", "--for", "1h", "--delay", "2s", "--name", "work", "instagram"])
        #expect(start.status == 0, "\(start.err)")
        let stop = try s.blockc(["stop", "work"])
        #expect(stop.status == 0, "\(stop.err)")
        #expect(stop.out.contains("takes effect") && stop.out.contains("'blockc cancel work' keeps it"), "\(stop.out)")
        let status = try s.blockc(["status"]).out
        #expect(status.contains("stop of 'work' takes effect at ") && status.contains("'blockc cancel work' to keep it"), "\(status)")
        let cancel = try s.blockc(["cancel", "work"])
        #expect(cancel.status == 0, "\(cancel.err)")
        #expect(cancel.out == "Cancelled the stop of 'work'; it stays.\n", "\(cancel.out)")
        // The barrier: a block that ends after the cancelled stop was due. The daemon's one timer
        // wakes for the earliest transition first, so once this one has ended, the stop would
        // have taken effect had it not been cancelled.
        #expect(try s.blockc(["start", "--for", "3s", "--name", "witness", "reddit"]).status == 0)
        #expect(Run.eventually { s.log.contains("Unblocked reddit") }, "log:\n\(s.log)")
        let after = try JSON.parse(try s.blockc(["status", "--json"]).out)
        #expect(after["blocked"]?[0]?["selection"] == "instagram", "the cancelled stop did not happen")
        #expect(after["delayed"] == [])
        #expect(s.log.contains("takes effect at"), "journalled: \(s.log)")
    }

    @Test("M3 end to end: a used-up limit, 'blockc more testgame 3s' lets the app run 3 s more, then it is stopped and refused again", .enabled(if: Privileged.can(needs: []), Privileged.needsRoot))
    func limitMoreTime() throws {
        if Privileged.unavailable(needs: []) != nil { return }
        let scratch = try ShieldScratch()
        let s = Sandbox()
        s.write("[Selection]\nName=testgame\nApps=\(scratch.app)\n", to: "etc/selections.d/testgame.conf")
        try s.start()
        #expect(try s.blockc(["limit", "add", "play", "2s", "testgame"]).status == 0)
        let first = try scratch.spawn(scratch.app, ["30"]).get()
        #expect(scratch.wait(first, timeout: 10).map(ShieldScratch.termSignal) == SIGTERM, "log:\n\(s.log)")
        guard case .failure = scratch.spawn(scratch.app, ["0"]) else { Issue.record("launched after the limit"); return }

        let more = try s.blockc(["more", "testgame", "3s"])
        #expect(more.status == 0, "\(more.err)")
        usleep(1_000_000)  // allowance, not a window: waiting uses none of it
        let began = Date()
        let second = try scratch.spawn(scratch.app, ["30"]).get()
        let status = scratch.wait(second, timeout: 10)
        let ran = Date().timeIntervalSince(began)
        #expect(status.map(ShieldScratch.termSignal) == SIGTERM, "log:\n\(s.log)")
        #expect(ran >= 2.9 && ran < 5, "ran \(ran) s of a 3 s allowance")
        guard case .failure(let error) = scratch.spawn(scratch.app, ["0"]) else { Issue.record("launched after the allowance"); return }
        #expect(error.code == .EPERM)
        #expect(s.log.contains("More time for testgame"))
    }
}
