import Testing
@testable import BlockCore

/// W2: `AlwaysAllowed=`, what no block ever covers.
@Suite struct AlwaysAllowedTests {
    static let always = AlwaysAllowed([Selection(name: "school", domains: ["school.example", "edu.video.example"],
                                                 apps: ["/usr/bin/gedit"], paths: ["wiki.example/math"])])

    @Test("W2: a blocked selection loses what is always allowed; a host under a domain it still blocks becomes an exception")
    func applied() {
        let social = Selection(name: "social", domains: ["school.example", "www.school.example", "video.example", "other.example"],
                               apps: ["/usr/bin/gedit", "/usr/games/x"], paths: ["school.example/games", "wiki.example/math/1", "wiki.example/art"])
        let s = Self.always.applied(to: social)
        #expect(s.domains == ["video.example", "other.example"], "school.example and the names under it are never blocked")
        #expect(s.exceptions == ["edu.video.example"], "video.example stays blocked, edu.video.example is let through")
        #expect(s.apps == ["/usr/games/x"])
        #expect(s.paths == ["wiki.example/art"], "prefixes under an always-allowed site or prefix go, others stay: \(s.paths)")
    }

    @Test("W2: every allow-only window lets the always-allowed through; with none configured nothing changes")
    func allowOnlyAndEmpty() throws {
        let window = try Catalog.standard.resolve("only:other.example")
        #expect(Self.always.applied(to: window).allowed?.map(\.name) == ["other.example", "school"])
        #expect(Self.always.applied(to: window).allowedHosts.contains("edu.video.example"))
        let social = Selection(name: "social", domains: ["school.example"])
        #expect(AlwaysAllowed([]).applied(to: social) == social)
    }

    @Test("W2: AlwaysAllowed= in blockd.conf resolves against the catalog; an unknown name or an allow-only expression is refused with file and line")
    func configured() {
        let conf = ConfigSource(path: "/etc/blockd/blockd.conf", text: "[Daemon]\nAlwaysAllowed=school.example\nAlwaysAllowed=youtube\n")
        let (set, problems) = ConfigSet.assemble(daemonFile: conf, selectionFiles: [], scheduleFiles: [])
        #expect(problems.isEmpty)
        #expect(set.alwaysAllowed.selections.map(\.name) == ["school.example", "youtube"] && set.alwaysAllowed.hosts.contains("www.youtube.com"))
        let bad = ConfigSource(path: "/etc/blockd/blockd.conf", text: "[Daemon]\nKillGrace=5s\nAlwaysAllowed=nosuch\n")
        let (_, errors) = ConfigSet.assemble(daemonFile: bad, selectionFiles: [], scheduleFiles: [])
        #expect(errors.first?.message.hasPrefix("/etc/blockd/blockd.conf:3: AlwaysAllowed=: no selection named 'nosuch'") == true, "\(errors)")
    }

    @Test("W2: an always-allowed host under a listed name gets a `!` line, without a window too")
    func tableExceptions() throws {
        let bytes = try UserTable.render(uid: UserTable.everyone, domains: ["video.example"], exceptions: ["edu.video.example"])
        #expect(UserTable.domains(in: bytes) == ["video.example"])
        #expect(UserTable.allowed(in: bytes) == nil, "no `*`: not a window")
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix("!edu.video.example\n"))
    }
}
