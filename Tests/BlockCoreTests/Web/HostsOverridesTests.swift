import Testing
@testable import BlockCore

@Suite("E6: no hosts line outside the section gives a blocked name an address")
struct HostsOverridesTests {
    static let blocked: Set<String> = ["instagram.com", "www.instagram.com"]

    /// (what, file before, file while instagram is blocked)
    static let cases: [(String, String, String)] = [
        ("a line for a blocked name alone is held",
         "127.0.0.1 localhost\n203.0.113.7 instagram.com\n",
         "127.0.0.1 localhost\n# blockd-held: 203.0.113.7 instagram.com\n"),
        ("other names on the line keep resolving",
         "10.0.0.7\tnas instagram.com   # mine\n",
         "# blockd-held: 10.0.0.7\tnas instagram.com   # mine\n10.0.0.7 nas # blockd-kept\n"),
        ("names match without regard to case or a final dot",
         "203.0.113.7 WWW.Instagram.COM.\n",
         "# blockd-held: 203.0.113.7 WWW.Instagram.COM.\n"),
        ("CRLF line ends are kept",
         "203.0.113.7 instagram.com\r\n::1 localhost\r\n",
         "# blockd-held: 203.0.113.7 instagram.com\r\n::1 localhost\r\n"),
        ("a last line without a newline",
         "127.0.0.1 localhost\n10.0.0.7 nas instagram.com",
         "127.0.0.1 localhost\n# blockd-held: 10.0.0.7 nas instagram.com\n10.0.0.7 nas # blockd-kept"),
        ("comments, a name only in a comment and similar names are left alone",
         "# 203.0.113.7 instagram.com\n1.2.3.4 notinstagram.com # instagram.com\n1.2.3.4 instagram.com.evil\n",
         "# 203.0.113.7 instagram.com\n1.2.3.4 notinstagram.com # instagram.com\n1.2.3.4 instagram.com.evil\n"),
        ("W1: a line for a name under a blocked domain is held too",
         "203.0.113.7 cdn.instagram.com\n10.0.0.7 nas Static.WWW.Instagram.com\n",
         "# blockd-held: 203.0.113.7 cdn.instagram.com\n# blockd-held: 10.0.0.7 nas Static.WWW.Instagram.com\n10.0.0.7 nas # blockd-kept\n"),
        ("a user's own 0.0.0.0 line is held too (it is restored after)",
         "0.0.0.0 instagram.com\n",
         "# blockd-held: 0.0.0.0 instagram.com\n"),
    ]

    @Test("E6: override lines are held while blocked and restored byte for byte after", arguments: cases)
    func holdAndRestore(what: String, before: String, during: String) {
        let file = Array(before.utf8)
        let held = HostsOverrides.hold(file, blocked: Self.blocked)
        #expect(String(decoding: held.bytes, as: UTF8.self) == during, "\(what)")
        #expect(HostsOverrides.restore(held.bytes) == file, "\(what): restored byte for byte")
        #expect(HostsOverrides.hold(held.bytes, blocked: Self.blocked).bytes == held.bytes, "\(what): idempotent")
        #expect(HostsOverrides.hold(held.bytes, blocked: []).bytes == file, "\(what): nothing blocked restores all")
    }

    @Test("E6: the names a line gave an address to are reported, for tamper and status")
    func heldNames() {
        let file = Array("203.0.113.7 instagram.com\n10.0.0.7 nas www.instagram.com\n".utf8)
        let held = HostsOverrides.hold(file, blocked: Self.blocked)
        #expect(held.held == ["instagram.com", "www.instagram.com"])
        #expect(HostsOverrides.heldNames(in: held.bytes).isSuperset(of: ["instagram.com", "www.instagram.com"]))
        #expect(HostsOverrides.hold(Array("127.0.0.1 localhost\n".utf8), blocked: Self.blocked).held.isEmpty)
    }

    @Test("E6: the managed section is never touched")
    func sectionUntouched() throws {
        let section = try #require(HostsFile.section(for: ["instagram.com"]))
        let file = HostsFile.splice(Array("1.2.3.4 instagram.com\n".utf8), section: section)
        let held = HostsOverrides.hold(file, blocked: ["instagram.com"]).bytes
        #expect(held.starts(with: section))
        #expect(Array(held.dropFirst(section.count)) == Array("# blockd-held: 1.2.3.4 instagram.com\n".utf8))
    }

    @Test("E1 with E6: random files with random blocked names round-trip exactly")
    func randomRoundTrip() {
        var rng = SplitMix64(seed: 6)
        let pieces = ["127.0.0.1", "10.0.0.7", "::1", "instagram.com", "nas", "WWW.INSTAGRAM.COM", "x.example",
                      "# c", "\t", " ", "  ", "\r", "\u{FF}"]
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0..<8, using: &rng) {
                for _ in 0..<Int.random(in: 0..<5, using: &rng) {
                    text += pieces[Int.random(in: 0..<pieces.count, using: &rng)] + (Bool.random(using: &rng) ? " " : "")
                }
                text += Int.random(in: 0..<5, using: &rng) == 0 ? "\r\n" : "\n"
            }
            if Int.random(in: 0..<3, using: &rng) == 0, !text.isEmpty { text.removeLast() }
            let file = Array(text.utf8)
            let blocked: Set<String> = Int.random(in: 0..<2, using: &rng) == 0 ? ["instagram.com", "www.instagram.com"] : ["nas"]
            let held = HostsOverrides.hold(file, blocked: blocked)
            #expect(HostsOverrides.restore(held.bytes) == file, "\(text.debugDescription)")
            #expect(HostsOverrides.hold(held.bytes, blocked: blocked).bytes == held.bytes, "\(text.debugDescription)")
        }
    }

    @Test("E1 at scale: told where blockd's own section is, the splice scans none of it and writes what a scan gives, with the section where it says")
    func knownSection() {
        var rng = SplitMix64(seed: 11)
        let pieces = ["127.0.0.1", "10.0.0.7", "::1", "instagram.com", "nas", "www.instagram.com", "x.example", "# c", "\t", " ",
                      "# BEGIN blockd", "# END blockd", "0.0.0.0 a.example"]
        let sections: [Set<String>] = [[], ["instagram.com"], ["nas", "x.example"], ["a.example", "instagram.com"]]
        var checked = 0
        for _ in 0..<1_000 {
            var text = ""
            for _ in 0..<Int.random(in: 0..<8, using: &rng) {
                for _ in 0..<Int.random(in: 0..<4, using: &rng) { text += pieces[Int.random(in: 0..<pieces.count, using: &rng)] + " " }
                text += "\n"
            }
            // A file as the user left it, then blockd's writes: each starts from the last.
            var file = Array(text.utf8)
            var known: Range<Int>?
            for _ in 0..<4 {
                let names = sections[Int.random(in: 0..<sections.count, using: &rng)]
                let section = names.isEmpty ? nil : HostsFile.section(for: names.sorted())
                let blocking: ((String) -> Bool)? = names.isEmpty ? nil : { Site.cover(of: $0, in: names) != nil }
                let scanned = HostsOverrides.splice(file, section: section, blocking: blocking, known: nil)
                #expect(scanned.bytes == HostsOverrides.splice(file, section: section, blocking: blocking), "\(text.debugDescription)")
                if let known {
                    let told = HostsOverrides.splice(file, section: section, blocking: blocking, known: known)
                    #expect(told.bytes == scanned.bytes && told.section == scanned.section, "\(text.debugDescription)")
                    checked += 1
                }
                if let section, let at = scanned.section {
                    #expect(Array(scanned.bytes[at]) == section, "\(text.debugDescription)")
                    #expect(HostsFile.sectionRanges(in: scanned.bytes) == [at], "\(text.debugDescription)")
                } else {
                    #expect(scanned.section == nil && HostsFile.sectionRanges(in: scanned.bytes).isEmpty, "\(text.debugDescription)")
                }
                (file, known) = (scanned.bytes, scanned.section)
            }
        }
        #expect(checked > 1_000)
    }
}
