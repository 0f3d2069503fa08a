import Foundation
import Testing
@testable import BlockCore

/// W2: `users.d/` files' `AlwaysAllowed=` on the core: what a selection blocked for some users
/// alone is handed to enforcement with, per user.
@Suite("W2: a per-user AlwaysAllowed=, decided by the core")
struct CoreUserAlwaysAllowedTests {
    static func config() throws -> ConfigSet {
        let video = ConfigSource(path: "/etc/blockd/selections.d/video.conf", text: "[Selection]\nName=video\nDomains=video.example games.example\n")
        let kids = ConfigSource(path: "/etc/blockd/users.d/kids.conf", text: "[Users]\nUsers=@kids\nAlwaysAllowed=edu.video.example\n")
        let kid2 = ConfigSource(path: "/etc/blockd/users.d/kid2.conf", text: "[Users]\nUsers=kid2\nAlwaysAllowed=games.example\n")
        return try ConfigSet.load(daemonFile: nil, selectionFiles: [video], scheduleFiles: [], userFiles: [kids, kid2])
    }

    static func driver() throws -> FakeEdge { FakeEdge(config: try config(), users: CoreUserScopeTests.users) }

    @Test("W2: a block for kid, kid2 and parent is enforced per group of users: each without what their users.d files always allow")
    func perUserBlock() throws {
        var d = try Self.driver()
        _ = ok(d.run(#"start {"selections":["video"],"seconds":600,"users":["kid","kid2","parent"]}"#))
        let video = d.selections.filter { $0.name == "video" }
        // Grouped by the files naming them, in file order (kid2.conf, then kids.conf).
        #expect(video.map(\.users) == [[1002], [1004], [1001]], "\(video)")
        #expect(video[0].domains == ["video.example", "games.example"] && video[0].exceptions == nil, "parent: the block whole")
        #expect(video[1].domains == ["video.example"] && video[1].exceptions == ["edu.video.example"], "kid2: @kids' and its own")
        #expect(video[2].domains == ["video.example", "games.example"] && video[2].exceptions == ["edu.video.example"], "kid: @kids' site let through")
    }

    @Test("W2: a block for everyone stays whole (the hosts file and browser policies are the same for every user)")
    func machineWide() throws {
        var d = try Self.driver()
        _ = ok(d.run(#"start {"selections":["video"],"seconds":600}"#))
        #expect(d.selections.map(\.users) == [nil])
        #expect(d.selections.first?.exceptions == nil && d.selections.first?.domains.count == 2)
    }

    @Test("W2: kid's allow-only window allows what kid's users.d file always allows")
    func window() throws {
        var d = try Self.driver()
        _ = ok(d.run(#"start {"selections":["only:school.example"],"seconds":600,"users":["kid"]}"#))
        let window = try #require(d.selections.first)
        #expect(window.users == [1001])
        #expect(window.allowedHosts == ["school.example", "edu.video.example"], "\(window.allowedHosts)")
    }
}
