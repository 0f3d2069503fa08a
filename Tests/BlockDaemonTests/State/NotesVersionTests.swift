import BlockCore
import BlockTestSupport
import BlockTestTools
import Foundation
import Synchronization
import Testing
@testable import BlockDaemon

/// `status` reuses the enforcers' notes while their count of changes stands still
/// (`NotesVersion`, StatusSnapshot+Line.swift). That is only right if every change to what the
/// notes say moves the count: here each enforcer is driven through random changes, its notes
/// are sampled on another thread while it works, and any two samples taken at the same count
/// must be the same notes.
@Suite("E5, E7, U3: an enforcer's notes never change while its count of changes stands still")
struct NotesVersionTests {
    /// Samples `(count, notes)` whenever the count read before and after the notes agree, until
    /// `stop`; then checks that equal counts came with equal notes.
    final class Sampler: @unchecked Sendable {
        let seen = Mutex<[UInt64: JSONObject]>([:])
        let clashes = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)

        let version: @Sendable () -> UInt64
        let notes: @Sendable () -> JSONObject

        init(version: @escaping @Sendable () -> UInt64, notes: @escaping @Sendable () -> JSONObject) {
            (self.version, self.notes) = (version, notes)
            Thread.detachNewThread { [self] in
                while !stop.load(ordering: .acquiring) {
                    sample(version: version, notes: notes)
                    usleep(100)  // paced: a sampler spinning flat out starves the suite's other tests of a core
                }
                sample(version: version, notes: notes)
                done.signal()
            }
        }

        func sample(version: () -> UInt64, notes: () -> JSONObject) {
            let before = version()
            let n = notes()
            guard version() == before else { return }
            seen.withLock { seen in
                if let earlier = seen[before], earlier != n {
                    clashes.withLock { $0.append("count \(before): \(JSON.object(earlier).serialized()) then \(JSON.object(n).serialized())") }
                }
                seen[before] = n
            }
        }

        /// A sample taken by the test between its steps, whatever the sampling thread managed.
        func sample() { sample(version: version, notes: notes) }

        /// Stops sampling (after one last sample) and gives the counts seen and the clashes.
        func finish() -> (counts: Int, clashes: [String]) {
            stop.store(true, ordering: .releasing)
            done.wait()
            return (seen.withLock { $0.count }, clashes.withLock { $0 })
        }
    }

    static func selection(_ name: String, _ domains: [String], users: [UInt32]? = nil) -> Selection {
        var s = Selection(name: name, domains: domains)
        s.users = users
        return s
    }

    static var allowOnly: Selection {
        var s = Selection(name: "school")
        s.allowed = [Selection(name: "s", domains: ["school.test"])]
        return s
    }

    /// Until no lookup is running or waiting (a barrier with a deadline, not a sleep).
    static func lookupsDone(_ felt: FeltEnforcer) throws {
        let deadline = Date().addingTimeInterval(10)
        while !felt.queue.sync(execute: { felt.idleWorkers.count == FeltEnforcer.lookupLimits.workers }) {
            guard Date() < deadline else { throw CancellationError() }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    @Test("E5: the cut enforcer's notes (lookups, failures, sockets cut, rules, windows) move its count",
          arguments: [1, 2] as [UInt64])
    func felt(seed: UInt64) throws {
        var rng = TortureTests.Generator(state: seed)
        let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: false, cutSockets: true, resolvConf: "/nonexistent")
        let cuts = Atomic<Int>(0)
        let felt = FeltEnforcer(settings: settings, log: MemorySink(), table: (nil, "nftables is not usable here (test)"),
                                lookup: { domain in
                                    // Some names fail (E5's lookup problem), the others answer an address of their own.
                                    if domain.hasPrefix("bad") { return DNSClient.Lookup(problem: "no server answered (test)") }
                                    return DNSClient.Lookup(addresses: [IPAddress("10.0.0.\(domain.count % 200 + 1)")!])
                                },
                                cutter: { _, _ in
                                    SocketCutter.Result(destroyed: cuts.add(1, ordering: .relaxed).newValue % 3, matched: 1)
                                },
                                monotonic: { 0 })
        let fixed = Date(timeIntervalSince1970: 1_800_000_000)
        let sampler = Sampler(version: { felt.notesVersion.value },
                              notes: { felt.notes(wallNow: fixed, iso: { "\($0.timeIntervalSince1970)" }) })
        let pool = [NotesVersionTests.selection("a", ["a.test", "www.a.test"]), NotesVersionTests.selection("b", ["bad.test"]),
                    NotesVersionTests.selection("c", ["c.test"], users: [1001]), NotesVersionTests.selection("d", ["dd.test", "bad-d.test"], users: [1002]),
                    NotesVersionTests.allowOnly]
        for _ in 0..<40 {
            let blocked = pool.filter { _ in Bool.random(using: &rng) }
            _ = felt.enforce(blocked: blocked)
            if Bool.random(using: &rng) { try NotesVersionTests.lookupsDone(felt) }
            sampler.sample()
        }
        _ = felt.release()
        try NotesVersionTests.lookupsDone(felt)
        let (counts, clashes) = sampler.finish()
        #expect(clashes.isEmpty, "notes changed with no change counted: \(clashes.prefix(3))")
        #expect(counts > 1, "the count moved as the blocks changed")
    }

    @Test("E7: the browser policy enforcer's notes (files, Firefox, closed, prefixes, allow-only) move its count",
          arguments: [1, 2] as [UInt64])
    func browsers(seed: UInt64) throws {
        var rng = TortureTests.Generator(state: seed)
        let root = try BrowserPolicyDeltaTests.Root()
        let browsers = root.browsers
        let sampler = Sampler(version: { browsers.notesVersion.value }, notes: { browsers.notes() })
        let names = (0..<6).map { "s\($0)" }
        for _ in 0..<40 {
            let blocked = names.filter { _ in Bool.random(using: &rng) }.map { BrowserPolicyDeltaTests.form(of: $0, &rng) }
            _ = root.browsers.enforce(blocked: blocked)
            _ = root.files()
            sampler.sample()
        }
        _ = root.browsers.release()
        let (counts, clashes) = sampler.finish()
        #expect(clashes.isEmpty, "notes changed with no change counted: \(clashes.prefix(3))")
        #expect(counts > 1, "the count moved as the blocks changed")
    }
}
