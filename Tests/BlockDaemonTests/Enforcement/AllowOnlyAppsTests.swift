import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// W2's desktop-application part: temp directories hold the `.desktop` files, pointing at the
/// test's own copies of /bin/sleep, so nothing reads the machine's applications, and the only
/// inodes a shield marks and the only processes it can stop are the test's own.
final class DesktopScratch {
    let shield: ShieldScratch
    var root: String { shield.dir }
    let dirs: DesktopDirs

    /// Homes by uid, for per-user windows (the passwd lookup, injected).
    init(homes: [UInt32: String] = [:]) throws {
        shield = try ShieldScratch()
        shield.openToEveryone()
        let root = shield.dir
        for dir in ["bin", "apps", "autostart", "flatpak"] { mkdir(root + "/" + dir, 0o755) }
        let resolved = homes.mapValues { root + "/" + $0 }
        for home in resolved.values { mkdir(home, 0o755) }
        dirs = DesktopDirs(applications: [root + "/apps"], autostart: [root + "/autostart"], flatpakApps: root + "/flatpak",
                           userApplications: [".local/share/applications"], userAutostart: [".config/autostart"],
                           userFlatpakApps: ".local/share/flatpak/app", home: { resolved[$0] })
    }

    func home(_ name: String) -> String { root + "/" + name }

    /// A copy of /bin/sleep at `bin/NAME` (or the absolute `name`), runnable by anyone.
    @discardableResult
    func binary(_ name: String) throws -> String {
        let path = name.hasPrefix("/") ? name : root + "/bin/" + name
        try ShieldScratch.copySleep(to: path)
        return path
    }

    /// Writes `text` at `path` (relative to the scratch root), creating directories.
    func file(_ path: String, _ text: String) throws {
        let full = root + "/" + path
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: full, atomically: false, encoding: .utf8)
    }

    func desktop(_ path: String, name: String, exec: String, extra: String = "") throws {
        try file(path, "[Desktop Entry]\nType=Application\nName=\(name)\nExec=\(exec)\n\(extra)")
    }

    /// The allow-only selection allowing `apps` (as `only:editor` after the catalog).
    static func window(allowing apps: [String], users: [UInt32]? = nil) -> Selection {
        var s = Selection(name: "only:editor")
        s.allowed = [Selection(name: "editor", apps: apps)]
        s.users = users
        return s
    }

    /// Runs `path` as `uid` (setpriv; no passwd entry needed) with `args`.
    func spawn(_ path: String, as uid: UInt32, _ args: [String]) -> Result<pid_t, POSIXError> {
        shield.spawn("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "--", path] + args)
    }

    /// Whether `path` got to run to completion as `uid` (a denied exec makes setpriv fail).
    func runs(_ path: String, as uid: UInt32) -> Bool {
        guard case .success(let pid) = spawn(path, as: uid, ["0"]), let status = shield.wait(pid, timeout: 5) else { return false }
        return status == 0
    }
}

@Suite("W2: desktop applications during allow-only windows")
struct AllowOnlyAppsTests {
    static let kid: UInt32 = 59_871, other: UInt32 = 59_872

    /// The scratch set-up most cases share: a game, the allowed editor (also under another
    /// name, a symlink), a NoDisplay helper, a terminal tool, a session component named by
    /// autostart, a shell launcher and a flatpak app.
    static func machine(homes: [UInt32: String] = [:]) throws -> (DesktopScratch, [String: String]) {
        let d = try DesktopScratch(homes: homes)
        var bin: [String: String] = [:]
        for name in ["game", "editor", "helper", "tool", "panel"] { bin[name] = try d.binary(name) }
        symlink(bin["editor"]!, d.root + "/bin/editor-link")
        try d.desktop("apps/game.desktop", name: "Test Game", exec: "\"\(bin["game"]!)\" %U")
        try d.desktop("apps/editor.desktop", name: "Editor", exec: "env LANG=C \(d.root)/bin/editor-link %F")
        try d.desktop("apps/helper.desktop", name: "Helper", exec: bin["helper"]!, extra: "NoDisplay=true")
        try d.desktop("apps/tool.desktop", name: "Tool", exec: bin["tool"]!, extra: "Terminal=true")
        try d.desktop("apps/panel.desktop", name: "Panel", exec: bin["panel"]!)
        try d.desktop("autostart/panel.desktop", name: "Panel", exec: bin["panel"]!, extra: "NoDisplay=true")
        try d.desktop("apps/sub/shell.desktop", name: "Shell thing", exec: "/bin/sh -c \"echo %u\"")
        try d.file("flatpak/org.test.Kart/x86_64/stable/abc/metadata", "[Application]\nname=org.test.Kart\ncommand=kart\n")
        try FileManager.default.createDirectory(atPath: d.root + "/flatpak/org.test.Kart/x86_64/stable/abc/files/bin", withIntermediateDirectories: true)
        bin["kart"] = try d.binary(d.root + "/flatpak/org.test.Kart/x86_64/stable/abc/files/bin/kart")
        symlink("x86_64/stable", d.root + "/flatpak/org.test.Kart/current")
        symlink("abc", d.root + "/flatpak/org.test.Kart/x86_64/stable/active")
        try d.desktop("apps/org.test.Kart.desktop", name: "Kart", exec: "/usr/bin/flatpak run --branch=stable --command=kart org.test.Kart @@u %U @@")
        return (d, bin)
    }

    /// The targets of `window`, by the executable's file name.
    static func targets(_ d: DesktopScratch, _ window: Selection) -> [String: ShieldTarget] {
        let apps = DesktopApps(dirs: d.dirs, path: d.root + "/bin")
        let allowed = Set((window.allowed ?? []).flatMap(\.apps).compactMap { ShieldScratch.fileID($0) })
        let (found, _) = apps.targets(for: window, allowed: allowed)
        defer { found.forEach { close($0.fd) } }
        var byName: [String: ShieldTarget] = [:]
        for app in found {
            let name = Path.lastComponent(app.target.path)
            #expect(byName[name] == nil, "one target per file and scope: \(name)")
            byName[name] = app.target
        }
        return byName
    }

    @Test("W2: during a window for everyone the desktop applications are targets for login users, but the allowed app (by inode), NoDisplay, Terminal, autostart and launchers")
    func everyoneTargets() throws {
        let (d, bin) = try Self.machine()
        let targets = Self.targets(d, DesktopScratch.window(allowing: [bin["editor"]!]))
        #expect(Set(targets.keys) == ["game", "kart"], "\(targets.keys.sorted())")
        #expect(targets["game"]?.app == "Test Game" && targets["game"]?.selection == "only:editor", "a hit names the app and the window")
        #expect(targets["kart"]?.path == AppResolver.realpath(bin["kart"]!), "flatpak run resolves into the app's files")
        #expect(targets.values.allSatisfy { $0.users == .loginUsers })
    }

    @Test("W2: an app the window does not allow is a target, found through env and a symlink")
    func editorNotAllowed() throws {
        let (d, bin) = try Self.machine()
        let targets = Self.targets(d, DesktopScratch.window(allowing: [bin["game"]!]))
        #expect(Set(targets.keys) == ["editor", "kart"], "env is unwrapped and the symlink resolved: \(targets.keys.sorted())")
    }

    @Test("W2: a per-user window reads that user's own applications for that user only; their autostart spares only their own")
    func perUserTargets() throws {
        let (d, bin) = try Self.machine(homes: [Self.kid: "kid", Self.other: "other"])
        let own = try d.binary("kid-game")
        try d.desktop("kid/.local/share/applications/mine.desktop", name: "Mine", exec: own)
        try d.desktop("kid/.local/share/applications/game.desktop", name: "Game", exec: bin["game"]!, extra: "Hidden=true")
        // The kid's autostart names the system game and a program of their own: only the latter is spared.
        let started = try d.binary("kid-tray")
        try d.desktop("kid/.local/share/applications/tray.desktop", name: "Tray", exec: started)
        try d.desktop("kid/.config/autostart/game.desktop", name: "Game", exec: bin["game"]!)
        try d.desktop("kid/.config/autostart/tray.desktop", name: "Tray", exec: started)
        let targets = Self.targets(d, DesktopScratch.window(allowing: [bin["editor"]!], users: [Self.kid, Self.other]))
        #expect(Set(targets.keys) == ["game", "kart", "kid-game"], "\(targets.keys.sorted())")
        #expect(targets["game"]?.users == .users([Self.kid, Self.other]) && targets["kart"]?.users == .users([Self.kid, Self.other]))
        #expect(targets["kid-game"]?.users == .users([Self.kid]), "the kid's own application is denied for the kid alone")
        #expect(targets["kid-game"]?.app == "Mine")
    }

    @Test("W2: a user's directory is read without following links out of it; oversized and garbage files are skipped")
    func hostileHome() throws {
        let (d, bin) = try Self.machine(homes: [Self.kid: "kid"])
        // A link to a directory the kid does not own, and a link to a file: neither is read.
        try d.desktop("elsewhere/applications/x.desktop", name: "X", exec: bin["helper"]!)
        try FileManager.default.createDirectory(atPath: d.home("kid") + "/.local/share", withIntermediateDirectories: true)
        symlink(d.root + "/elsewhere/applications", d.home("kid") + "/.local/share/applications")
        let targets = Self.targets(d, DesktopScratch.window(allowing: [], users: [Self.kid]))
        #expect(!targets.keys.contains { $0.hasPrefix("helper") }, "a linked applications directory is not followed")

        try FileManager.default.removeItem(atPath: d.home("kid") + "/.local/share/applications")
        try d.desktop("kid/.local/share/applications/big.desktop", name: "Big", exec: bin["helper"]!, extra: String(repeating: "#\n", count: 40_000))
        try d.file("kid/.local/share/applications/junk.desktop", "\u{FF}\u{0}[Desktop Entry\nExec=\"\n=\n[")
        symlink(d.root + "/elsewhere/applications/x.desktop", d.home("kid") + "/.local/share/applications/link.desktop")
        // A flatpak whose `current` points out of the user's flatpak directory is not resolved.
        try FileManager.default.createDirectory(atPath: d.root + "/escape/x/files/bin", withIntermediateDirectories: true)
        try d.binary(d.root + "/escape/x/files/bin/tool")
        symlink("x", d.root + "/escape/active")
        try FileManager.default.createDirectory(atPath: d.home("kid") + "/.local/share/flatpak/app/org.evil.App", withIntermediateDirectories: true)
        symlink(d.root + "/escape", d.home("kid") + "/.local/share/flatpak/app/org.evil.App/current")
        try d.desktop("kid/.local/share/applications/evil.desktop", name: "Evil", exec: "flatpak run --command=../helper org.evil.App")
        try d.desktop("kid/.local/share/applications/evil2.desktop", name: "Evil", exec: "flatpak run --command=tool org.evil.App")
        // A flatpak directory that is itself a link to another app's files is not followed either.
        try FileManager.default.createDirectory(atPath: d.home("kid") + "/.local/share/flatpak/app", withIntermediateDirectories: true)
        symlink(d.root + "/flatpak/org.test.Kart", d.home("kid") + "/.local/share/flatpak/app/org.evil.Linked")
        try FileManager.default.createDirectory(atPath: d.root + "/flatpak/org.test.Kart/x86_64/stable/abc/files/bin", withIntermediateDirectories: true)
        try d.desktop("kid/.local/share/applications/linked.desktop", name: "Linked", exec: "flatpak run --command=tool org.evil.Linked")
        try d.binary(d.root + "/flatpak/org.test.Kart/x86_64/stable/abc/files/bin/tool")
        let again = Self.targets(d, DesktopScratch.window(allowing: [], users: [Self.kid]))
        #expect(!again.keys.contains { $0.hasPrefix("helper") || $0.hasPrefix("tool") }, "\(again.keys.sorted())")
        #expect(again.keys.contains { $0.hasPrefix("game") }, "the system's applications still count")
    }

    @Test("W2: a window for everyone holds for login uids (either uid), never root or system services", arguments: [
        (0, nil, false), (0, 0, false), (999, nil, false), (1000, nil, true), (60000, nil, true), (60001, nil, false),
        (0, 1000, true),   // sudo by a login user
        (1000, 0, true),
    ] as [(UInt32, UInt32?, Bool)])
    func loginScope(real: UInt32, login: UInt32?, denied: Bool) {
        let target = ShieldTarget(selection: "only:editor", path: "/x", app: "x", users: .loginUsers)
        #expect((ShieldTarget.denying([target]) { ProcessUsers(real: real, login: login) } != nil) == denied)
    }

    @Test("W2, §7: with AppShield=no an allow-only window's desktop applications are reported as the part left off")
    func shieldOff() {
        let shield = AppShield(killGrace: 1, log: MemorySink(), hits: { _ in }, enabled: false, desktop: DesktopDirs(
            applications: [], autostart: [], flatpakApps: "/nonexistent", userApplications: [], userAutostart: [], userFlatpakApps: "x", home: { _ in nil }))
        let report = shield.enforce(blocked: [DesktopScratch.window(allowing: [])])
        #expect(report.partsOff["only:editor"]?[.apps]?.contains("desktop applications are not denied") == true, "\(report)")
        #expect(report.notEnforced.isEmpty, "the core decides from every part whether the window is enforced at all")
        var nobody = DesktopScratch.window(allowing: [])
        nobody.users = []
        #expect(shield.enforce(blocked: [nobody]).partsOff.isEmpty, "a window for nobody claims nothing")
    }
}

/// The same on real processes, through fanotify. The uids are numbers no account needs to
/// exist for (setpriv runs the copies as them); root only.
@Suite("W2: desktop applications denied on real processes", .serialized)
struct AllowOnlyAppsProcessTests {
    static let needs: Comment = "needs root (fanotify, setpriv); runs as root with BLOCKD_PRIVILEGED_TESTS=1"
    static let tools = ["/usr/bin/setpriv"]
    static let (kid, other, service): (UInt32, UInt32, UInt32) = (AllowOnlyAppsTests.kid, AllowOnlyAppsTests.other, 497)

    /// The scratch machine (plus the kid's own app with `mine`), its hits, and a fanotify shield
    /// reading only its directories; nil (with an issue when it must run) where that cannot be.
    static func setUp(mine: Bool = false) throws -> (DesktopScratch, [String: String], HitRecorder, AppShield)? {
        if Privileged.unavailable(needs: tools) != nil { return nil }
        var (d, bin) = try AllowOnlyAppsTests.machine(homes: mine ? [kid: "kid"] : [:])
        if mine {
            bin["mine"] = try d.binary("kid-game")
            try d.desktop("kid/.local/share/applications/mine.desktop", name: "Mine", exec: bin["mine"]!)
        }
        let hits = HitRecorder()
        let shield = AppShield(killGrace: 0.3, log: MemorySink(), hits: hits.sink, path: "/usr/bin:/bin", forceMode: .fanotify,
                               scanInterval: 0.1, desktop: d.dirs)
        guard shield.shieldMode == .fanotify else {
            Issue.record("fanotify is not available here: \(shield.modeReason ?? "?")")
            _ = shield.release()
            return nil
        }
        return (d, bin, hits, shield)
    }

    @Test("W2: during a window for everyone a login user cannot launch a desktop app (the hit names it); the allowed app, helpers, session components, root and services run; after the window it runs again", .enabled(if: Privileged.can(needs: tools), needs))
    func everyone() throws {
        guard let (d, bin, hits, shield) = try Self.setUp() else { return }
        defer { _ = shield.release() }
        #expect(d.runs(bin["game"]!, as: Self.kid), "the game runs before the window")

        #expect(shield.apply(blocked: [DesktopScratch.window(allowing: [bin["editor"]!])]).isEmpty)
        #expect(!d.runs(bin["game"]!, as: Self.kid), "denied for a login user")
        #expect(!d.runs(bin["kart"]!, as: Self.kid), "the flatpak app's command is denied too")
        #expect(Run.eventually(timeout: 3) { hits.of(.deniedLaunch).count == 2 })
        let hit = try #require(hits.of(.deniedLaunch).first)
        #expect(hit.app == "Test Game" && hit.selection == "only:editor" && hit.uid == Self.kid, "\(hit)")
        for name in ["editor", "editor-link", "helper", "tool", "panel"] {
            #expect(d.runs(d.root + "/bin/" + name, as: Self.kid), "\(name) still runs for a login user")
        }
        #expect(d.runs(bin["game"]!, as: Self.service), "a system service's uid runs it")
        let me = try #require(ProcessUsers.of(getpid()))
        if !AllowOnly.loginUsers.contains(me.login ?? 0) { #expect(d.shield.runsToCompletion(path: bin["game"]!), "root runs it") }
        #expect(hits.of(.deniedLaunch).count == 2, "nothing else was denied")

        #expect(shield.apply(blocked: []).isEmpty)
        #expect(d.runs(bin["game"]!, as: Self.kid), "the window ended: it runs again")
    }

    @Test("W2: at a window's start a login user's running desktop app is stopped and named; a service's instance keeps running", .enabled(if: Privileged.can(needs: tools), needs))
    func stopsRunning() throws {
        guard let (d, bin, hits, shield) = try Self.setUp() else { return }
        defer { _ = shield.release() }
        let kids = try d.spawn(bin["game"]!, as: Self.kid, ["30"]).get()
        let services = try d.spawn(bin["game"]!, as: Self.service, ["30"]).get()
        let editor = try d.spawn(bin["editor"]!, as: Self.kid, ["30"]).get()
        let id = ShieldScratch.fileID(bin["game"]!)
        #expect(Run.eventually(timeout: 3) { ProcessKiller.executable(of: kids) == id && ProcessKiller.executable(of: services) == id })

        // The barrier is apply itself: it signals what the window stops before it returns, each
        // signal a hit recorded first (ProcessKiller.stop); the service's and the editor's are not.
        #expect(shield.apply(blocked: [DesktopScratch.window(allowing: [bin["editor"]!])]).isEmpty)
        #expect(hits.of(.killed).map(\.app) == ["Test Game"] && hits.of(.killed).compactMap(\.pid) == [kids])
        let status = try #require(d.shield.wait(kids, timeout: 5), "the login user's game was not stopped")
        #expect(ShieldScratch.termSignal(status) == SIGTERM)
        #expect(d.shield.stillRuns(services), "the service's instance keeps running")
        #expect(d.shield.stillRuns(editor), "the allowed editor keeps running")
    }

    @Test("W2: an application installed during a window is denied at once: the applications directory is watched", .enabled(if: Privileged.can(needs: tools), needs))
    func installedDuring() throws {
        guard let (d, bin, _, shield) = try Self.setUp() else { return }
        defer { _ = shield.release() }
        let late = try d.binary("late")
        #expect(shield.apply(blocked: [DesktopScratch.window(allowing: [bin["editor"]!])]).isEmpty)
        #expect(d.runs(late, as: Self.kid), "no desktop file names it yet")
        #expect(shield.watchedDirectories.contains(d.root + "/apps"))
        try d.desktop("apps/late.desktop", name: "Late", exec: late)
        let id = try #require(ShieldScratch.fileID(late))
        #expect(Run.eventually(timeout: 3) { shield.blockedFiles.contains(id) }, "re-marked after the directory changed")
        #expect(!d.runs(late, as: Self.kid), "denied without another apply")
    }

    @Test("W2: a per-user window denies the system's and the user's own desktop apps for that uid only", .enabled(if: Privileged.can(needs: tools), needs))
    func perUser() throws {
        guard let (d, bin, hits, shield) = try Self.setUp(mine: true) else { return }
        let own = bin["mine"]!
        defer { _ = shield.release() }
        #expect(shield.apply(blocked: [DesktopScratch.window(allowing: [bin["editor"]!], users: [Self.kid])]).isEmpty)
        #expect(!d.runs(bin["game"]!, as: Self.kid), "the system's game is denied for the kid")
        #expect(!d.runs(own, as: Self.kid), "the kid's own app is denied for the kid")
        #expect(d.runs(bin["game"]!, as: Self.other) && d.runs(own, as: Self.other), "another login user runs both")
        #expect(d.runs(bin["editor"]!, as: Self.kid), "the allowed editor runs for the kid")
        #expect(Run.eventually(timeout: 3) { hits.of(.deniedLaunch).count == 2 })
        #expect(Set(hits.of(.deniedLaunch).compactMap(\.app)) == ["Test Game", "Mine"])
        #expect(Set(hits.of(.deniedLaunch).compactMap(\.uid)) == [Self.kid])
    }
}

extension AllowOnlyAppsTests {
    @Test("W2: the journal's sentence for a hit reads the window as people do; the field keeps the name")
    func hitSentence() {
        let hit = ShieldHit(kind: .deniedLaunch, selection: "only:editor,school", path: "/usr/games/chess", app: "Chess", pid: 7)
        #expect(Report.message(hit) == "Denied launch of Chess (/usr/games/chess): everything but editor, school is blocked")
        var killed = hit
        killed.kind = .killed
        #expect(Report.message(killed) == "Stopped Chess (/usr/games/chess, pid 7): everything but editor, school is blocked")
        #expect(Report.message(ShieldHit(kind: .deniedLaunch, selection: "games", path: "/usr/games/chess")) == "Denied launch of chess (/usr/games/chess): games is blocked")
    }

    @Test("W2: blockd raises its soft descriptor limit to the hard one (one descriptor per denied file)")
    func descriptorLimit() {
        AppShield.raiseDescriptorLimit()
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        #expect(limit.rlim_cur == limit.rlim_max)
    }
    @Test("W2: under PolicyRoot= (a sandboxed blockd) the desktop directories and the homes are read under that root")
    func underRoot() {
        let d = DesktopDirs.standard.under("/tmp/sandbox/root/")
        #expect(d.applications == ["/tmp/sandbox/root/usr/share/applications", "/tmp/sandbox/root/usr/local/share/applications",
                                   "/tmp/sandbox/root/var/lib/flatpak/exports/share/applications"])
        #expect(d.autostart == ["/tmp/sandbox/root/etc/xdg/autostart"] && d.flatpakApps == "/tmp/sandbox/root/var/lib/flatpak/app")
        #expect(d.home(0) == DesktopDirs.passwdHome(0).map { "/tmp/sandbox/root" + $0 })
        #expect(d.home(0) != nil, "root's home is in the passwd database")
        #expect(DesktopDirs.standard.under("/").applications == DesktopDirs.standard.applications)
    }
}
