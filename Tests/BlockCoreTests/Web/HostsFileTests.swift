import Testing
@testable import BlockCore

@Suite("E1: the managed section of the hosts file")
struct HostsFileTests {
    static let debian = "127.0.0.1\tlocalhost\n127.0.1.1\tvm\n\n# The following lines are desirable for IPv6 capable hosts\n::1     localhost ip6-localhost ip6-loopback\nff02::1 ip6-allnodes\n"
    static let oddFiles: [(String, [UInt8])] = [
        ("debian default", Array(debian.utf8)),
        ("empty", []),
        ("no final newline", Array("127.0.0.1 localhost\n10.0.0.2 nas".utf8)),
        ("CRLF", Array("127.0.0.1 localhost\r\n10.0.0.2 nas\r\n".utf8)),
        ("only comments", Array("# nothing here\n#\n".utf8)),
        ("not UTF-8", [0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e, 0x30, 0x2e, 0x31, 0x20, 0xff, 0xfe, 0x0a, 0xc3, 0x28]),
        ("user lines that look like ours", Array("0.0.0.0 ads.example\n:: ads.example\n".utf8)),
        ("a lone CR and NUL", [0x0d, 0x00, 0x0a, 0x0d]),
    ]

    @Test("E1: adding then removing the section restores every byte", arguments: oddFiles)
    func roundTrip(name: String, file: [UInt8]) throws {
        let section = try #require(HostsFile.section(for: ["instagram.com", "www.instagram.com"]))
        let blocked = HostsFile.splice(file, section: section)
        #expect(blocked.starts(with: section), "a new section goes first")
        #expect(Array(blocked.dropFirst(section.count)) == file)
        #expect(HostsFile.blockedDomains(in: blocked) == ["instagram.com", "www.instagram.com"])
        #expect(HostsFile.splice(blocked, section: section) == blocked, "idempotent: nothing to write")
        #expect(HostsFile.splice(blocked, section: nil) == file)
        #expect(HostsFile.splice(file, section: nil) == file)
    }

    @Test("E1: the section format is 0.0.0.0 d and :: d between marker lines")
    func format() throws {
        let text = String(decoding: try #require(HostsFile.section(for: ["a.example", "b.example"])), as: UTF8.self)
        #expect(text == """
            # BEGIN blockd: managed by blockd(8); edits here are undone while blocks are active
            0.0.0.0 a.example
            :: a.example
            0.0.0.0 b.example
            :: b.example
            # END blockd

            """)
        #expect(HostsFile.section(for: []) == nil)
    }

    @Test("E1: a section the user moved is replaced where it stands; bytes around it are kept")
    func movedSection() throws {
        let old = try #require(HostsFile.section(for: ["x.example"]))
        let file = Array("before\n".utf8) + old + Array("after, no newline".utf8)
        let new = try #require(HostsFile.section(for: ["y.example"]))
        #expect(HostsFile.splice(file, section: new) == Array("before\n".utf8) + new + Array("after, no newline".utf8))
        #expect(HostsFile.splice(file, section: nil) == Array("before\nafter, no newline".utf8))
    }

    @Test("E1: duplicated sections collapse into one; a BEGIN without END never swallows user lines")
    func damagedSections() throws {
        let s = try #require(HostsFile.section(for: ["x.example"]))
        let dup = s + Array("mine\n".utf8) + s
        #expect(HostsFile.splice(dup, section: s) == s + Array("mine\n".utf8))
        let begin = HostsFile.beginMarker + [10]
        let unterminated = Array("a\n".utf8) + begin + Array("0.0.0.0 x.example\n:: x.example\n10.1.1.1 printer\nb\n".utf8)
        #expect(HostsFile.splice(unterminated, section: nil) == Array("a\n10.1.1.1 printer\nb\n".utf8))
        #expect(HostsFile.splice(unterminated, section: s) == Array("a\n".utf8) + s + Array("10.1.1.1 printer\nb\n".utf8))
    }

    @Test("E1: markers are recognised with CRLF line ends too")
    func crlfMarkers() throws {
        let crlf = HostsFile.beginMarker + [13, 10] + Array("0.0.0.0 x.example\r\n:: x.example\r\n".utf8) + HostsFile.endMarker + [13, 10]
        let file = Array("keep\r\n".utf8) + crlf + Array("tail\r\n".utf8)
        #expect(HostsFile.splice(file, section: nil) == Array("keep\r\ntail\r\n".utf8))
        #expect(HostsFile.blockedDomains(in: file) == ["x.example"])
    }

    @Test("E1: 1,000 random block/unblock cycles with user edits outside the section lose nothing")
    func manyCycles() {
        var rng = SplitMix64(seed: 0xb10c_d0e5)
        let pool = (0..<40).map { "d\($0).example.com" }
        var userFile = Array(HostsFileTests.debian.utf8)
        var current = userFile
        for cycle in 0..<1000 {
            let count = Int(rng.next() % 6)
            let domains = (0..<count).map { _ in pool[Int(rng.next() % UInt64(pool.count))] }
            current = HostsFile.splice(current, section: HostsFile.section(for: domains))
            if cycle % 7 == 0 {
                // The user appends a line of their own, outside the section (at the end).
                let line = Array("10.0.\(cycle % 256).1 host\(cycle)\n".utf8)
                userFile += line
                current += line
            }
            #expect(HostsFile.splice(current, section: nil) == userFile, "cycle \(cycle)")
            if HostsFile.splice(current, section: nil) != userFile { return }
        }
    }

    @Test("E1: a 100,000-domain section is built and spliced")
    func large() throws {
        let domains = (0..<100_000).map { "d\($0).example.com" }
        let section = try #require(HostsFile.section(for: domains))
        let file = HostsFile.splice(Array(HostsFileTests.debian.utf8), section: section)
        #expect(HostsFile.blockedDomains(in: file).count == 100_000)
        #expect(HostsFile.splice(file, section: nil) == Array(HostsFileTests.debian.utf8))
    }
}
