import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

@Suite("§9: the usage monitor", .serialized)
struct UsageMonitorTests {
    final class Reports: @unchecked Sendable {
        let lock = NSLock()
        var all: [Set<String>] = []
        func add(_ s: Set<String>) { lock.withLock { all.append(s) } }
        var last: Set<String>? { lock.withLock { all.last } }
    }

    func check(forceScan: Bool) throws {
        let scratch = try ShieldScratch()
        let reports = Reports()
        let monitor = UsageMonitor(report: { reports.add($0) }, path: "/usr/bin:/bin", forceScan: forceScan, scanInterval: 0.2)
        // An instance already running when the limit appears is found by the first scan.
        let early = try scratch.spawn(scratch.app, ["30"]).get()
        monitor.follow(["games": LimitedApps(apps: [scratch.app]), "other": LimitedApps(apps: ["/nonexistent/app"])])
        #expect(waitUntil(timeout: 5) { reports.last == ["games"] })
        kill(early, SIGTERM)
        _ = scratch.wait(early, timeout: 5)
        #expect(waitUntil(timeout: 5) { reports.last == [] }, "the exit is seen")
        // A new launch is seen, and its exit.
        let late = try scratch.spawn(scratch.app, ["1"]).get()
        #expect(waitUntil(timeout: 5) { reports.last == ["games"] })
        _ = scratch.wait(late, timeout: 5)
        #expect(waitUntil(timeout: 5) { reports.last == [] })
        // A limit whose app is not installed is never reported running.
        #expect(!(reports.all.contains { $0.contains("other") }))
        withExtendedLifetime(monitor) {}
    }

    @Test("§9: starts and exits of a limited app, through fanotify notification marks", .enabled(if: Privileged.can(needs: []), Privileged.needsRoot))
    func fanotify() throws {
        if Privileged.unavailable(needs: []) != nil { return }
        try check(forceScan: false)
    }

    @Test("§9: the same through the /proc scan fallback (no privileges needed)")
    func procScan() throws {
        try check(forceScan: true)
    }
}
