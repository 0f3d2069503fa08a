import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon
import BlockTestTools

/// §7: configuration in layers, as systemd's unit files (systemd.unit(5)): vendor
/// (`/usr/lib/blockd`), runtime (`/run/blockd`), administrator (`/etc/blockd`). The same name in
/// a later layer replaces the earlier file, other names merge in name order, and an empty file
/// or a symlink to /dev/null masks. `--config-dir` reads its one directory.
@Suite("§7: configuration layers")
struct ConfigLayersTests {
    static func layers() throws -> (TempDir, ConfigDirectory) {
        let root = try TempDir()
        let files = [
            "vendor/blockd.conf": "[Daemon]\nMaxActivities=50\n",
            "vendor/selections.d/school.conf": "[Selection]\nName=school\nDomains=vendor.example\n",
            "vendor/selections.d/games.conf": "[Selection]\nName=games\nDomains=games.example\nApps=/usr/games/x\n",
            "vendor/schedules.d/bedtime.conf": "[Schedule]\nName=bedtime\nWindow=21:00-07:00\nSelections=games\n",
            "vendor/limits.d/play.conf": "[Limit]\nName=play\nDaily=1h\nSelections=games\n",
            "run/schedules.d/exam.conf": "[Schedule]\nName=exam\nWindow=09:00-12:00\nSelections=school\n",
            "etc/selections.d/school.conf": "[Selection]\nName=school\nDomains=admin.example\n",
            "etc/schedules.d/bedtime.conf": "",  // masks the vendor's bedtime
        ]
        for (name, text) in files {
            let path = root.path + "/" + name
            try FileManager.default.createDirectory(atPath: Path.parent(path), withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(atPath: root.path + "/etc/limits.d", withIntermediateDirectories: true)
        #expect(symlink("/dev/null", root.path + "/etc/limits.d/play.conf") == 0)  // masks the vendor's limit
        return (root, ConfigDirectory(layers: ["vendor", "run", "etc"].map { root.path + "/" + $0 }))
    }

    @Test("§7: same name replaces, other names merge, an empty file and a /dev/null link mask")
    func merge() throws {
        let (root, dir) = try Self.layers()
        let config = try dir.load()
        #expect(config.daemon.maxActivities == 50, "the vendor's blockd.conf holds where no later layer has one")
        #expect(config.catalog.selection(named: "school")?.domains == ["admin.example"], "the administrator's file replaces the vendor's")
        #expect(config.catalog.selection(named: "games") != nil)
        #expect(config.schedules.map(\.name) == ["exam"], "runtime's exam merges; the vendor's bedtime is masked")
        #expect(config.limits.isEmpty, "a symlink to /dev/null masks the vendor's limit")
        #expect(config.files == ["vendor/blockd.conf", "vendor/selections.d/games.conf", "etc/selections.d/school.conf",
                                 "run/schedules.d/exam.conf"].map { root.path + "/" + $0 })
        #expect(dir.daemonFile == root.path + "/vendor/blockd.conf")
        // --config-dir DIR: that directory alone.
        #expect(try ConfigDirectory(root.path + "/etc").load().schedules.isEmpty)
    }

    @Test("§7: blockd --cat-config shows every file in force in the order read, and what each replaces or masks")
    func cat() throws {
        let (root, dir) = try Self.layers()
        let (text, problems) = dir.catConfig()
        #expect(problems.isEmpty)
        let headers = text.split(separator: "\n").filter { $0.hasPrefix("# /") }.map { $0.replacingOccurrences(of: root.path, with: "") }
        #expect(headers == [
            "# /vendor/blockd.conf",
            "# /vendor/selections.d/games.conf",
            "# /etc/selections.d/school.conf (replaces /vendor/selections.d/school.conf)",
            "# /etc/schedules.d/bedtime.conf: masked (replaces /vendor/schedules.d/bedtime.conf)",
            "# /run/schedules.d/exam.conf",
            "# /etc/limits.d/play.conf: masked (replaces /vendor/limits.d/play.conf)",
        ], "\(text)")
        #expect(text.contains("Domains=admin.example") && !text.contains("Domains=vendor.example"))
    }

    @Test("F1: --cat-config ends with every [Daemon] setting in force and where each comes from: file and line, flag or default")
    func settingsInForce() throws {
        let temp = try TempDir()
        try FileManager.default.createDirectory(atPath: temp.path + "/etc", withIntermediateDirectories: true)
        try "[Daemon]\n# mine\nKillGrace=10s\nMaxActivities=500\nKillGrace=\nKillGrace=7s\nFirewall=no\n"
            .write(toFile: temp.path + "/etc/blockd.conf", atomically: true, encoding: .utf8)
        var flags = DaemonConfig.Layer()
        flags.firewall = true
        let (text, problems) = ConfigDirectory(temp.path + "/etc").catConfig(flags: flags)
        #expect(problems.isEmpty)
        let tail = text.components(separatedBy: "# [Daemon] in force, each value with where it comes from\n").last ?? ""
        let rows = tail.split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) } }
        let file = temp.path + "/etc/blockd.conf"
        #expect(rows.map { $0[0].split(separator: "=")[0] } == DaemonConfig.keys.map { Substring($0) }, "every key, in order:\n\(tail)")
        let by = Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[1]) })
        #expect(by["KillGrace=7s"] == "\(file):6", "the last assignment wins, after an empty one reset it: \(tail)")
        #expect(by["MaxActivities=500"] == "\(file):4")
        #expect(by["Firewall=yes"] == "a flag", "--firewall yes overrides the file's Firewall=no")
        #expect(by["HostsFile=/etc/hosts"] == "default" && by["MetricsDirectory="] == "default")
        // A blockd.conf that does not parse: the files are shown, the merged view says why not.
        try "[Daemon]\nKillGrace=forever\n".write(toFile: file, atomically: true, encoding: .utf8)
        let broken = ConfigDirectory(temp.path + "/etc").catConfig().text
        #expect(broken.contains("KillGrace=forever") && broken.contains("# [Daemon] in force: not shown, \(file):2:"), "\(broken)")
    }

    /// A `*.conf` that is there but cannot be read is not "no file". Read as
    /// absent, the administrator's symlink loop in place of the vendor's bedtime lifted it at
    /// the next reload, and `--check-config` called the directory valid.
    @Test("§7: a *.conf that is a symlink loop, a symlink to nothing, a FIFO or a directory cannot be read: check names it, the errno's text and what to do; load refuses", arguments: [
        ("loop", "Too many levels of symbolic links (a symlink loop: it points to bedtime.conf)"),
        ("dangling", "No such file or directory (it is a symlink to /nonexistent)"),
        ("fifo", "it is a FIFO, not a regular file"),
        ("directory", "Is a directory"),
    ])
    func unreadable(kind: String, why: String) throws {
        let (root, dir) = try Self.layers()
        let path = root.path + "/etc/schedules.d/bedtime.conf"
        try FileManager.default.removeItem(atPath: path)
        switch kind {
        case "loop": #expect(symlink("bedtime.conf", path) == 0)
        case "dangling": #expect(symlink("/nonexistent", path) == 0)
        case "fifo": #expect(mkfifo(path, 0o644) == 0)
        default: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        let problems = dir.check().1.errors.map(\.message)
        #expect(problems == ["\(path): cannot be read: \(why); make it a regular file, a symlink to one, or a symlink to /dev/null to mask the file of its name, or remove it"],
                "\(problems)")
        #expect(throws: CoreError.self, "the daemon's start and reload refuse it, and keep the last good configuration") { try dir.load() }
        #expect(dir.catConfig().problems.map(\.message) == problems)
    }

    @Test("§7: a configuration directory that is a symlink to nothing cannot be read either")
    func unreadableDirectory() throws {
        let (root, dir) = try Self.layers()
        let path = root.path + "/etc/schedules.d"
        try FileManager.default.removeItem(atPath: path)
        #expect(symlink(root.path + "/nonexistent", path) == 0)
        #expect(dir.check().1.errors.map(\.message) == ["\(path): cannot be read: No such file or directory (it is a symlink to \(root.path)/nonexistent); make it a directory or a symlink to one, or remove it"])
    }

    @Test("§7: a symlink to /dev/null masks, also written relative or through another link; a symlink to another device is no mask and cannot be read")
    func nullMasks() throws {
        let (root, dir) = try Self.layers()
        let path = root.path + "/etc/schedules.d/bedtime.conf"
        let up = String(repeating: "../", count: path.split(separator: "/").count - 1)
        for target in ["/dev/null", up + "dev/null", root.path + "/null-link"] {
            try? FileManager.default.removeItem(atPath: path)
            _ = symlink("/dev/null", root.path + "/null-link")
            #expect(symlink(target, path) == 0)
            #expect(try dir.load().schedules.map(\.name) == ["exam"], "\(target) masks the vendor's bedtime")
            #expect(dir.check().1.errors.isEmpty)
        }
        try FileManager.default.removeItem(atPath: path)
        #expect(symlink("/dev/zero", path) == 0)
        #expect(dir.check().1.errors.map(\.message) == ["\(path): cannot be read: it is not a regular file; make it a regular file, a symlink to one, or a symlink to /dev/null to mask the file of its name, or remove it"])
    }

    @Test("§7: blockd without --config-dir reads the standard layers, /etc/blockd last")
    func standard() throws {
        #expect(try BlockdOptions.parse([]).configDirectory.layers == ["/usr/lib/blockd", "/run/blockd", "/etc/blockd"])
        #expect(try BlockdOptions.parse(["--config-dir", "/tmp/x"]).configDirectory.layers == ["/tmp/x"])
    }
}
