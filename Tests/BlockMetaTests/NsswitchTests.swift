import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// U3: scripts/nsswitch, which `make install` and `make uninstall` run on the hosts: line of
/// nsswitch.conf (under DESTDIR), table-driven on temp files: install puts `blockd` first,
/// uninstall gives back the file byte for byte.
@Suite("U3: blockd on the hosts: line of nsswitch.conf")
struct NsswitchTests {
    static let script = Repo.root + "/scripts/nsswitch"
    static let perl = "/usr/bin/perl"

    /// (what the user had, what install makes of it, what the script says)
    static let cases: [(before: String, after: String, word: String)] = [
        ("hosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname\n",
         "hosts:          blockd files mdns4_minimal [NOTFOUND=return] dns myhostname\n", "added"),
        ("passwd: files\nhosts: files dns\nnetworks: files\n", "passwd: files\nhosts: blockd files dns\nnetworks: files\n", "added"),
        // systemd-resolved's line: blockd must come before `resolve [!UNAVAIL=return]`, not only before files.
        ("hosts: mymachines resolve [!UNAVAIL=return] files myhostname dns\n",
         "hosts: blockd mymachines resolve [!UNAVAIL=return] files myhostname dns\n", "added"),
        ("  hosts :\t files   dns   # my own comment\r\n", "  hosts :\t blockd files   dns   # my own comment\r\n", "added"),
        ("hosts:files", "hosts:blockd files", "added"),
        ("hosts: files # not blockd here\n", "hosts: blockd files # not blockd here\n", "added"),
        ("# hosts: files\npasswd: files\n", "# hosts: files\npasswd: files\n", "no-hosts-line"),
        ("", "", "no-hosts-line"),
        ("hosts: files blockd dns\n", "hosts: files blockd dns\n", "present"),
        ("hosts: files\n\u{FF}\u{00}binary\n", "hosts: blockd files\n\u{FF}\u{00}binary\n", "added"),
    ]

    static func run(_ action: String, _ path: String) throws -> Run.Result {
        try Run.capture(perl, [script, action, path])
    }

    static func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    @Test("install puts blockd first on every hosts: line and uninstall restores the file byte for byte",
          .enabled(if: Privileged.can(tools: [NsswitchTests.perl]), Privileged.needsTools), arguments: 0..<cases.count)
    func roundTrip(index: Int) throws {
        if Privileged.unavailable(tools: [NsswitchTests.perl]) != nil { return }
        let (before, after, word) = Self.cases[index]
        let dir = try TempDir()
        let path = dir.path + "/nsswitch.conf"
        let original = Data(before.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
        try original.write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o640) == 0)

        let added = try Self.run("add", path)
        #expect(added.status == 0 && added.output == word + "\n", "add said: \(added.output)")
        let expected = Data(after.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) })
        #expect(Self.bytes(path) == expected, "after install: \(String(decoding: Self.bytes(path), as: UTF8.self).debugDescription)")
        #expect(try Self.run("add", path).output == (word == "added" ? "present\n" : word + "\n"), "a second install changes nothing")

        let removed = try Self.run("remove", path)
        #expect(removed.status == 0, "remove failed: \(removed.output)")
        #expect(Self.bytes(path) == original, "uninstall did not give the file back byte for byte")
        // A blockd placed by hand elsewhere on the line stays, and uninstall says so.
        #expect(removed.output.contains("still names blockd") == (word == "present"), "remove said: \(removed.output)")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o7777 == 0o640, "the file keeps its mode")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["nsswitch.conf"], "no temp file is left")
    }

    @Test("a symlinked nsswitch.conf is followed (its target edited, the link kept); a missing one is left missing",
          .enabled(if: Privileged.can(tools: [NsswitchTests.perl]), Privileged.needsTools))
    func symlinkAndMissing() throws {
        if Privileged.unavailable(tools: [NsswitchTests.perl]) != nil { return }
        let dir = try TempDir()
        try Data("hosts: files\n".utf8).write(to: URL(fileURLWithPath: dir.path + "/real"))
        #expect(symlink("real", dir.path + "/nsswitch.conf") == 0)
        #expect(try Self.run("add", dir.path + "/nsswitch.conf").output == "added\n")
        #expect(Self.bytes(dir.path + "/real") == Data("hosts: blockd files\n".utf8))
        var st = stat()
        #expect(lstat(dir.path + "/nsswitch.conf", &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
        #expect(try Self.run("remove", dir.path + "/nsswitch.conf").output == "removed\n")
        #expect(Self.bytes(dir.path + "/real") == Data("hosts: files\n".utf8))

        #expect(try Self.run("add", dir.path + "/absent.conf").output == "no-file\n")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/absent.conf"))
    }

    @Test("make install edits DESTDIR's nsswitch.conf and make uninstall leaves it byte-identical",
          .enabled(if: Privileged.can(tools: [InstallTests.make, NsswitchTests.perl]), Privileged.needsTools))
    func makeInstallAndUninstall() throws {
        if Privileged.unavailable(tools: [InstallTests.make, NsswitchTests.perl]) != nil { return }
        let dest = try TempDir()
        let original = Data("# my machine\npasswd:  files systemd\nhosts:\tfiles  [NOTFOUND=return]\tdns # keep\ngroup: files".utf8)
        #expect(mkdir(dest.path + "/etc", 0o755) == 0)
        try original.write(to: URL(fileURLWithPath: dest.path + "/etc/nsswitch.conf"))
        let installed = try InstallTests.install(into: dest.path, prefix: "/usr/local")
        #expect(installed.status == 0, "make install failed:\n\(installed.output)")
        let during = String(decoding: Self.bytes(dest.path + "/etc/nsswitch.conf"), as: UTF8.self)
        #expect(during.contains("\nhosts:\tblockd files  [NOTFOUND=return]\tdns # keep\n"), "during: \(during.debugDescription)")
        let removed = try Run.capture(InstallTests.make, ["-C", Repo.root, "uninstall", "DESTDIR=\(dest.path)", "PREFIX=/usr/local"],
                                      environment: InstallTests.cleanMakeEnvironment)
        #expect(removed.status == 0, "make uninstall failed:\n\(removed.output)")
        #expect(Self.bytes(dest.path + "/etc/nsswitch.conf") == original, "uninstall did not give nsswitch.conf back byte for byte")
        #expect(dest.files() == ["/etc/nsswitch.conf"], "left behind: \(dest.files())")
    }
}
