import Testing
@testable import BlockCore

@Suite("U3: the per-user table libnss_blockd.so.2 reads")
struct UserTableTests {
    @Test("a table lists the uid's names normalised, sorted and once each, after one header line")
    func rendersSortedAndDeduplicated() throws {
        let bytes = try UserTable.render(uid: 1000, domains: ["www.Reddit.com", "instagram.com", "reddit.com", "instagram.com."])
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text == """
            # blockd: names blocked for uid 1000 only, each with the names under it; read by libnss_blockd.so.2, rewritten by blockd(8)
            instagram.com
            reddit.com
            www.reddit.com

            """)
        #expect(UserTable.domains(in: bytes) == ["instagram.com", "reddit.com", "www.reddit.com"])
    }

    @Test("the same names in any order give the same bytes (an unchanged table is never rewritten)")
    func deterministic() throws {
        let a = try UserTable.render(uid: 7, domains: ["b.example", "a.example", "c.example"])
        let b = try UserTable.render(uid: 7, domains: ["c.example", "b.example", "a.example", "b.example"])
        #expect(a == b)
    }

    @Test("non-ASCII names go in as punycode, as in the hosts file")
    func punycode() throws {
        let bytes = try UserTable.render(uid: 1, domains: ["bücher.example"])
        #expect(UserTable.domains(in: bytes) == ["xn--bcher-kva.example"])
    }

    @Test("a name that could not go into the hosts file cannot go into a table either", arguments: [
        "evil.com\n0.0.0.0 other.com", "a b.com", "#comment.com", "", "localhost",
    ])
    func refusesWhatTheHostsFileRefuses(name: String) {
        #expect(throws: CoreError.self) { try UserTable.render(uid: 1000, domains: [name]) }
    }

    @Test("file names are the uid in decimal; the directory is the one compiled into the module")
    func paths() {
        #expect(UserTable.fileName(uid: 0) == "0")
        #expect(UserTable.fileName(uid: 4_294_967_294) == "4294967294")
        #expect(UserTable.directory == "/run/blockd/users")
        #expect(UserTable.uid(fileName: "1000") == 1000 && UserTable.uid(fileName: "01000") == nil)
        #expect(UserTable.uid(fileName: "4294967295") == nil, "(uid_t)-1 is no user's")
    }

    @Test("W2: an allow-only window adds `*` and a `!` line per allowed host no blocked name covers")
    func allowOnly() throws {
        let bytes = try UserTable.render(uid: 1001, domains: ["games.school.example", "video.example"],
                                         allowOnly: ["school.example", "video.example", "wiki.example"])
        #expect(String(decoding: bytes, as: UTF8.self) == """
            # blockd: names blocked for uid 1001 only, each with the names under it; read by libnss_blockd.so.2, rewritten by blockd(8)
            games.school.example
            video.example
            # allow-only: every other name is blocked but these, each with the names under it
            *
            !school.example
            !wiki.example

            """, "a blocked site inside the window stays blocked: video.example gets no `!` line")
        #expect(UserTable.domains(in: bytes) == ["games.school.example", "video.example"])
        #expect(UserTable.allowed(in: bytes) == ["school.example", "wiki.example"])
        #expect(UserTable.allowed(in: try UserTable.render(uid: 1, domains: ["a.example"])) == nil, "no window, no `*`")
        #expect(UserTable.allowed(in: try UserTable.render(uid: 1, domains: [], allowOnly: [])) == [], "a window allowing nothing: `*` alone")
    }

    @Test("W1: the machine-wide table `all` lists the names blocked for every user, readable by all")
    func machineWide() throws {
        #expect(UserTable.fileName(uid: UserTable.everyone) == "all")
        #expect(UserTable.uid(fileName: "all") == UserTable.everyone)
        #expect(UserTable.access(uid: UserTable.everyone, owner: 0) == UserTable.Access(mode: 0o644, acl: nil))
        let text = String(decoding: try UserTable.render(uid: UserTable.everyone, domains: ["roblox.com"]), as: UTF8.self)
        #expect(text == "# blockd: names blocked for every user, each with the names under it; read by libnss_blockd.so.2, rewritten by blockd(8)\nroblox.com\n")
    }

    @Test("U3: names are sorted in byte order by their eight-byte keys, ties and prefixes included (2,000 random lists)")
    func sortedByKeys() throws {
        let seed: UInt64 = 0x03_5047
        var rng = SplitMix64(seed: seed)
        let parts = ["a", "ab", "abcdefgh", "abcdefghi", "abcdefg-", "z9", "0", "xn--bcher-kva", "example", "m", "www"]
        for round in 0..<2000 {
            let domains = (0..<Int(rng.next() % 12)).map { _ in
                (0..<Int(2 + rng.next() % 3)).map { _ in parts[Int(rng.next() % UInt64(parts.count))] }.joined(separator: ".")
            }.filter { (try? Domain.normalize($0)) != nil }
            let expected = Set(try domains.map { (d) throws(CoreError) in try Domain.normalize(d) }).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            let sorted = try UserTable.sortedNames(domains)
            #expect(sorted == expected, "seed \(seed), round \(round): \(domains)")
            if sorted != expected { return }
        }
    }
}
