import BlockCore
import Foundation
import Testing
@testable import BlockDaemon
import BlockTestTools

/// §7: `blockd --check-config [DIR | FILE]` reads everything, touches nothing, and says
/// every problem with its file (and line, where the parser knows it), so that a configuration
/// can be checked before it is deployed (Ansible's `validate: blockd --check-config %s`).
@Suite("§7: blockd --check-config lists every problem")
struct ConfigCheckTests {
    static func directory(_ files: [String: String]) throws -> TempDir {
        let dir = try TempDir()
        for (name, text) in files {
            let path = dir.path + "/" + name
            try FileManager.default.createDirectory(atPath: Path.parent(path), withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        return dir
    }

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
        let (config, problems) = ConfigDirectory(dir.path).check()
        let files = problems.map { String($0.message.prefix { $0 != ":" }) }
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
        let (config, problems) = ConfigDirectory(dir.path).check(candidate: fixed)
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
        let lines = result.output.split(separator: "\n").filter { $0.hasPrefix("blockd: ") }
        #expect(lines.count == 6 && lines.last?.hasSuffix("5 problems in the configuration in \(dir.path); nothing was changed") == true, "\(result.output)")
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
        #expect(result.output.contains("blockd: \(dir.path)/schedules.d/x.conf: cannot be read: Too many levels of symbolic links"), "\(result.output)")
        #expect(result.output.contains("blockd: \(dir.path)/schedules.d/y.conf: cannot be read: No such file or directory (it is a symlink to /nonexistent)"), "\(result.output)")
        #expect(result.output.contains("2 problems in the configuration in \(dir.path); nothing was changed"), "\(result.output)")
        let one = try Run.capture(Repo.binDir + "/blockd", ["--config-dir", dir.path, "--check-config", dir.path + "/schedules.d/y.conf"])
        #expect(one.status == 1 && one.output.contains("y.conf: cannot be read: No such file or directory"), "\(one.output)")
    }
}
