import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// U3 with E1's tamper repair: the per-user tables kept as written by the enforcer, on a temp
/// directory (unprivileged); the directory is blockd's alone (§7, one daemon per
/// directory) and configurable. The same on real users and the NSS module:
/// UserTablesAccessTests.
@Suite("U3: per-user tables repaired like the hosts file, one blockd per directory", .serialized)
struct UserTablesRepairTests {
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        var value: Int { lock.withLock { n } }
        func bump() { lock.withLock { n += 1 } }
    }

    struct Fixture {
        let temp: TempDir
        let enforcer: UserTablesEnforcer
        let hits = HitRecorder()
        let log = MemorySink()
        let changes = Counter()
        var directory: String { enforcer.tables.directory }
        var table: String { enforcer.tables.path(uid: 1001) }
        var bytes: [UInt8] { (try? UserTable.render(uid: 1001, domains: ["youtube.com", "www.youtube.com"])) ?? [] }

        init(xattr: ExtendedAttributes = .system, directory: String? = nil, temp: TempDir? = nil) throws {
            let temp = try temp ?? TempDir()
            self.temp = temp
            let (hits, changes) = (hits, changes)
            enforcer = UserTablesEnforcer(directory: directory ?? temp.path + "/users", log: log, hits: hits.sink,
                                          onChange: { changes.bump() }, xattr: xattr)
        }

        var problem: String? { enforcer.tables.problem(uid: 1001, bytes: bytes) }

        /// The barrier for "nothing was repaired": the enforcer's watch has read every event of
        /// what was done in its directory, and the check they called for has run.
        var settled: Bool {
            FileEvents.allRead(in: directory) && enforcer.queue.sync { !enforcer.checkPending }
        }
    }

    static var youtube: Selection {
        var s = Selection(name: "youtube", domains: ["youtube.com", "www.youtube.com"])
        s.users = [1001]
        return s
    }

    @Test("U3: a table removed, rewritten, chmodded, given another ACL or replaced by a symlink behind blockd's back is written again within a second, journalled as tamper",
          arguments: 0..<(UserTableAccessTests.tamperings.count - 1))
    func repairs(index: Int) throws {
        let (what, cause, change) = UserTableAccessTests.tamperings[index]
        let f = try Fixture()
        #expect(f.enforcer.enforce(blocked: [Self.youtube]) == EnforcementReport())
        change(f.table)
        #expect(Run.eventually(timeout: 10) { f.problem == nil }, "\(what): not repaired: \(f.problem ?? "")")
        #expect(Run.eventually(timeout: 3) { f.hits.of(.tamper).count == 1 }, "\(what): no tamper hit")
        #expect(f.hits.of(.tamper).map(\.selection) == ["youtube"] && f.hits.of(.tamper).first?.path == f.table)
        let line = f.log.entries.first { $0.message.hasPrefix("Repaired the per-user table \(f.table)") }
        #expect(line?.message.contains(cause) == true && line?.priority == .notice, "\(what): \(f.log.entries.map(\.message))")
        #expect(f.changes.value == 0, "\(what): a repair that worked changes nothing the engine must learn")
        #expect(f.enforcer.enforce(blocked: [Self.youtube]) == EnforcementReport(), "enforced after the repair")
    }

    @Test("U3, §7 truth: a table that cannot be put back leaves its selection not enforced and the engine is told; once it can, it is written again")
    func cannotRepair() throws {
        let f = try Fixture()
        _ = f.enforcer.enforce(blocked: [Self.youtube])
        #expect(unlink(f.table) == 0 && mkdir(f.table, 0o755) == 0)
        #expect(Run.eventually(timeout: 10) { f.changes.value >= 1 }, "the engine was not told")
        let report = f.enforcer.enforce(blocked: [Self.youtube])
        #expect(report.notEnforced["youtube"]?.contains("cannot write the per-user tables in \(f.directory)") == true, "\(report)")
        #expect(report.failures.count == 1)
        #expect(rmdir(f.table) == 0)
        #expect(Run.eventually(timeout: 10) { f.problem == nil }, "not written again once the directory was gone: \(f.problem ?? "")")
        #expect(Run.eventually(timeout: 3) { f.changes.value >= 2 }, "the engine was not told it is written again")
        #expect(f.enforcer.enforce(blocked: [Self.youtube]) == EnforcementReport())
        #expect(f.log.entries.contains { $0.message.hasPrefix("Per-user tables in \(f.directory) written again") })
    }

    @Test("U3: the whole directory removed is made again with its tables")
    func directoryRemoved() throws {
        let f = try Fixture()
        _ = f.enforcer.enforce(blocked: [Self.youtube])
        try FileManager.default.removeItem(atPath: f.directory)
        #expect(Run.eventually(timeout: 10) { f.problem == nil }, "not repaired: \(f.problem ?? "")")
        #expect(Run.eventually(timeout: 3) { !f.hits.of(.tamper).isEmpty })
        unlink(f.table)  // the new directory is watched too
        #expect(Run.eventually(timeout: 10) { f.problem == nil }, "not repaired in the new directory: \(f.problem ?? "")")
    }

    @Test("§7: a second blockd on the same directory neither removes nor writes the first one's tables, and says why; one with its own directory does not touch them")
    func oneDaemonPerDirectory() throws {
        let first = try Fixture()
        _ = first.enforcer.enforce(blocked: [Self.youtube])
        let before = UserTablesTests.inode(first.table)

        let second = try Fixture(directory: first.directory)
        var kid2 = Selection(name: "steam", domains: ["store.steampowered.com"])
        kid2.users = [1002]
        let nothing = second.enforcer.enforce(blocked: [])
        #expect(nothing.failures.map(\.message).contains { $0.hasPrefix("another blockd keeps its per-user tables in \(first.directory)") }, "\(nothing)")
        let refused = second.enforcer.enforce(blocked: [kid2])
        #expect(refused.notEnforced["steam"]?.contains("--user-tables-dir") == true, "\(refused)")
        #expect(UserTablesTests.inode(first.table) == before && first.problem == nil, "the first one's table was touched")
        #expect(try first.enforcer.tables.present() == [1001], "the second one wrote into the first one's directory")

        let third = try Fixture()
        #expect(third.enforcer.enforce(blocked: [kid2]) == EnforcementReport())
        #expect(try third.enforcer.tables.present() == [1002])
        #expect(UserTablesTests.inode(first.table) == before && first.problem == nil)
        #expect(Run.eventually(timeout: 5) { first.settled })
        #expect(first.hits.all.isEmpty, "the first one saw nothing to repair")
    }

    @Test("U3: without POSIX ACLs the tables are 0644, and the report and status say every user can read them")
    func readableByEveryone() throws {
        let f = try Fixture(xattr: .unsupported)
        let report = f.enforcer.enforce(blocked: [Self.youtube])
        let message = "per-user tables readable by every user: the file system of \(f.directory) has no POSIX ACLs"
        #expect(report.failures.map(\.message).contains { $0.hasPrefix(message) }, "\(report)")
        #expect(report.notEnforced.isEmpty, "the block is enforced, only not private")
        #expect(UserTablesTests.mode(f.table) == 0o644)
        let notes = f.enforcer.notes()["userTables"]?.object
        #expect(notes?["readableBy"]?.string == "everyone" && notes?["problem"]?.string?.hasPrefix(message) == true, "\(notes ?? [:])")
        let private_ = try Fixture()
        _ = private_.enforcer.enforce(blocked: [Self.youtube])
        #expect(private_.enforcer.notes()["userTables"]?.object?["readableBy"]?.string == "their user")
    }

    @Test("U3: UserTablesDirectory= in blockd.conf and --user-tables-dir on the command line (the flag wins)", arguments: [
        ("", nil, UserTable.directory),
        ("UserTablesDirectory=/srv/sandbox/users/\n", nil, "/srv/sandbox/users"),
        ("UserTablesDirectory=/srv/a\n", "/tmp/b//", "/tmp/b"),
        ("UserTablesDirectory=/srv/a\nUserTablesDirectory=\n", nil, UserTable.directory),
    ] as [(String, String?, String)])
    func configured(file: String, flag: String?, expected: String) throws {
        let layer = try DaemonConfig.parseLayer(file: "blockd.conf", text: "[Daemon]\n" + file)
        let options = try BlockdOptions.parse(flag.map { ["--user-tables-dir", $0] } ?? [])
        #expect(DaemonConfig.defaults.applying(layer).applying(BlockdMain.flags(options)).userTablesDirectory == expected)
    }

    @Test("U3: a tables directory that is relative or / is refused with what is accepted", arguments: ["relative/users", "/", "//"])
    func refused(value: String) {
        #expect { try DaemonConfig.parseLayer(file: "blockd.conf", text: "[Daemon]\nUserTablesDirectory=\(value)\n") } throws: {
            ($0 as? CoreError)?.message.contains("blockd.conf:2: UserTablesDirectory= must be an absolute directory other than /") == true
        }
        #expect { try BlockdOptions.parse(["--user-tables-dir", value]) } throws: {
            ($0 as? CoreError)?.message.contains("--user-tables-dir needs an absolute directory") == true
        }
    }
}
