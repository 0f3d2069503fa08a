import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon
import BlockTestTools

@Suite("§9: the usage monitor", .serialized)
struct UsageMonitorTests {
    /// What the monitor reported: the limits running (`all`, `last`), and for whom (`uses`).
    final class Reports: @unchecked Sendable {
        let lock = NSLock()
        var all: [Set<String>] = []
        var uses: [Set<LimitUse>] = []
        func add(_ s: Set<LimitUse>) { lock.withLock { all.append(Set(s.map(\.limit))); uses.append(s) } }
        var last: Set<String>? { lock.withLock { all.last } }
        var lastUses: Set<LimitUse>? { lock.withLock { uses.last } }
    }

    func check(forceScan: Bool) throws {
        let scratch = try ShieldScratch()
        let reports = Reports()
        let monitor = UsageMonitor(report: { reports.add($0) }, path: "/usr/bin:/bin", forceScan: forceScan, scanInterval: 0.2)
        // An instance already running when the limit appears is found by the first scan.
        let early = try scratch.spawn(scratch.app, ["30"]).get()
        monitor.follow(["games": LimitedApps(apps: [scratch.app]), "other": LimitedApps(apps: ["/nonexistent/app"])])
        #expect(Run.eventually(timeout: 5) { reports.last == ["games"] })
        kill(early, SIGTERM)
        _ = scratch.wait(early, timeout: 5)
        #expect(Run.eventually(timeout: 5) { reports.last == [] }, "the exit is seen")
        // A new launch is seen, and its exit.
        let late = try scratch.spawn(scratch.app, ["1"]).get()
        #expect(Run.eventually(timeout: 5) { reports.last == ["games"] })
        _ = scratch.wait(late, timeout: 5)
        #expect(Run.eventually(timeout: 5) { reports.last == [] })
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

    final class AppReports: @unchecked Sendable {
        let lock = NSLock()
        var all: [Set<UsageMonitor.Running>] = []
        func add(_ s: Set<UsageMonitor.Running>) { lock.withLock { all.append(s) } }
        var last: Set<UsageMonitor.Running>? { lock.withLock { all.last } }
    }

    /// R1: an app any selection names, followed for the report, with no limit on it.
    func checkApps(forceScan: Bool) throws {
        let scratch = try ShieldScratch()
        let (limits, apps) = (Reports(), AppReports())
        let monitor = UsageMonitor(report: { limits.add($0) }, apps: { apps.add($0) }, path: "/usr/bin:/bin", forceScan: forceScan, scanInterval: 0.2)
        monitor.follow(apps: [scratch.app])
        let pid = try scratch.spawn(scratch.app, ["30"]).get()
        let me = UsageMonitor.Running(uid: ProcessUsers.of(pid)?.person ?? getuid(), app: scratch.app)
        #expect(Run.eventually(timeout: 5) { apps.last == [me] }, "\(apps.all)")
        // R1's foreground: the agent's word, /proc/PID/exe, is that app; a path followed by none is no app.
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        #expect(monitor.apps(ofExecutable: exe) == [scratch.app])
        #expect(monitor.apps(ofExecutable: "/usr/bin/not-followed").isEmpty)
        #expect(limits.all.allSatisfy { $0.isEmpty }, "no limit is reported running")
        monitor.follow(["games": LimitedApps(apps: [scratch.app])])  // a limit on the same app later: both counts go on
        #expect(Run.eventually(timeout: 5) { limits.last == ["games"] } && apps.last == [me])
        kill(pid, SIGTERM)
        _ = scratch.wait(pid, timeout: 5)
        #expect(Run.eventually(timeout: 5) { apps.last == [] && limits.last == [] }, "the exit is seen by both")
        withExtendedLifetime(monitor) {}
    }

    @Test("R1: an app any selection names is reported running for the person who runs it, through fanotify", .enabled(if: Privileged.can(needs: []), Privileged.needsRoot))
    func appsFanotify() throws {
        try checkApps(forceScan: false)
    }

    @Test("R1: the same through the /proc scan fallback")
    func appsProcScan() throws {
        try checkApps(forceScan: true)
    }

    @Test("R1: every installed desktop application is followed for the report, as its entry's name (a selection's own entry wins), a new one as soon as it is installed; the /proc scan follows named apps only", .enabled(if: Privileged.can(needs: []), Privileged.needsRoot))
    func desktopApps() throws {
        let d = try DesktopScratch()
        let (game, editor, shell) = (try d.binary("supertux"), try d.binary("editor"), try d.binary("bash"))
        try d.desktop("apps/supertux.desktop", name: "SuperTux", exec: game + " %f")
        try d.desktop("apps/editor.desktop", name: "Text Editor", exec: editor)
        try d.desktop("apps/term.desktop", name: "Shell", exec: shell)  // a launcher: no app of anyone's
        let (limits, apps) = (Reports(), AppReports())
        let monitor = UsageMonitor(report: { limits.add($0) }, apps: { apps.add($0) }, path: "/usr/bin:/bin", desktop: d.dirs)
        monitor.follow(apps: [editor])  // a selection names the editor
        #expect(monitor.apps(ofExecutable: game) == ["SuperTux"] && monitor.apps(ofExecutable: editor) == [editor] && monitor.apps(ofExecutable: shell).isEmpty)
        let first = try d.spawn(game, as: 0, ["30"]).get(), second = try d.spawn(editor, as: 0, ["30"]).get()
        let launcher = try d.spawn(shell, as: 0, ["30"]).get()
        let expected: Set<UsageMonitor.Running> = [.init(uid: 0, app: "SuperTux"), .init(uid: 0, app: editor)]
        #expect(Run.eventually(timeout: 5) { apps.last == expected }, "\(apps.all)")
        for pid in [first, second, launcher] { kill(pid, SIGTERM); _ = d.shield.wait(pid, timeout: 5) }
        #expect(Run.eventually(timeout: 5) { apps.last == [] })

        let later = try d.binary("chess")
        try d.desktop("apps/chess.desktop", name: "Chess", exec: later)  // installed while blockd runs
        #expect(Run.eventually(timeout: 5) { monitor.apps(ofExecutable: later) == ["Chess"] }, "the directory change is followed")
        let third = try d.spawn(later, as: 0, ["30"]).get()
        #expect(Run.eventually(timeout: 5) { apps.last == [.init(uid: 0, app: "Chess")] }, "\(apps.all)")
        kill(third, SIGTERM)
        _ = d.shield.wait(third, timeout: 5)
        #expect(limits.all.allSatisfy { $0.isEmpty })

        let scan = UsageMonitor(report: { _ in }, path: "/usr/bin:/bin", desktop: d.dirs, forceScan: true, scanInterval: 0.2)
        scan.follow(apps: [])
        #expect(scan.apps(ofExecutable: game).isEmpty, "the fallback follows no desktop application (the lookup waits for the follow)")
        withExtendedLifetime((monitor, scan)) {}
    }
}
