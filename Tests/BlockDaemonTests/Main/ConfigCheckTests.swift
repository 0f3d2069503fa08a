import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// §7: `blockd --check-config [DIR | FILE]` reads everything, touches nothing, and says
/// every problem with its file (and line, where the parser knows it), so that a configuration
/// can be checked before it is deployed (Ansible's `validate: blockd --check-config %s`).
@Suite("§7: blockd --check-config lists every problem")
struct ConfigCheckTests {
    static func directory(_ files: [String: String], executable: Bool = false) throws -> TempDir {
        let dir = try TempDir()
        try write(files, under: dir.path, executable: executable)
        return dir
    }

    static func write(_ files: [String: String], under root: String, executable: Bool = false) throws {
        for (name, text) in files {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: Path.parent(path), withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            if executable { chmod(path, 0o755) }
        }
    }

    /// Nothing installed: a check that must not depend on what this machine has.
    static let noApps = InstalledApps(path: "/nonexistent", applications: [])

    static let broken = [
        "blockd.conf": "[Daemon]\nMaxActivities=abc\n",
        "selections.d/web.conf": "[Selection]\nName=web\nDomains=example.com bad_domain!\n",
        "schedules.d/bed.conf": "[Schedule]\nName=bedtime\nWindow=25:00-07:00\nSelections=instagram\n",
        "schedules.d/hw.conf": "[Schedule]\nName=homework\nWindow=16:00-18:00\nSelections=nosuch\n",
        // B3: a limit on URL prefixes alone could never be used up (sites count, pages do not).
        "selections.d/pages.conf": "[Selection]\nName=pages\nPaths=pages.example/page\n",
        "limits.d/w.conf": "[Limit]\nName=pagesonly\nDaily=1h\nSelections=pages\n",
    ]

    @Test("§7: every broken file is named, in file order, and the good ones still load")
    func everyProblem() throws {
        let dir = try Self.directory(Self.broken.merging(["selections.d/ok.conf": "[Selection]\nName=ok\nDomains=ok.example\n"]) { a, _ in a })
        let (config, problems) = ConfigDirectory(dir.path, apps: Self.noApps).check()
        let files = problems.map(\.file)
        #expect(files == ["blockd.conf", "selections.d/web.conf", "schedules.d/bed.conf", "schedules.d/hw.conf", "limits.d/w.conf"].map { dir.path + "/" + $0 },
                "\(problems.map(\.message))")
        #expect(problems[0].message.hasPrefix(dir.path + "/blockd.conf:2: MaxActivities="))
        // An unknown selection is a problem of the whole set, and still names its line.
        #expect(problems[3].message.hasPrefix(dir.path + "/schedules.d/hw.conf:4: Selections=: no selection named 'nosuch'"), "\(problems[3].message)")
        #expect(config.catalog.selection(named: "ok") != nil, "a good file is checked all the same")
        // The daemon's own load stops at the first, as before.
        #expect(throws: CoreError.self) { try ConfigDirectory(dir.path).load() }
    }

    @Test("§7: a file about to be installed is checked in place of the one that defines its name")
    func candidate() throws {
        let dir = try Self.directory(["schedules.d/hw.conf": Self.broken["schedules.d/hw.conf"]!])
        let fixed = ConfigSource(path: "/tmp/ansible.tmp", text: "[Schedule]\nName=homework\nWindow=16:00-18:00\nSelections=instagram\n")
        let (config, problems) = ConfigDirectory(dir.path, apps: Self.noApps).check(candidate: fixed)
        #expect(problems.isEmpty, "\(problems.map(\.message))")
        #expect(config.schedules.map(\.name) == ["homework"] && config.files == ["/tmp/ansible.tmp"])
        let clash = ConfigSource(path: "/tmp/other.tmp", text: "[Limit]\nName=homework\nDaily=1h\nSelections=steam\n")
        #expect(ConfigDirectory(dir.path).check(candidate: clash).1.map(\.message).contains { $0.contains("no selection named 'nosuch'") })
        let none = ConfigSource(path: "/tmp/x.tmp", text: "Name=x\n")
        #expect(ConfigDirectory(dir.path).check(candidate: none).1.contains { $0.message == "/tmp/x.tmp: has no [Daemon], [Selection], [Schedule], [Limit] or [Users] section, so it is none of blockd's files" })
    }

    @Test("§7: the real binary prints each problem on stderr, exits 1, and writes nothing")
    func binary() throws {
        let dir = try Self.directory(Self.broken)
        let before = try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted()
        let result = try Run.capture(Repo.binDir + "/blockd", ["--check-config", dir.path])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 6 && lines.filter { $0.hasPrefix(dir.path + "/") }.count == 5, "\(result.output)")
        #expect(lines.last == "blockd: 5 problems in 5 files: the configuration in \(dir.path) would not load; nothing was changed", "\(result.output)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: dir.path).sorted() == before)
        let good = try Self.directory(["schedules.d/hw.conf": "[Schedule]\nName=homework\nWindow=16:00-18:00\nSelections=instagram\n"])
        let ok = try Run.capture(Repo.binDir + "/blockd", ["--config-dir", good.path, "--check-config", good.path + "/schedules.d/hw.conf"])
        #expect(ok.status == 0 && ok.output.contains("is valid"), "\(ok.output)")
    }

    @Test("§7: the real binary exits 1 for a *.conf that is a symlink loop or a symlink to nothing, and names each")
    func unreadableBinary() throws {
        let dir = try Self.directory(["selections.d/ok.conf": "[Selection]\nName=ok\nDomains=ok.example\n"])
        try FileManager.default.createDirectory(atPath: dir.path + "/schedules.d", withIntermediateDirectories: true)
        #expect(symlink("x.conf", dir.path + "/schedules.d/x.conf") == 0)
        #expect(symlink("/nonexistent", dir.path + "/schedules.d/y.conf") == 0)
        let result = try Run.capture(Repo.binDir + "/blockd", ["--check-config", dir.path])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("\n\(dir.path)/schedules.d/y.conf: cannot be read: No such file or directory (it is a symlink to /nonexistent)"), "\(result.output)")
        #expect(result.output.hasPrefix("\(dir.path)/schedules.d/x.conf: cannot be read: Too many levels of symbolic links"), "\(result.output)")
        #expect(result.output.contains("blockd: 2 problems in 2 files: the configuration in \(dir.path) would not load; nothing was changed"), "\(result.output)")
        let one = try Run.capture(Repo.binDir + "/blockd", ["--config-dir", dir.path, "--check-config", dir.path + "/schedules.d/y.conf"])
        #expect(one.status == 1 && one.output.contains("y.conf: cannot be read: No such file or directory"), "\(one.output)")
    }

    /// A machine of its own: `bin/` for PATH (discord, firefox), a policy root whose
    /// applications directory has Steam's desktop entry starting `opt/steam/steam` under it.
    static func machine() throws -> (dir: TempDir, bin: String, root: String) {
        let dir = try TempDir()
        let (bin, root) = (dir.path + "/bin", dir.path + "/root")
        try write(["discord": "#!/bin/sh\n", "firefox": "#!/bin/sh\n"], under: bin, executable: true)
        try write(["opt/steam/steam": "#!/bin/sh\n"], under: root, executable: true)
        try write(["usr/share/applications/steam.desktop": "[Desktop Entry]\nType=Application\nName=Steam\nExec=\(root)/opt/steam/steam %U\n"], under: root)
        return (dir, bin, root)
    }

    @Test("§7, F2: the real binary says every problem of every file in one run, unknown keys and bad values alike, with did you mean; an app that is not installed is a warning; exit 1")
    func everyProblemInOneRun() throws {
        let (machine, bin, root) = try Self.machine()
        let conf = machine.path + "/conf"
        try Self.write([
            "blockd.conf": "[Daemon]\nFirewal=no\nKillGrace=2m\nCutSockets=yess\n",
            "selections.d/chat.conf": "[Selection]\nName=chat\nApps=discrod firefox\nApss=slack\n",
            "selections.d/games.conf": "[Selection]\nName=games\nApps=steam \(root)/opt/steam/stem\n",
            "schedules.d/bedtime.conf": "[Schedule]\nName=bedtime\nWindow=22:00-07:00\nDays=mon-fir\nSelections=chat\nDaily=1h\n",
            "limits.d/play.conf": "[Limit]\nName=play\nDaily=1h\nSelections=game\n",
        ], under: conf)
        let result = try Run.capture(Repo.binDir + "/blockd", ["--check-config", conf, "--policy-root", root], environment: ["PATH": bin])
        #expect(result.status == 1)
        let expected = [
            "\(conf)/blockd.conf:2: unknown key Firewal= in [Daemon]; did you mean Firewall=?",
            "\(conf)/blockd.conf:3: KillGrace= must be a duration from 1s to 1m, e.g. 3s, not '2m'",
            "\(conf)/blockd.conf:4: CutSockets= must be yes or no (also true/false, on/off, 1/0), not 'yess'; did you mean yes?",
            "\(conf)/selections.d/chat.conf:3: warning: no app 'discrod' is installed (no desktop entry, no executable on PATH); did you mean 'discord'?",
            "\(conf)/selections.d/chat.conf:4: unknown key Apss= in [Selection]; did you mean Apps=?",
            "\(conf)/selections.d/games.conf:3: warning: no executable 'steam' is on PATH, but the desktop entry steam.desktop starts \(root)/opt/steam/steam; write Apps=\(root)/opt/steam/steam to block it",
            "\(conf)/selections.d/games.conf:3: warning: no app is installed at \(root)/opt/steam/stem (no such file); did you mean '\(root)/opt/steam/steam'?",
            "\(conf)/schedules.d/bedtime.conf:4: Days=: 'mon-fir' is not a set of days: 'fir' is not a day; write e.g. mon,wed or mon-fri; did you mean Days=mon-fri?",
            "\(conf)/schedules.d/bedtime.conf:6: Daily= belongs in a limit file (limits.d/*.conf, [Limit]), not in [Schedule]; move it there",
            "\(conf)/limits.d/play.conf:4: Selections=: no selection named 'game'; did you mean 'games'? 'blockc selections' lists them",
            "blockd: 10 problems in 5 files (7 errors, 3 warnings): the configuration in \(conf) would not load; nothing was changed",
        ]
        #expect(result.output == expected.joined(separator: "\n") + "\n", "\(result.output)")
    }

    @Test("§7: warnings alone: the configuration is valid and loads, the warnings are said, exit 0")
    func warningsAlone() throws {
        let (machine, bin, root) = try Self.machine()
        let conf = machine.path + "/conf"
        try Self.write(["selections.d/chat.conf": "[Selection]\nName=chat\nApps=discrod firefox\n"], under: conf)
        let result = try Run.capture(Repo.binDir + "/blockd", ["--check-config", conf, "--policy-root", root], environment: ["PATH": bin])
        #expect(result.status == 0, "\(result.output)")
        // stderr (the warnings and their summary) comes before stdout's report, which is buffered.
        #expect(result.output.hasPrefix("""
            \(conf)/selections.d/chat.conf:3: warning: no app 'discrod' is installed (no desktop entry, no executable on PATH); did you mean 'discord'?
            blockd: 1 warning in 1 file: the configuration in \(conf) loads all the same
            Configuration in \(conf) is valid.

            """), "\(result.output)")
        // The same with the app installed: nothing to say.
        try Self.write(["discrod": "#!/bin/sh\n"], under: bin, executable: true)
        let clean = try Run.capture(Repo.binDir + "/blockd", ["--check-config", conf, "--policy-root", root], environment: ["PATH": bin])
        #expect(clean.status == 0 && !clean.output.contains("warning"), "\(clean.output)")
    }

    @Test("§7: the daemon's load keeps what a broken file does today (refused as one, first error named with how many more) and carries the warnings of one that loads")
    func load() throws {
        let (machine, bin, root) = try Self.machine()
        let apps = InstalledApps(path: bin, applications: [root + "/usr/share/applications"])
        let good = try Self.directory(["selections.d/chat.conf": "[Selection]\nName=chat\nApps=discrod /nonexistent/app\n"])
        let set = try ConfigDirectory(good.path, apps: apps).load()
        #expect(set.catalog.selection(named: "chat")?.apps == ["discrod", "/nonexistent/app"])
        #expect(set.warnings.map(\.line) == [3, 3] && set.warnings.allSatisfy { $0.severity == .warning }, "\(set.warnings)")
        let bad = try Self.directory(["blockd.conf": "[Daemon]\nFirewal=no\nKillGrace=2m\n"])
        #expect { try ConfigDirectory(bad.path, apps: apps).load() } throws: {
            ($0 as? CoreError)?.message == "\(bad.path)/blockd.conf:2: unknown key Firewal= in [Daemon]; did you mean Firewall=? (and 1 more error; 'blockd --check-config' lists every one)"
        }
        _ = machine
    }

    @Test("§7: an app that is not installed is said in the journal at start and once at each reload, never in between")
    func journal() throws {
        let (machine, bin, _) = try Self.machine()
        let s = Sandbox()
        s.write("[Selection]\nName=chat\nApps=discrod\n", to: "etc/selections.d/chat.conf")
        try s.start(extraArgs: ["--app-shield", "no"], environment: ["PATH": bin])
        let warning = "\(s.configDir)/selections.d/chat.conf:3: warning: no app 'discrod' is installed (no desktop entry, no executable on PATH); did you mean 'discord'?"
        func said() -> Int { s.log.components(separatedBy: warning).count - 1 }
        #expect(Run.eventually { s.log.contains("starting") } && said() == 1, "\(s.log)")
        for reloads in 1...2 {
            let r = try s.blockc(["reload"])
            #expect(r.status == 0, "\(r.err)")
            #expect(Run.eventually { s.log.components(separatedBy: "Configuration reloaded").count - 1 == reloads }, "\(s.log)")
            #expect(said() == 1 + reloads, "\(s.log)")
        }
        _ = machine
    }
}
