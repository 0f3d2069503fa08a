import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// §4 E2 and S5. Safe on a shared machine: the only inode ever marked is the test's own
/// temp copy of /bin/sleep, and the only processes that can be killed are the test's children
/// running that copy. Every shield is released and every child reaped, pass or fail.
@Suite("App shield (§4 E2)", .serialized)
struct AppShieldTests {
    static func selection(_ name: String = "focus", apps: [String]) -> Selection {
        Selection(name: name, apps: apps)
    }

    static let needsMode: Comment = "needs root and a kernel with the shield mode it tests; runs as root with BLOCKD_PRIVILEGED_TESTS=1"

    /// The condition of a test of `mode`: true when it must run (BLOCKD_PRIVILEGED_TESTS=1) or
    /// this machine provides the mode.
    static func can(_ mode: AppShield.Mode) -> Bool {
        if Privileged.required { return true }
        if mode != .procScan && !Privileged.isRoot { return false }
        let shield = AppShield(killGrace: 0.3, log: MemorySink(), hits: { _ in }, forceMode: mode, scanInterval: 0.1)
        defer { _ = shield.release() }
        return shield.shieldMode == mode
    }

    /// A shield in the given mode, or nil (with an issue recorded: the test was enabled because
    /// it must run) where this machine cannot provide it.
    static func shield(_ mode: AppShield.Mode, grace: TimeInterval = 0.3, hits: HitRecorder, log: MemorySink = MemorySink()) -> AppShield? {
        if mode != .procScan, Privileged.unavailable(needs: []) != nil { return nil }
        let shield = AppShield(killGrace: grace, log: log, hits: hits.sink, forceMode: mode, scanInterval: 0.1)
        guard shield.shieldMode == mode else {
            Issue.record("\(mode.rawValue) is not available here: \(shield.modeReason ?? "?")")
            _ = shield.release()
            return nil
        }
        return shield
    }

    // MARK: fanotify

    @Test("E2: a blocked app's exec fails with EPERM and is a denied-launch hit; others run; unblock lets it run again", .enabled(if: AppShieldTests.can(.fanotify), AppShieldTests.needsMode))
    func deniedLaunch() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.fanotify, hits: hits) else { return }
        defer { _ = shield.release() }
        let s = try ShieldScratch()
        #expect(s.runsToCompletion(), "the copy runs before the block")

        #expect(shield.apply(blocked: [AppShieldTests.selection(apps: [s.app])]).isEmpty)
        #expect(shield.mode == "fanotify")
        #expect(shield.modeReason == nil)
        switch s.spawn(s.app, ["0"]) {
        case .success: Issue.record("the blocked app was launched")
        case .failure(let error): #expect(error.code == .EPERM || error.code == .EACCES)
        }
        #expect(Run.eventually(timeout: 3) { !hits.of(.deniedLaunch).isEmpty })
        let hit = try #require(hits.of(.deniedLaunch).first)
        #expect(hit.selection == "focus")
        #expect(hit.path == s.app)
        #expect(hit.app == s.appName)
        #expect(hit.pid != nil)

        // A burst: every exec answered at once, every denial reported.
        for _ in 0..<20 { #expect(throws: POSIXError.self) { try s.spawn(s.app, ["0"]).get() } }
        #expect(Run.eventually(timeout: 3) { hits.of(.deniedLaunch).count == 21 })

        let other = try s.spawn("/bin/true", []).get()
        #expect(s.wait(other, timeout: 5) == 0, "an unrelated binary still runs")

        #expect(shield.apply(blocked: []).isEmpty)
        #expect(s.runsToCompletion(), "the app runs again after the unblock")
        #expect(hits.of(.deniedLaunch).count == 21)
    }

    @Test("E2: a shield dropped without release() still stops its reader and removes its marks", .enabled(if: AppShieldTests.can(.fanotify), AppShieldTests.needsMode))
    func droppedShieldReleases() throws {
        let s = try ShieldScratch()
        do {
            let hits = HitRecorder()
            guard let shield = AppShieldTests.shield(.fanotify, hits: hits) else { return }
            #expect(shield.apply(blocked: [AppShieldTests.selection(apps: [s.app])]).isEmpty)
            #expect(throws: POSIXError.self) { try s.spawn(s.app, ["0"]).get() }
        }
        #expect(s.runsToCompletion())
    }

    @Test("E2: bare names are looked up in PATH (absolute entries only); the block follows the realpath through a symlink")
    func pathLookup() throws {
        let hits = HitRecorder()
        let s = try ShieldScratch()
        let bin = s.dir + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/focus-app", withDestinationPath: s.app)
        // Runs in any mode: unprivileged it checks resolution only.
        let shield = AppShield(killGrace: 0.3, log: MemorySink(), hits: hits.sink, path: "relative:\(bin):/usr/bin")
        defer { _ = shield.release() }
        #expect(shield.apply(blocked: [AppShieldTests.selection(apps: ["focus-app"])]).isEmpty)
        #expect(shield.blockedFiles == [ShieldScratch.fileID(s.app)!])
        #expect(shield.watchedDirectories.isSuperset(of: [bin, s.dir]))
        if shield.shieldMode == .fanotify {
            #expect(throws: POSIXError.self) { try s.spawn(bin + "/focus-app", ["0"]).get() }
            #expect(Run.eventually(timeout: 3) { hits.of(.deniedLaunch).first?.path == s.app })
            #expect(hits.of(.deniedLaunch).first?.app == "focus-app")
        }
    }

    @Test("E2: running instances get SIGTERM at block start, a killed hit each; one ignoring SIGTERM gets SIGKILL after KillGrace", .enabled(if: AppShieldTests.can(.fanotify), AppShieldTests.needsMode))
    func killsRunning() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.fanotify, grace: 0.4, hits: hits) else { return }
        defer { _ = shield.release() }
        try AppShieldTests.killCheck(shield, hits)
    }

    /// Shared by every mode: what happens at block start does not depend on how launches are caught.
    static func killCheck(_ shield: AppShield, _ hits: HitRecorder) throws {
        let s = try ShieldScratch()
        let polite = try s.spawn(s.app, ["30"]).get()
        let stubborn = try s.spawnIgnoringTERM(seconds: 30)
        #expect(ProcessKiller.executable(of: stubborn) == ShieldScratch.fileID(s.app))

        let started = Date()
        #expect(shield.apply(blocked: [selection(apps: [s.app])]).isEmpty)
        #expect(Date().timeIntervalSince(started) < 0.3, "apply() does not wait out the grace period")
        let killed = hits.of(.killed)
        #expect(Set(killed.compactMap(\.pid)) == [polite, stubborn])
        #expect(killed.allSatisfy { $0.selection == "focus" && $0.path == s.app && $0.app == s.appName })

        let politeStatus = try #require(s.wait(polite, timeout: 5))
        #expect(ShieldScratch.termSignal(politeStatus) == SIGTERM)
        let stubbornStatus = try #require(s.wait(stubborn, timeout: 5))
        #expect(ShieldScratch.termSignal(stubbornStatus) == SIGKILL)
        #expect(Date().timeIntervalSince(started) >= 0.35, "SIGKILL only after KillGrace")

        // Idempotent: the same set again starts no second round of kills.
        #expect(shield.apply(blocked: [selection(apps: [s.app])]).isEmpty)
        #expect(hits.of(.killed).count == 2)
    }

    @Test("E2: replacing the executable (new inode at the same path) is re-marked; exec stays denied", .enabled(if: AppShieldTests.can(.fanotify), AppShieldTests.needsMode))
    func replacedIsRemarked() throws {
        let hits = HitRecorder()
        let log = MemorySink()
        guard let shield = AppShieldTests.shield(.fanotify, hits: hits, log: log) else { return }
        defer { _ = shield.release() }
        let s = try ShieldScratch()
        #expect(shield.apply(blocked: [AppShieldTests.selection(apps: [s.app])]).isEmpty)
        let old = try #require(ShieldScratch.fileID(s.app))

        try s.replaceApp()
        let new = try #require(ShieldScratch.fileID(s.app))
        #expect(new != old)
        #expect(Run.eventually(timeout: 3) { shield.blockedFiles == [new] }, "the new inode is marked and the old one released")
        #expect(throws: POSIXError.self) { try s.spawn(s.app, ["0"]).get() }
        #expect(log.entries.contains { $0.message.contains("re-marked") })
    }

    @Test("E2: apply converges to exactly the set: twice is a no-op, removal unblocks, a missing app is no error and is picked up once installed", .enabled(if: AppShieldTests.can(.fanotify), AppShieldTests.needsMode))
    func converges() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.fanotify, hits: hits) else { return }
        defer { _ = shield.release() }
        let s = try ShieldScratch()
        let later = s.dir + "/blockd-test-later-\(UInt32.random(in: 0...UInt32.max))"
        let both = AppShieldTests.selection(apps: [s.app, later, "blockd-no-such-app-\(UInt32.random(in: 0...UInt32.max))"])

        #expect(shield.apply(blocked: [both]).isEmpty, "apps that are not installed are not failures")
        #expect(shield.apply(blocked: [both]).isEmpty)
        #expect(shield.blockedFiles == [ShieldScratch.fileID(s.app)!])

        // Installed while blocked: the directory watch resolves and marks it.
        try ShieldScratch.copySleep(to: later)
        #expect(Run.eventually(timeout: 3) { shield.blockedFiles.contains(ShieldScratch.fileID(later)!) })
        #expect(throws: POSIXError.self) { try s.spawn(later, ["0"]).get() }

        #expect(shield.apply(blocked: [AppShieldTests.selection(apps: [later])]).isEmpty)
        #expect(shield.blockedFiles == [ShieldScratch.fileID(later)!])
        #expect(s.runsToCompletion(), "removed from the set: runs again")

        #expect(shield.apply(blocked: [AppShieldTests.selection(apps: ["bin/relative"])]).map(\.selection) == ["focus"],
                "a relative path is refused, naming the selection")
        #expect(shield.release().isEmpty)
        #expect(shield.blockedFiles.isEmpty)
        #expect(shield.watchedDirectories.isEmpty)
        let pid = try s.spawn(later, ["0"]).get()
        #expect(s.wait(pid, timeout: 5) == 0, "release removes every mark")
    }

    @Test("E2: block and unblock cycles leak no file descriptors", .enabled(if: AppShieldTests.can(.fanotify), AppShieldTests.needsMode))
    func noFDLeak() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.fanotify, hits: hits) else { return }
        defer { _ = shield.release() }
        let s = try ShieldScratch()
        let openFDs = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        _ = shield.apply(blocked: [AppShieldTests.selection(apps: [s.app])])
        _ = shield.apply(blocked: [])
        let before = openFDs()
        for _ in 0..<30 {
            #expect(shield.apply(blocked: [AppShieldTests.selection(apps: [s.app, "blockd-no-such-app"])]).isEmpty)
            #expect(throws: POSIXError.self) { try s.spawn(s.app, ["0"]).get() }
            #expect(shield.apply(blocked: []).isEmpty)
        }
        // Other suites may open a few descriptors meanwhile; a leak would be 30 or more.
        #expect(openFDs() - before < 10)
    }

    // MARK: fallbacks

    @Test("E2 fallback: the proc connector kills a blocked app right after exec and reports it", .enabled(if: AppShieldTests.can(.procConnector), AppShieldTests.needsMode))
    func procConnector() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.procConnector, hits: hits) else { return }
        defer { _ = shield.release() }
        #expect(shield.mode == "proc-connector")
        #expect(shield.modeReason?.contains("fanotify") == true)
        try AppShieldTests.killedAfterLaunch(shield, hits, within: 2)
    }

    @Test("E2 fallback: the /proc scan kills a blocked app while something is blocked (unprivileged)", .enabled(if: AppShieldTests.can(.procScan), AppShieldTests.needsMode))
    func procScan() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.procScan, hits: hits) else { return }
        defer { _ = shield.release() }
        #expect(shield.mode == "proc-scan")
        #expect(shield.modeReason?.contains("proc-scan was forced") == true)
        try AppShieldTests.killedAfterLaunch(shield, hits, within: 2)
    }

    @Test("E2 fallback: block start stops running instances in proc-scan mode too (unprivileged)", .enabled(if: AppShieldTests.can(.procScan), AppShieldTests.needsMode))
    func procScanKillsRunning() throws {
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.procScan, grace: 0.4, hits: hits) else { return }
        defer { _ = shield.release() }
        try AppShieldTests.killCheck(shield, hits)
    }

    static func killedAfterLaunch(_ shield: AppShield, _ hits: HitRecorder, within timeout: TimeInterval) throws {
        let s = try ShieldScratch()
        #expect(shield.apply(blocked: [selection(apps: [s.app])]).isEmpty)
        let pid = try s.spawn(s.app, ["30"]).get()
        let status = try #require(s.wait(pid, timeout: timeout), "the blocked app was not stopped")
        #expect(ShieldScratch.termSignal(status) == SIGKILL)
        #expect(Run.eventually(timeout: 3) { hits.of(.killed).contains { $0.pid == pid } })
        #expect(hits.of(.killed).first?.path == s.app)

        #expect(shield.apply(blocked: []).isEmpty)
        #expect(s.runsToCompletion(), "after the unblock it runs to the end")
    }

    static let setpriv = "/usr/bin/setpriv"

    /// Runs for real as an unprivileged user: the tests' own user, or, when they run as root,
    /// the real blockd started as nobody under setpriv (changing the user drops every capability).
    @Test("E2: without CAP_SYS_ADMIN the shield falls back and says why in status (as root: blockd runs as nobody)",
          .enabled(if: Privileged.can(tools: Privileged.isRoot ? [AppShieldTests.setpriv] : []), Privileged.needsTools))
    func unprivilegedModeReason() throws {
        if Privileged.isRoot, Privileged.unavailable(tools: [AppShieldTests.setpriv]) != nil { return }
        let s = Sandbox()
        if Privileged.isRoot {
            // nobody must reach the sandbox: its directories and hosts file are opened up.
            for path in [s.dir, s.configDir, s.configDir + "/selections.d", s.configDir + "/schedules.d"] { chmod(path, 0o777) }
            chmod(s.hostsPath, 0o666)
            try s.start(wrapper: [AppShieldTests.setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        } else {
            try s.start()
        }
        defer { s.stop() }
        let pid = try #require(s.daemon?.processIdentifier)
        let uidLine = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8).split(separator: "\n").first { $0.hasPrefix("Uid:") }
        #expect(uidLine?.split(whereSeparator: \.isWhitespace).dropFirst().allSatisfy { $0 != "0" } == true, "blockd runs without root: \(uidLine ?? "-")")
        let enforcement = try s.status()["enforcement"]
        #expect(enforcement?["apps"]?.string != "fanotify")
        #expect(enforcement?["appsReason"]?.string?.contains("fanotify unavailable") == true, "\(String(describing: enforcement))")
    }
}
