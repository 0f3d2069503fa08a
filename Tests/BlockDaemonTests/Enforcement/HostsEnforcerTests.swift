import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// E1 on a sandbox hosts file (never the real /etc/hosts).
@Suite("E1: the hosts enforcer", .serialized)
struct HostsEnforcerTests {
    final class Hits: @unchecked Sendable {
        let lock = NSLock()
        var all: [ShieldHit] = []
        func add(_ h: ShieldHit) { lock.withLock { all.append(h) } }
        var count: Int { lock.withLock { all.count } }
    }

    final class Fixture {
        let sandbox = Sandbox()
        let hits = Hits()
        let log = MemorySink()
        let enforcer: HostsEnforcer
        var path: String { sandbox.hostsPath }

        init() {
            let hits = self.hits
            enforcer = HostsEnforcer(path: sandbox.hostsPath, log: log, hits: { hits.add($0) }, flushResolvers: {})
        }

        var bytes: [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }
        var inode: UInt64 {
            var st = stat()
            stat(path, &st)
            return UInt64(st.st_ino)
        }
        /// The barrier for "nothing was repaired": the enforcer's watches have read every event
        /// of what was done in the directory, and the repair any of them called for has run.
        var settled: Bool {
            FileEvents.allRead(in: sandbox.dir) && enforcer.queue.sync { !enforcer.repairPending }
        }

        func replace(with text: [UInt8]) {
            // As an editor does: write a new file and rename it over.
            _ = FileManager.default.createFile(atPath: path + ".edit", contents: Data(text))
            rename(path + ".edit", path)
        }
    }

    let instagram = Selection(name: "instagram", domains: ["instagram.com", "www.instagram.com"])
    let reddit = Selection(name: "reddit", domains: ["reddit.com"])

    @Test("E1: block then unblock restores the file byte for byte, and keeps its mode")
    func roundTrip() throws {
        let f = Fixture()
        chmod(f.path, 0o640)
        let original = f.bytes
        #expect(f.enforcer.apply(blocked: [instagram, reddit]).isEmpty)
        let text = String(decoding: f.bytes, as: UTF8.self)
        #expect(text.contains("0.0.0.0 instagram.com\n:: instagram.com\n"))
        #expect(text.contains("0.0.0.0 reddit.com\n"))
        #expect(text.hasSuffix(Sandbox.hostsTemplate), "the user's file follows the section untouched")
        var st = stat()
        stat(f.path, &st)
        #expect(st.st_mode & 0o777 == 0o640)
        #expect(f.enforcer.apply(blocked: [reddit]).isEmpty)
        #expect(!String(decoding: f.bytes, as: UTF8.self).contains("instagram"))
        #expect(f.enforcer.apply(blocked: []).isEmpty)
        #expect(f.bytes == original)
    }

    @Test("E1: writes happen only when the section changes")
    func noNeedlessWrites() {
        let f = Fixture()
        _ = f.enforcer.apply(blocked: [instagram])
        let inode = f.inode
        _ = f.enforcer.apply(blocked: [instagram])
        #expect(f.inode == inode, "the same set again does not rewrite the file")
        _ = f.enforcer.apply(blocked: [instagram, reddit])
        #expect(f.inode != inode)
    }

    @Test("E1: a user's edit made between two applies is kept (the file is re-read first)")
    func concurrentEdit() {
        let f = Fixture()
        _ = f.enforcer.apply(blocked: [instagram])
        f.replace(with: f.bytes + Array("\n192.168.1.9 printer\n".utf8))
        _ = f.enforcer.apply(blocked: [])
        #expect(f.bytes == Array((Sandbox.hostsTemplate + "\n192.168.1.9 printer\n").utf8))
    }

    @Test("E1, S5: a removed section is restored within a second and reported as tamper")
    func tamper() throws {
        let f = Fixture()
        _ = f.enforcer.apply(blocked: [instagram, reddit])
        let blocked = f.bytes
        let names = HostsFile.blockedDomains(in: blocked)
        #expect(names.contains("m.reddit.com") && names.count == 6, "W1: each name with its www. and m. forms, once: \(names)")
        // The user strips the section but also adds a line of their own.
        f.replace(with: HostsFile.splice(blocked, section: nil) + Array("\n10.9.9.9 mine\n".utf8))
        #expect(Run.eventually(timeout: 2) { HostsFile.blockedDomains(in: f.bytes) == names })
        #expect(String(decoding: f.bytes, as: UTF8.self).hasSuffix("10.9.9.9 mine\n"), "the user's own edit stays")
        #expect(Run.eventually(timeout: 2) { f.hits.count == 2 })
        #expect(Set(f.hits.all.map(\.selection)) == ["instagram", "reddit"])
        #expect(f.hits.all.allSatisfy { $0.kind == .tamper && $0.path == f.path })
        // Editing one line inside the section counts against the selection that lost it.
        let count = f.hits.count
        f.replace(with: Array(String(decoding: f.bytes, as: UTF8.self).replacingOccurrences(of: "0.0.0.0 reddit.com\n", with: "").utf8))
        #expect(Run.eventually(timeout: 2) { f.hits.count == count + 1 })
        #expect(f.hits.all.last?.selection == "reddit")
        // With nothing blocked, edits are the user's business.
        _ = f.enforcer.apply(blocked: [])
        f.replace(with: Array("only mine\n".utf8))
        #expect(Run.eventually(timeout: 5) { f.settled })
        #expect(f.bytes == Array("only mine\n".utf8))
    }

    @Test("E6: lines outside the section that map a blocked name are held, an appended one is tamper, all come back byte for byte")
    func overrides() throws {
        let f = Fixture()
        f.replace(with: f.bytes + Array("\n203.0.113.9 instagram.com nas2\r\n".utf8))
        let original = f.bytes
        #expect(f.enforcer.apply(blocked: [instagram, reddit]).isEmpty)
        let text = String(decoding: f.bytes, as: UTF8.self)
        #expect(text.contains("# blockd-held: 203.0.113.9 instagram.com nas2\r\n203.0.113.9 nas2 # blockd-kept\r\n"))
        #expect(f.hits.count == 0, "a line that was there before the block is not tamper")
        // During the block someone appends a line of their own for a blocked name.
        let appended = Array("203.0.113.7 www.instagram.com\n".utf8)
        f.replace(with: f.bytes + appended)
        #expect(Run.eventually(timeout: 2) { String(decoding: f.bytes, as: UTF8.self).hasSuffix("# blockd-held: 203.0.113.7 www.instagram.com\n") })
        #expect(Run.eventually(timeout: 2) { f.hits.count == 1 })
        #expect(f.hits.all.map(\.selection) == ["instagram"] && f.hits.all.allSatisfy { $0.kind == .tamper })
        #expect(f.enforcer.apply(blocked: [reddit]).isEmpty)
        #expect(f.bytes == HostsFile.splice(original + appended, section: HostsFile.section(for: Site.hostsNames("reddit.com"))),
                "instagram's lines are back as soon as it is no longer blocked")
        #expect(f.enforcer.apply(blocked: []).isEmpty)
        #expect(f.bytes == original + appended, "byte for byte after the unlock")
    }

    @Test("E1: invalid domains from a selection are refused, never written")
    func invalidDomains() {
        let f = Fixture()
        let bad = Selection(name: "bad", domains: ["ok.example", "evil.com\n1.2.3.4 bank.com", "#x"])
        let failures = f.enforcer.apply(blocked: [bad])
        #expect(failures.count == 2)
        #expect(HostsFile.blockedDomains(in: f.bytes) == ["ok.example", "www.ok.example", "m.ok.example"])
        #expect(!String(decoding: f.bytes, as: UTF8.self).contains("bank.com"))
    }

    @Test("E1: where rename is impossible (a bind-mounted file) the file is written in place, and that is logged", .enabled(if: Privileged.can(needs: ["/usr/bin/unshare"]), Privileged.needsRoot))
    func bindMounted() throws {
        if Privileged.unavailable(needs: ["/usr/bin/unshare"]) != nil { return }
        let s = Sandbox()
        // Inside a private mount namespace, bind-mount a file over the sandbox hosts file and let
        // the real blockd block a selection through it.
        let script = """
            set -e
            cp '\(s.hostsPath)' '\(s.dir)/hosts.real'
            mount --bind '\(s.dir)/hosts.real' '\(s.hostsPath)'
            exec '\(Repo.binDir)/blockd' \(s.daemonArgs().map { "'\($0)'" }.joined(separator: " "))
            """
        s.write(script, to: "run.sh")
        _ = try s.launch("/usr/bin/unshare", ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                                              "/bin/sh", s.dir + "/run.sh"], output: s.logPath)
        try s.waitUntilServing()
        #expect(try s.request(#"start {"selections":["reddit"],"seconds":600}"#).hasPrefix("OK "))
        let real = s.dir + "/hosts.real"
        #expect(Run.eventually { HostsFile.blockedDomains(in: Array(FileManager.default.contents(atPath: real) ?? Data())).contains("reddit.com") },
                "log:\n\(s.log)")
        #expect(s.log.contains("writing it in place"))
    }
}

/// E1's write path under injected faults (SQLite-style: fail each call in turn) and §7
/// "Truth": a failed write is a failure, not enforced, retried until it succeeds.
@Suite("E1: hosts writes that fail", .serialized)
struct HostsFaultTests {
    @Test("E1: a file is read whole at any size, around the first buffer's size, and again after it grew")
    func readAllSizes() throws {
        let dir = try TempDir()
        for size in [0, 1, 4095, 4096, 4097, 8192, 70_000, 1 << 20] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let path = dir.path + "/f\(size)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let fd = open(path, O_RDWR)
            #expect(fd >= 0)
            defer { close(fd) }
            #expect(try AtomicFile.readAll(fd, path: path) == bytes, "\(size) bytes")
            // Grown after it was opened (the size read at open is a hint, not a limit).
            let more = [UInt8](repeating: 65, count: 9_000)
            #expect(pwrite(fd, more, more.count, off_t(size)) == more.count)
            #expect(try AtomicFile.readAll(fd, path: path) == bytes + more, "\(size) bytes and 9,000 more")
        }
    }

    @Test("E1: only EBUSY and EXDEV (rename impossible by nature) allow writing in place",
          arguments: [(EBUSY, true), (EXDEV, true), (ENOSPC, false), (EIO, false), (EROFS, false),
                      (EACCES, false), (EPERM, false), (EDQUOT, false), (ENOENT, false)])
    func inPlaceClassification(code: Int32, allowed: Bool) {
        #expect(AtomicFile.renameImpossibleByNature(code) == allowed, "errno \(code)")
    }

    /// An IO that fails its `failAt`-th call (counting allocate, write, truncate and sync); a
    /// failing write first writes half of what it was given, as a short write on a full disk does.
    static func io(failAt: Int, calls: UnsafeMutablePointer<Int>) -> AtomicFile.InPlaceIO {
        var io = AtomicFile.InPlaceIO()
        let real = io
        func fails() -> Bool {
            calls.pointee += 1
            return calls.pointee == failAt
        }
        io.allocate = { fd, n in fails() ? ENOSPC : real.allocate(fd, n) }
        io.write = { fd, bytes, offset in
            guard fails() else { return real.write(fd, bytes, offset) }
            _ = real.write(fd, UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count / 2)]), offset)
            return -Int(ENOSPC)
        }
        io.truncate = { fd, n in fails() ? EIO : real.truncate(fd, n) }
        io.sync = { fd in fails() ? EIO : real.sync(fd) }
        return io
    }

    @Test("E1: an in-place write that fails at any call leaves the original bytes and length",
          arguments: [("grows", 300), ("shrinks", -300)])
    func inPlaceRestores(_ kind: String, delta: Int) throws {
        let s = Sandbox()
        let original = Array((0..<4000).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) })
        let updated = Array(repeating: UInt8(ascii: "x"), count: original.count + delta)
        var failAt = 1
        while true {
            _ = FileManager.default.createFile(atPath: s.hostsPath, contents: Data(original))
            var calls = 0
            do {
                try AtomicFile.replaceInPlace(s.hostsPath, with: updated, io: HostsFaultTests.io(failAt: failAt, calls: &calls))
                #expect(calls < failAt)
                #expect(Array(FileManager.default.contents(atPath: s.hostsPath)!) == updated)
                break  // every call has been failed once
            } catch {
                #expect(Array(FileManager.default.contents(atPath: s.hostsPath)!) == original,
                        "\(kind): failing call \(failAt) lost bytes: \(error)")
            }
            failAt += 1
        }
        #expect(failAt > 3, "the write went through allocate/write/truncate/sync")
    }

    final class Counter: @unchecked Sendable {
        let lock = NSLock()
        var value = 0
        func bump() { lock.withLock { value += 1 } }
        var count: Int { lock.withLock { value } }
    }

    @Test("§7: a failed write leaves the selection not enforced, is retried with backoff, and its success is logged once")
    func failedWriteIsRetried() throws {
        let s = Sandbox()
        let dir = s.dir + "/missing"
        let log = MemorySink()
        let changes = Counter()
        let enforcer = HostsEnforcer(path: dir + "/hosts", log: log, onChange: { changes.bump() }, flushResolvers: {})
        let reddit = Selection(name: "reddit", domains: ["reddit.com"])
        let report = enforcer.enforce(blocked: [reddit])
        #expect(report.failures.count == 1)
        #expect(report.notEnforced.keys.sorted() == ["reddit"], "nothing was written, so reddit is not enforced")
        #expect(report.notEnforced["reddit"]?.contains("retries") == true)
        mkdir(dir, 0o755)
        #expect(Run.eventually(timeout: 5) {
            HostsFile.blockedDomains(in: Array(FileManager.default.contents(atPath: dir + "/hosts") ?? Data())) == Site.hostsNames("reddit.com")
        }, "retried without another apply")
        #expect(Run.eventually(timeout: 2) { changes.count == 1 }, "the engine is told once")
        #expect(log.entries.filter { $0.message.contains("written again; 3 domains blocked") }.count == 1)
        #expect(enforcer.enforce(blocked: [reddit]) == EnforcementReport())
        _ = enforcer.release()
    }

    @Test("E1: a symlinked hosts file is followed; the link stays a link and its target is replaced")
    func symlinkFollowed() throws {
        let s = Sandbox()
        mkdir(s.dir + "/real", 0o755)
        mkdir(s.dir + "/etc", 0o755)
        let target = s.dir + "/real/hosts", link = s.dir + "/etc/hosts"
        _ = FileManager.default.createFile(atPath: target, contents: Data(Sandbox.hostsTemplate.utf8))
        symlink("../real/hosts", link)
        let log = MemorySink()
        let enforcer = HostsEnforcer(path: link, log: log, flushResolvers: {})
        #expect(enforcer.apply(blocked: [Selection(name: "reddit", domains: ["reddit.com"])]).isEmpty)
        var st = stat()
        #expect(lstat(link, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        let blocked = Array(FileManager.default.contents(atPath: target) ?? Data())
        #expect(HostsFile.blockedDomains(in: blocked) == Site.hostsNames("reddit.com"))
        #expect(log.entries.contains { $0.message.contains("is a symlink") })
        #expect(enforcer.apply(blocked: []).isEmpty)
        #expect(Array(FileManager.default.contents(atPath: target) ?? Data()) == Array(Sandbox.hostsTemplate.utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: s.dir + "/real") == ["hosts"])
    }
}
