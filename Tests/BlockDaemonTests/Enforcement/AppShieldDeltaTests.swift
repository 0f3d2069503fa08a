import BlockCore
import Foundation
import Testing
import BlockTestSupport
import BlockTestTools
@testable import BlockDaemon

/// E2 at scale: told which selections changed, the app shield leaves its marks alone when
/// none of them names an app, and its marks still equal a shield given everything from
/// scratch. The shield runs in /proc-scan mode, so this needs no privilege; the only files
/// it marks are the test's own copies of /bin/sleep, and it starts no process.
@Suite("E2: the app shield told what changed equals one given everything")
struct AppShieldDeltaTests {
    @Test("E2: after a random sequence of changes, the blocked executables equal those of a shield given all of it",
          arguments: [1, 2] as [UInt64])
    func deltaEqualsFromScratch(seed: UInt64) throws {
        let s = try ShieldScratch()
        let apps = try (0..<3).map { i in
            let path = s.dir + "/app\(i)"
            try ShieldScratch.copySleep(to: path)
            return path
        }
        var rng = TortureTests.Generator(state: seed)
        let names = (0..<6).map { "s\($0)" }
        let kept = AppShield(killGrace: 0.3, log: MemorySink(), hits: { _ in }, forceMode: .procScan, scanInterval: 60)
        defer { _ = kept.release() }
        var blocked: [String: Selection] = [:]
        _ = kept.enforce(blocked: [])
        for step in 0..<40 {
            var next = blocked
            let name = names.randomElement(using: &rng)!
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: next[name] = nil
            case 1: next[name] = Selection(name: name, domains: ["\(name).example"])  // no app: nothing to mark
            default: next[name] = Selection(name: name, apps: [apps.randomElement(using: &rng)!])
            }
            let changed = Set(names.filter { blocked[$0] != next[$0] })
            blocked = next
            let all = blocked.keys.sorted().map { blocked[$0]! }
            let report = kept.enforce(blocked: all, changed: changed)
            let scratch = AppShield(killGrace: 0.3, log: MemorySink(), hits: { _ in }, forceMode: .procScan, scanInterval: 60)
            let expected = scratch.enforce(blocked: all)
            let files = scratch.blockedFiles
            _ = scratch.release()
            #expect(kept.blockedFiles == files, "seed \(seed), step \(step): the marks after \(changed.sorted())")
            #expect(report == expected, "seed \(seed), step \(step): the report")
        }
    }
}
