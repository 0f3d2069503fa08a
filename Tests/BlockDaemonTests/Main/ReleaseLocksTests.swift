import BlockCore
import Foundation
import Testing
import ZoneInfo
@testable import BlockDaemon
import BlockTestSupport
import BlockTestTools

/// E4: what `blockd --release` says of the `--lock` blocks in its way, judged as `blockc stop`
/// judges them for root (A1): a member's lock root may stop, so `--force-members` releases past
/// it; root's or an administrator's binds root too.
@Suite("E4: blockd --release and the locks in its way")
struct ReleaseLocksTests {
    static let now = Date(timeIntervalSince1970: 1_764_640_000)
    static let clock = LocalClock(SystemTimeZone.named("Europe/Berlin")!)
    static let users = UsersTable.holding(users: ["kid": 1000, "parent": 1001], admins: [1001])

    static func block(_ name: String, uid: UInt32, locked: Bool = true, ends: TimeInterval = 3600) -> StoredActivity {
        .block(Block(name: name, selections: ["youtube"], start: now - 60, end: now + ends, locked: locked, origin: .client(uid: uid)))
    }

    static func state(_ activities: [StoredActivity]) -> DaemonState {
        var s = DaemonState()
        s.activities = activities
        return s
    }

    @Test("E4: only locked blocks still running stand in the way; a member's lock is root's to stop, root's and an administrator's are not")
    func held() {
        let s = Self.state([Self.block("homework", uid: 1000), Self.block("study", uid: 0), Self.block("focus", uid: 1001),
                            Self.block("open", uid: 1000, locked: false), Self.block("over", uid: 1000, ends: -1)])
        let held = ReleaseLocks.held(in: s, now: Self.now, users: Self.users)
        #expect(held == [
            .init(name: "homework", owner: "kid", end: Self.now + 3600, member: true),
            .init(name: "study", owner: "root", end: Self.now + 3600, member: false),
            .init(name: "focus", owner: "parent", end: Self.now + 3600, member: false),
        ])
    }

    @Test("E4: a member's lock refuses --release with the block, its owner and end, and both ways: blockc stop, or --force-members")
    func memberLockRefuses() {
        let held = ReleaseLocks.held(in: Self.state([Self.block("homework", uid: 1000)]), now: Self.now, users: Self.users)
        let (lines, proceed) = ReleaseLocks.judge(held, forceMembers: false, clock: Self.clock, now: Self.now)
        #expect(!proceed)
        #expect(lines == [
            "refusing to release: the block 'homework' of kid was started with --lock and lasts until 03:46:40",
            "root or an administrator may stop a member's locked block: start blockd, run 'blockc stop homework', stop blockd, then run blockd --release again; or run 'blockd --release --force-members' to release despite members' locks",
        ])
    }

    @Test("E4: --force-members releases past members' locks and says which; root's or an administrator's lock still refuses")
    func forceMembers() {
        let kid = ReleaseLocks.held(in: Self.state([Self.block("homework", uid: 1000)]), now: Self.now, users: Self.users)
        let (lines, proceed) = ReleaseLocks.judge(kid, forceMembers: true, clock: Self.clock, now: Self.now)
        #expect(proceed)
        #expect(lines == ["releasing despite the --lock of the block 'homework' of kid (until 03:46:40): --force-members; it stays registered, and blockd enforces it again when it starts"])
        for owner: UInt32 in [0, 1001] {
            let held = ReleaseLocks.held(in: Self.state([Self.block("homework", uid: 1000), Self.block("study", uid: owner)]), now: Self.now, users: Self.users)
            let (refusal, go) = ReleaseLocks.judge(held, forceMembers: true, clock: Self.clock, now: Self.now)
            #expect(!go, "a lock set by uid \(owner) binds root too")
            #expect(refusal.count == 3 && refusal[1].hasSuffix("; a lock that root or an administrator set binds root too, so it must end first"), "\(refusal)")
            #expect(refusal[2].hasSuffix("--force-members' to release despite members' locks (it still waits for 'study')"), "\(refusal)")
        }
        #expect(ReleaseLocks.judge([], forceMembers: false, clock: Self.clock, now: Self.now) == ([], true))
    }

    @Test("E4: --release refused by a member's --lock names the block, its owner and both ways past it; --force-members releases, never past root's lock")
    func releaseForceMembers() throws {
        let s = Sandbox()
        let original = try #require(FileManager.default.contents(atPath: s.hostsPath))
        try s.start()
        #expect(try s.blockc(["start", "--for", "1h", "--lock", "youtube"]).status == 0)
        s.stop()
        let blocked = try #require(FileManager.default.contents(atPath: s.hostsPath))
        func release(_ extra: [String], _ log: String) throws -> (Int32, String) {
            let p = try s.launch(Repo.binDir + "/blockd", s.daemonArgs() + ["--release"] + extra, output: s.dir + "/" + log)
            p.waitUntilExit()
            return (p.terminationStatus, (try? String(contentsOfFile: s.dir + "/" + log, encoding: .utf8)) ?? "")
        }
        // Root's own lock: --force-members does not release past it.
        let (rootStatus, rootLog) = try release(["--force-members"], "root.log")
        #expect(rootStatus == 1 && rootLog.contains("the block 'youtube' of root was started with --lock") && rootLog.contains("binds root too"), "\(rootLog)")
        #expect(FileManager.default.contents(atPath: s.hostsPath) == blocked)
        // The same block as a member's (nobody, in neither group): refused, with both ways past it.
        let store = StateStore(directory: s.stateDir)
        guard case .loaded(var state) = store.load(now: Date()) else { Issue.record("no state"); return }
        state.activities = state.activities.map { a in
            guard case .block(var b) = a else { return a }
            b.origin = .client(uid: 65534)
            return .block(b)
        }
        try store.save(state)
        let (refused, refusal) = try release([], "member.log")
        #expect(refused == 1, "\(refusal)")
        #expect(refusal.contains("refusing to release: the block 'youtube' of nobody was started with --lock and lasts until "), "\(refusal)")
        #expect(refusal.contains("run 'blockc stop youtube'") && refusal.contains("'blockd --release --force-members'"), "\(refusal)")
        #expect(FileManager.default.contents(atPath: s.hostsPath) == blocked)
        let (forced, note) = try release(["--force-members"], "forced.log")
        #expect(forced == 0, "\(note)")
        #expect(note.contains("releasing despite the --lock of the block 'youtube' of nobody"), "\(note)")
        #expect(FileManager.default.contents(atPath: s.hostsPath) == original, "every byte of the hosts file back")
        guard case .loaded(let after) = store.load(now: Date()) else { Issue.record("no state"); return }
        #expect(after.activities.count == 1, "the block stays registered")
    }
}
