import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// Apps and usage per user on real processes, with two throwaway users created and removed
/// here. Safe on a shared machine like the other shield tests: the only inode marked is the
/// test's own temp copy of /bin/sleep, the only processes signalled are the test's children
/// running it, and the users are removed, pass or fail.
@Suite("Per-user apps and usage on real processes", .serialized)
struct UserAppProcessTests {
    static let needs: Comment = "needs root (useradd, setpriv, fanotify); runs as root with BLOCKD_PRIVILEGED_TESTS=1"
    static let tools = ["/usr/sbin/useradd", "/usr/sbin/userdel", "/usr/bin/setpriv"]

    /// The scratch copy runnable by anyone, the users, and the kid-only block of it.
    static func setUp() throws -> (ShieldScratch, ThrowawayUsers, Selection)? {
        if Privileged.unavailable(needs: tools) != nil { return nil }
        let s = try ShieldScratch()
        s.openToEveryone()
        let users = try ThrowawayUsers()
        var games = Selection(name: "games", apps: [s.app])
        games.users = [users.kid.uid]
        return (s, users, games)
    }

    /// Whether the app, run as this, got to run (setpriv exits 0 after `sleep 0`; a denied exec makes it fail).
    static func ran(_ s: ShieldScratch, _ launch: Result<pid_t, POSIXError>) -> Bool {
        guard case .success(let pid) = launch, let status = s.wait(pid, timeout: 5) else { return false }
        return status == 0
    }

    @Test("the same copied binary is denied for the user in scope, also under sudo, and runs for another user and for root", .enabled(if: Privileged.can(needs: tools), needs))
    func deniedPerUser() throws {
        guard let setup = try Self.setUp() else { return }
        let (s, users, games) = setup
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.fanotify, hits: hits) else { return }
        defer { _ = shield.release() }
        #expect(Self.ran(s, s.spawn(as: users.kid, ["0"])), "the kid runs it before the block")

        #expect(shield.apply(blocked: [games]).isEmpty)
        #expect(!Self.ran(s, s.spawn(as: users.kid, ["0"])), "denied for the kid")
        #expect(Run.eventually(timeout: 3) { hits.of(.deniedLaunch).count == 1 })
        #expect(hits.of(.deniedLaunch).first?.selection == "games")
        #expect(!Self.ran(s, s.spawnSudo(loginOf: users.kid, ["0"])), "denied for the kid under sudo (real uid root, login uid the kid's)")
        #expect(Self.ran(s, s.spawn(as: users.other, ["0"])), "another user runs the same file")
        #expect(Self.ran(s, s.spawnSudo(loginOf: users.other, ["0"])), "another user's sudo runs it")
        #expect(s.runsToCompletion(), "root (no login uid) runs it")
        #expect(Run.eventually(timeout: 3) { hits.of(.deniedLaunch).count == 2 })
        #expect(hits.of(.deniedLaunch).count == 2, "exactly the kid's two launches were denied")
        #expect(hits.of(.deniedLaunch).map(\.uid) == [users.kid.uid, users.kid.uid], "both hits are the kid's to be told of, the sudo one too (U3)")
    }

    @Test("at block start only the processes of users in scope stop; another user's keeps running", .enabled(if: Privileged.can(needs: tools), needs))
    func stopsOnlyInScope() throws {
        guard let setup = try Self.setUp() else { return }
        let (s, users) = (setup.0, setup.1)
        var games = setup.2
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.fanotify, grace: 0.2, hits: hits) else { return }
        defer { _ = shield.release() }
        let kids = try s.spawn(as: users.kid, ["30"]).get()
        let others = try s.spawn(as: users.other, ["30"]).get()
        #expect(s.waitForApp(kids) && s.waitForApp(others))

        // The barrier is apply itself: it scans the running processes and signals those in scope
        // before it returns, and each signal is a hit recorded first (ProcessKiller.stop).
        #expect(shield.apply(blocked: [games]).isEmpty)
        #expect(hits.of(.killed).compactMap(\.pid) == [kids], "only the kid's process was signalled")
        let status = try #require(s.wait(kids, timeout: 5), "the kid's process was not stopped")
        #expect(ShieldScratch.termSignal(status) == SIGTERM)
        #expect(hits.of(.killed).map(\.uid) == [users.kid.uid], "the stopped app is the kid's to be told of (U3)")
        #expect(s.stillRuns(others), "the other user's process keeps running")

        // The block widened to the other user too: now theirs stops as well.
        games.users = [users.kid.uid, users.other.uid]
        #expect(shield.apply(blocked: [games]).isEmpty)
        #expect(s.wait(others, timeout: 5) != nil, "a scope that grows stops the newly covered user's process")
    }

    @Test("without fanotify (the /proc scan) a launch is killed only for the user in scope", .enabled(if: Privileged.can(needs: tools), needs))
    func scanPerUser() throws {
        guard let setup = try Self.setUp() else { return }
        let (s, users, games) = setup
        let hits = HitRecorder()
        guard let shield = AppShieldTests.shield(.procScan, hits: hits) else { return }
        defer { _ = shield.release() }
        #expect(shield.apply(blocked: [games]).isEmpty)
        let others = try s.spawn(as: users.other, ["30"]).get()
        let kids = try s.spawn(as: users.kid, ["30"]).get()
        #expect(s.wait(kids, timeout: 5) != nil, "the scan kills the kid's launch")
        // The barrier: the scan that killed the kid's launch listed every process running then,
        // the other user's (started first) too, and has run to its end on the shield's queue.
        shield.queue.sync {}
        #expect(hits.of(.killed).compactMap(\.pid) == [kids], "only the kid's launch was stopped")
        #expect(s.stillRuns(others), "the other user's launch keeps running")
    }

    @Test("§9: a limit with users counts only their processes", .enabled(if: Privileged.can(needs: tools), needs),
          arguments: [false, true])
    func usagePerUser(forceScan: Bool) throws {
        guard let setup = try Self.setUp() else { return }
        let (s, users) = (setup.0, setup.1)
        let reports = UsageMonitorTests.Reports()
        let monitor = UsageMonitor(report: { reports.add($0) }, path: "/usr/bin:/bin", forceScan: forceScan, scanInterval: 0.1)
        monitor.follow(["games": LimitedApps(apps: [s.app], users: [users.kid.uid]), "all": LimitedApps(apps: [s.app])])
        let others = try s.spawn(as: users.other, ["30"]).get()
        #expect(Run.eventually(timeout: 5) { reports.last == ["all"] }, "the other user's process counts for the limit for everyone only")
        let kids = try s.spawn(as: users.kid, ["30"]).get()
        #expect(Run.eventually(timeout: 5) { reports.last == ["all", "games"] }, "the kid's process counts for the kid's limit")
        // §9: each person's own: the limit for everyone counts the other user and the kid apart.
        // (As the person each stands for: their login uid if this test runs in a login session, else their own.)
        let person = { (pid: pid_t, user: ThrowawayUsers.User) in ProcessUsers.of(pid)?.login ?? user.uid }
        #expect(reports.lastUses == [LimitUse(limit: "all", uid: person(others, users.other)), LimitUse(limit: "all", uid: person(kids, users.kid)),
                                     LimitUse(limit: "games", uid: users.kid.uid)], "\(reports.lastUses ?? [])")
        kill(kids, SIGTERM)
        _ = s.wait(kids, timeout: 5)
        #expect(Run.eventually(timeout: 5) { reports.last == ["all"] }, "with only the other user's process left, the kid's limit stops counting")
        #expect(s.stillRuns(others))
        withExtendedLifetime(monitor) {}
    }
}
