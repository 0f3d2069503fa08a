import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

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
        func replace(with text: [UInt8]) {
            // As an editor does: write a new file and rename it over.
            FileManager.default.createFile(atPath: path + ".edit", contents: Data(text))
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
        // The user strips the section but also adds a line of their own.
        f.replace(with: HostsFile.splice(blocked, section: nil) + Array("\n10.9.9.9 mine\n".utf8))
        #expect(Sandbox().eventually(timeout: 2) { HostsFile.blockedDomains(in: f.bytes).count == 3 })
        #expect(String(decoding: f.bytes, as: UTF8.self).hasSuffix("10.9.9.9 mine\n"), "the user's own edit stays")
        #expect(Sandbox().eventually(timeout: 2) { f.hits.count == 2 })
        #expect(Set(f.hits.all.map(\.selection)) == ["instagram", "reddit"])
        #expect(f.hits.all.allSatisfy { $0.kind == .tamper && $0.path == f.path })
        // Editing one line inside the section counts against the selection that lost it.
        let count = f.hits.count
        f.replace(with: Array(String(decoding: f.bytes, as: UTF8.self).replacingOccurrences(of: "0.0.0.0 reddit.com\n", with: "").utf8))
        #expect(Sandbox().eventually(timeout: 2) { f.hits.count == count + 1 })
        #expect(f.hits.all.last?.selection == "reddit")
        // With nothing blocked, edits are the user's business.
        _ = f.enforcer.apply(blocked: [])
        f.replace(with: Array("only mine\n".utf8))
        usleep(300_000)
        #expect(f.bytes == Array("only mine\n".utf8))
    }

    @Test("E1: invalid domains from a selection are refused, never written")
    func invalidDomains() {
        let f = Fixture()
        let bad = Selection(name: "bad", domains: ["ok.example", "evil.com\n1.2.3.4 bank.com", "#x"])
        let failures = f.enforcer.apply(blocked: [bad])
        #expect(failures.count == 2)
        #expect(HostsFile.blockedDomains(in: f.bytes) == ["ok.example"])
        #expect(!String(decoding: f.bytes, as: UTF8.self).contains("bank.com"))
    }

    @Test("E1: where rename is impossible (a bind-mounted file) the file is written in place, and that is logged")
    func bindMounted() throws {
        if Privileged.unavailable(needs: ["/usr/bin/unshare"]) != nil { return }
        let s = Sandbox()
        // Inside a private mount namespace, bind-mount a file over the sandbox hosts file and let
        // the real blockd block a selection through it.
        let script = """
            set -e
            cp '\(s.hostsPath)' '\(s.dir)/hosts.real'
            mount --bind '\(s.dir)/hosts.real' '\(s.hostsPath)'
            exec '\(Sandbox.binDir)/blockd' \(s.daemonArgs().map { "'\($0)'" }.joined(separator: " "))
            """
        s.write(script, to: "run.sh")
        _ = try s.launch("/usr/bin/unshare", ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                                              "/bin/sh", s.dir + "/run.sh"], output: s.logPath)
        try s.waitUntilServing()
        #expect(try s.request(#"start {"selections":["reddit"],"seconds":600}"#).hasPrefix("OK "))
        let real = s.dir + "/hosts.real"
        #expect(s.eventually { HostsFile.blockedDomains(in: Array(FileManager.default.contents(atPath: real) ?? Data())).contains("reddit.com") },
                "log:\n\(s.log)")
        #expect(s.log.contains("writing it in place"))
    }
}
