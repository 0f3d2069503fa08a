import Foundation
import Testing
@testable import BlockCore

/// B2, B3 on the core: the browser extension's word (`web`, through its native-messaging host)
/// counts the site in the person's focused, visible tab into the report's ledger, into the
/// named selections that cover it, and into the limits whose selections' sites cover it, for
/// that person only; a reporter's word ends with its connection.
@Suite("B2: web time, decided by the core")
struct WebTimeTests {
    static let users = FakeEdge.users(["kid": 1001, "parent": 1000, "kid2": 1003], groups: ["blockd-admin": [1000]])
    /// kid's browsers: each native-messaging host speaks on a connection of its own.
    static func kid(_ connection: UInt64 = 7) -> Peer { var p = Peer(uid: 1001, mayModify: true); p.connection = connection; return p }
    static let kid2 = { var p = Peer(uid: 1003, mayModify: true); p.connection = 9; return p }()

    static func web(_ d: inout FakeEdge, _ site: String?, as peer: Peer) -> JSONObject? {
        ok(d.run(site.map { #"web {"site":"\#($0)"}"# } ?? "web {}", as: peer))
    }

    static func report(_ d: inout FakeEdge, as peer: Peer) throws -> JSON {
        let r = try #require(ok(d.run(#"report {"days":1}"#, as: peer)))
        return try #require(r["days"]?[0])
    }

    @Test("B2: the site in kid's focused tab counts for kid alone, a leading www. dropped; two browsers at once count once; 'none' stops the count")
    func countsPerPersonAndSite() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        let said = try #require(Self.web(&d, "www.YouTube.com", as: Self.kid()))
        #expect(said["site"] == "youtube.com")
        d.advance(20)
        _ = Self.web(&d, "youtube.com", as: Self.kid(8))  // a second browser on the same site
        d.advance(10)
        _ = Self.web(&d, nil, as: Self.kid())
        _ = Self.web(&d, nil, as: Self.kid(8))
        d.advance(30)
        #expect(try Self.report(&d, as: Self.kid())["web"] == ["youtube.com": 30], "20 s, then 10 s in two browsers at once: 30 s")
        #expect(try Self.report(&d, as: Self.kid2)["web"] == [:], "none of it is kid2's")
    }

    @Test("B2: what a browser said ends with its host's connection (the browser closed or crashed); another browser's word holds")
    func endsWithTheConnection() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = Self.web(&d, "reddit.com", as: Self.kid(7))
        _ = Self.web(&d, "wikipedia.org", as: Self.kid(8))
        d.advance(15)
        d.webEnded(uid: 1001, reporter: 7)
        d.advance(15)
        let web = try Self.report(&d, as: Self.kid())["web"]
        #expect(web == ["reddit.com": 15, "wikipedia.org": 30], "\(web ?? .null)")
        d.webEnded(uid: 1001, reporter: 8)
        #expect(d.core.webSites.isEmpty)
    }

    @Test("B2: a named selection's time includes its sites' web time, with its apps' as one interval")
    func selectionUse() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"schedule-add {"name":"later","window":"03:00-04:00","selections":["youtube"]}"#)))  // youtube is named now
        _ = Self.web(&d, "m.youtube.com", as: Self.kid())
        d.advance(40)
        _ = Self.web(&d, "example.org", as: Self.kid())
        d.advance(20)
        let day = try Self.report(&d, as: Self.kid())
        #expect(day["used"]?["youtube"] == 40 && day["web"] == ["youtube.com": 40, "example.org": 20], "\(day)")
    }

    @Test("B3: a limit whose selection has sites and apps counts web time and app time as one interval, for the person alone")
    func limitCountsWebTime() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#)))  // Apps=steam, Domains=store.steampowered.com...
        _ = Self.web(&d, "store.steampowered.com", as: Self.kid())
        d.advance(30)
        d.usage(running: ["games"], as: 1001)  // steam runs for kid too: one interval, not two
        d.advance(29.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforcedUsers == ["steam": [1001]], "kid's 60 s: \(d.enforcedUsers)")
        _ = Self.web(&d, "store.steampowered.com", as: Self.kid2)
        d.advance(30)
        #expect(d.enforcedUsers == ["steam": [1001]], "kid2 has used 30 s of kid2's own")
    }

    @Test("B2: a site is a host name; anything else is refused with what is expected, and nothing is counted")
    func refusesWhatIsNoSite() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        for bad in ["", "not a host", "http://youtube.com/"] {
            guard case .error(let e) = d.run(#"web {"site":"\#(bad)"}"#, as: Self.kid()) else { Issue.record("accepted '\(bad)'"); continue }
            #expect(e.code == .usage && e.message.hasPrefix("web: 'site'"), "\(e)")
        }
        #expect(d.core.webSites.isEmpty)
    }

    @Test("B4: the web answer lists what is blocked for the caller alone, as enforced for them: sites, pages, the end of their view and what more time would get")
    func blockedForTheCaller() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"start {"selections":["youtube"],"seconds":600,"name":"homework","users":["kid"]}"#)))
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":1200}"#)))
        let kid = try #require(Self.web(&d, nil, as: Self.kid()))
        let blocked = try #require(kid["blocked"]?.array)
        #expect(blocked.compactMap { $0["selection"]?.string } == ["reddit", "youtube"], "\(blocked)")
        let youtube = try #require(blocked.first { $0["selection"] == "youtube" })
        #expect(youtube["activities"] == ["homework"])
        #expect(youtube["until"] == "2026-11-29T20:10:00.000+09:00")
        #expect(youtube["domains"]?.array?.contains("youtube.com") == true && youtube["allowOnly"] == nil)
        #expect(youtube["more"] != nil, "the key is always there (null: no button)")
        let reddit = try #require(blocked.first { $0["selection"] == "reddit" })
        #expect(reddit["until"] == "2026-11-29T20:20:00.000+09:00")
        let other = try #require(Self.web(&d, nil, as: Self.kid2))
        #expect(other["blocked"]?.array?.compactMap { $0["selection"]?.string } == ["reddit"], "kid's block is not kid2's")
    }

    @Test("B4, W2: an allow-only window is given as what stays open, for the people it is for")
    func allowOnlyWindow() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"start {"selections":["only:school.example"],"seconds":600,"users":["kid"]}"#)))
        let kid = try #require(Self.web(&d, nil, as: Self.kid()))
        let window = try #require(kid["blocked"]?.array?.first)
        #expect(window["allowOnly"] == ["school.example"], "\(window)")
        #expect(try #require(Self.web(&d, nil, as: Self.kid2))["blocked"] == [])
    }

    @Test("B3: a limit on sites alone is used up by web time, for that person only, and the sites are then blocked for them until midnight; the answer says how much is left")
    func webOnlyLimit() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"limit-add {"name":"social","seconds":20,"selections":["youtube"]}"#)))
        let first = try #require(Self.web(&d, "www.youtube.com", as: Self.kid()))
        let limit = try #require(first["limits"]?.array?.first)
        #expect(limit["activity"] == "social" && limit["allowance"] == 20 && limit["left"] == 20 && limit["reached"] == false, "\(limit)")
        d.advance(19.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforcedUsers == ["youtube": [1001]], "\(d.enforcedUsers)")
        let after = try #require(Self.web(&d, "youtube.com", as: Self.kid()))
        let blocked = try #require(after["blocked"]?.array?.first)
        #expect(blocked["selection"] == "youtube" && blocked["activities"] == ["social"], "\(blocked)")
        #expect(blocked["until"] == "2026-11-30T00:00:00.000+09:00")
        #expect(after["limits"]?[0]?["reached"] == true && after["limits"]?[0]?["left"] == 0)
        let other = try #require(Self.web(&d, nil, as: Self.kid2))
        #expect(other["blocked"] == [] && other["limits"]?[0]?["left"] == 20, "kid2's own allowance is whole")
    }

    @Test("B3: without --warn a limit warns 5 minutes and 1 minute before it is used up, each once; an allowance shorter than a warning has none of it")
    func defaultWarnings() throws {
        var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(d.run(#"limit-add {"name":"social","seconds":1200,"selections":["youtube"]}"#)))
        _ = Self.web(&d, "youtube.com", as: Self.kid())
        d.advance(14 * 60 + 59)
        #expect(d.entries(.warning).isEmpty)
        d.advance(1)
        #expect(d.entries(.warning).count == 1, "5 minutes before")
        d.advance(3 * 60 + 59)
        #expect(d.entries(.warning).count == 1)
        d.advance(1)
        #expect(d.entries(.warning).count == 2, "1 minute before")
        d.advance(60)
        #expect(d.enforcedUsers == ["youtube": [1001]])
        #expect(d.entries(.warning).count == 2)

        var short = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: Self.users)
        _ = try #require(ok(short.run(#"limit-add {"name":"social","seconds":180,"selections":["youtube"]}"#)))
        _ = Self.web(&short, "youtube.com", as: Self.kid())
        short.advance(119.999)
        #expect(short.entries(.warning).isEmpty, "a 3-minute allowance has no 5-minute warning")
        short.advance(0.001)
        #expect(short.entries(.warning).count == 1, "and its 1-minute one")
        short.advance(60)
        #expect(short.entries(.warning).count == 1 && short.enforcedUsers == ["youtube": [1001]])
    }
}

