import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

/// U3: the writer of the per-user tables, on a temp directory.
@Suite("U3: per-user tables under /run/blockd/users")
struct UserTablesTests {
    static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    static func inode(_ path: String) -> ino_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_ino : 0
    }

    @Test("apply writes one 0644 table per uid in a 0755 directory, exactly the renderer's bytes")
    func writesTables() throws {
        let temp = try TempDir()
        let tables = UserTables(directory: temp.path + "/blockd/users")
        let changes = try tables.apply([1000: ["reddit.com", "instagram.com"], 1001: ["steam.example"], 1002: []])
        #expect(changes == UserTables.Changes(written: [1000, 1001], removed: []))
        let expected = try UserTable.render(uid: 1000, domains: ["instagram.com", "reddit.com"])
        #expect(Self.read(tables.directory + "/1000") == String(decoding: expected, as: UTF8.self))
        #expect(UserTable.domains(in: Array(Self.read(tables.directory + "/1001")!.utf8)) == ["steam.example"])
        #expect(!FileManager.default.fileExists(atPath: tables.directory + "/1002"), "a uid with no names has no table")
        #expect(Self.mode(tables.directory) == 0o755 && Self.mode(temp.path + "/blockd") == 0o755)
        #expect(Self.mode(tables.directory + "/1000") == 0o644)
        #expect(try tables.present() == [1000, 1001])
    }

    @Test("an unchanged table is not rewritten; a changed one is replaced; one no longer needed is removed")
    func appliesTheDifference() throws {
        let temp = try TempDir()
        let tables = UserTables(directory: temp.path + "/users")
        try tables.apply([1000: ["a.example"], 1001: ["b.example"], 1003: ["c.example"]])
        let before = Self.inode(tables.directory + "/1000")
        _ = FileManager.default.createFile(atPath: tables.directory + "/notes", contents: Data("keep".utf8))
        _ = FileManager.default.createFile(atPath: tables.directory + "/0042", contents: Data("not a uid's name".utf8))

        let changes = try tables.apply([1000: ["a.example"], 1001: ["b.example", "d.example"], 1003: []])
        #expect(changes == UserTables.Changes(written: [1001], removed: [1003]))
        #expect(Self.inode(tables.directory + "/1000") == before, "the unchanged table was rewritten")
        #expect(UserTable.domains(in: Array(Self.read(tables.directory + "/1001")!.utf8)) == ["b.example", "d.example"])
        #expect(!FileManager.default.fileExists(atPath: tables.directory + "/1003"))
        #expect(Self.read(tables.directory + "/notes") == "keep" && Self.read(tables.directory + "/0042") != nil,
                "files not named by a uid are left alone")

        #expect(try tables.apply([:]) == UserTables.Changes(written: [], removed: [1000, 1001]))
        #expect(try tables.present().isEmpty)
        #expect(try tables.apply([:]) == UserTables.Changes(), "applying nothing twice changes nothing")
    }

    @Test("a group- or world-writable directory is made 0755 (the module would not trust it)")
    func tightensTheDirectory() throws {
        let temp = try TempDir()
        let dir = temp.path + "/users"
        #expect(mkdir(dir, 0o777) == 0 && chmod(dir, 0o777) == 0)
        try UserTables(directory: dir).apply([5: ["x.example"]])
        #expect(Self.mode(dir) == 0o755)
    }

    @Test("a symlink or a file where the directory should be is refused with what to do")
    func refusesWhatIsNotItsDirectory() throws {
        let temp = try TempDir()
        _ = FileManager.default.createFile(atPath: temp.path + "/users", contents: Data())
        #expect(symlink(temp.path, temp.path + "/link") == 0)
        for dir in [temp.path + "/users", temp.path + "/link"] {
            #expect {
                try UserTables(directory: dir).apply([5: ["x.example"]])
            } throws: { "\($0)".contains("is not a directory; remove it") }
        }
    }

    @Test("a name the hosts file would refuse is refused, and nothing is written for it")
    func refusesBadNames() throws {
        let temp = try TempDir()
        let tables = UserTables(directory: temp.path + "/users")
        #expect { try tables.apply([9: ["ok.example", "bad name\n.example"]]) } throws: { "\($0)".contains("uid 9") }
        #expect(try tables.present().isEmpty)
    }

    @Test("the module reads the directory the renderer names (nss/nss_blockd.c)")
    func moduleAndRendererAgree() throws {
        let source = try String(contentsOfFile: Repo.root + "/nss/nss_blockd.c", encoding: .utf8)
        #expect(source.contains("#define BLOCKD_TABLE_DIR \"\(UserTable.directory)\""))
    }
}
