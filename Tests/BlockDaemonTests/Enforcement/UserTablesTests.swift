import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon
import BlockTestTools

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

    @Test("apply writes one table per uid in a 0755 directory, exactly the renderer's bytes, readable by its user only (0640 + ACL)")
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
        #expect(Self.mode(tables.directory + "/1000") == 0o640)
        #expect(ExtendedAttributes.system.get(tables.directory + "/1000", "system.posix_acl_access") == .success(UserTable.readACL(uid: 1000)))
        #expect(changes.readableByEveryone == false)
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
        #expect(!FileManager.default.fileExists(atPath: tables.directory), "refused before anything is written")
    }

    @Test("the module reads the directory the renderer names (nss/nss_blockd.c)")
    func moduleAndRendererAgree() throws {
        let source = try String(contentsOfFile: Repo.root + "/nss/nss_blockd.c", encoding: .utf8)
        #expect(source.contains("#define BLOCKD_TABLE_DIR \"\(UserTable.directory)\""))
    }
}

/// U3: who may read a table, and what counts as a table not as blockd wrote it.
@Suite("U3: per-user tables readable by their user only, and kept as written")
struct UserTableAccessTests {
    static let ids: [(uid: UInt32, id: [UInt8])] = [(1000, [0xE8, 0x03, 0, 0]), (4_294_967_294, [0xFE, 0xFF, 0xFF, 0xFF]), (1, [1, 0, 0, 0])]

    @Test("U3: the ACL is the kernel's xattr format: version 2, then user::rw- user:UID:r-- group::--- mask::r-- other::---",
          arguments: ids)
    func aclBytes(uid: UInt32, id: [UInt8]) {
        let none: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]
        let expected: [UInt8] = [2, 0, 0, 0] + [1, 0, 6, 0] + none + [2, 0, 4, 0] + id + [4, 0, 0, 0] + none
            + [0x10, 0, 4, 0] + none + [0x20, 0, 0, 0] + none
        #expect(UserTable.readACL(uid: uid) == expected)
    }

    @Test("U3: a table is root's and its user's (0640 + ACL); root's own needs no ACL (0600); without ACLs everyone's (0644)", arguments: [
        (UInt32(1000), UInt32(0), false, UInt32(0o640), true),
        (0, 0, false, 0o600, false),
        (1000, 0, true, 0o644, false),
        (0, 0, true, 0o600, false),
    ])
    func access(uid: UInt32, owner: UInt32, everyone: Bool, mode: UInt32, acl: Bool) {
        let a = UserTable.access(uid: uid, owner: owner, everyone: everyone)
        #expect(a.mode == mode)
        #expect(a.acl == (acl ? UserTable.readACL(uid: uid) : nil))
    }

    /// A table as blockd writes it, then changed behind its back.
    static let tamperings: [(what: String, expected: String, change: @Sendable (String) -> Void)] = [
        ("removed", "it was missing", { unlink($0) }),
        ("rewritten in place", "its contents were changed", { path in
            let fd = open(path, O_WRONLY | O_TRUNC)
            _ = "other.example\n".withCString { write(fd, $0, 14) }
            close(fd)
        }),
        ("chmodded 0644", "its mode was 644, not 640", { chmod($0, 0o644) }),
        ("given another ACL", "its ACL was changed", { path in
            let fd = open(path, O_RDONLY)
            _ = ExtendedAttributes.system.set(fd, "system.posix_acl_access", UserTable.readACL(uid: 4242))
            close(fd)
        }),
        ("replaced by a symlink", "it is not a regular file", { path in
            unlink(path)
            symlink("/etc/hostname", path)
        }),
        ("replaced by a directory", "it is not a regular file", { path in
            unlink(path)
            mkdir(path, 0o755)
        }),
    ]

    @Test("U3: each change behind blockd's back is named, and apply puts the table back exactly",
          arguments: 0..<tamperings.count)
    func tamperIsSeenAndUndone(index: Int) throws {
        let (what, expected, change) = Self.tamperings[index]
        let temp = try TempDir()
        let tables = UserTables(directory: temp.path + "/users")
        try tables.apply([1000: ["youtube.com"]])
        let bytes = try UserTable.render(uid: 1000, domains: ["youtube.com"])
        #expect(tables.problem(uid: 1000, bytes: bytes) == nil)
        change(tables.path(uid: 1000))
        #expect(tables.problem(uid: 1000, bytes: bytes) == expected, "\(what)")
        if what == "replaced by a directory" {
            #expect(throws: DaemonError.self) { try tables.apply([1000: ["youtube.com"]]) }
            rmdir(tables.path(uid: 1000))
        }
        #expect(try tables.apply([1000: ["youtube.com"]]).written == [1000], "\(what)")
        #expect(tables.problem(uid: 1000, bytes: bytes) == nil, "\(what)")
    }

    @Test("U3: a file system without POSIX ACLs gets 0644 tables, and apply says they are readable by everyone")
    func fallsBackWithoutACLs() throws {
        let temp = try TempDir()
        let tables = UserTables(directory: temp.path + "/users", xattr: .unsupported)
        let changes = try tables.apply([1000: ["youtube.com"]])
        #expect(changes.written == [1000] && changes.readableByEveryone)
        #expect(UserTablesTests.mode(tables.path(uid: 1000)) == 0o644)
        #expect(tables.problem(uid: 1000, bytes: try UserTable.render(uid: 1000, domains: ["youtube.com"])) == nil)
        let again = try tables.apply([1000: ["youtube.com"]])
        #expect(again.written.isEmpty && again.readableByEveryone, "an unchanged table is still readable by everyone")
    }

    @Test("U3: a default ACL on the directory is removed (it would give every new table entries of its own)")
    func removesDefaultACL() throws {
        let temp = try TempDir()
        let dir = temp.path + "/users"
        #expect(mkdir(dir, 0o755) == 0)
        let fd = open(dir, O_RDONLY | O_DIRECTORY)
        #expect(ExtendedAttributes.system.set(fd, "system.posix_acl_default", UserTable.readACL(uid: 4242)) == 0)
        close(fd)
        try UserTables(directory: dir).apply([0: ["youtube.com"], 1000: ["youtube.com"]])
        #expect(ExtendedAttributes.system.get(dir, "system.posix_acl_default") == .failure(ENODATA))
        #expect(UserTablesTests.mode(dir + "/0") == 0o600, "root's own table: no ACL, 0600")
        #expect(ExtendedAttributes.system.get(dir + "/0", "system.posix_acl_access") == .failure(ENODATA))
    }
}
