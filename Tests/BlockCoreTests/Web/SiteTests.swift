import Testing
@testable import BlockCore

/// W1: a domain stands for its whole site; a pasted address is read as what it names.
@Suite struct SiteTests {
    @Test("W1: the hosts file lists a name and its www. and m. forms, once", arguments: [
        ("roblox.com", ["roblox.com", "www.roblox.com", "m.roblox.com"]),
        ("games.roblox.com", ["games.roblox.com", "www.games.roblox.com", "m.games.roblox.com"]),
        ("www.roblox.com", ["www.roblox.com"]),
        ("m.facebook.com", ["m.facebook.com"]),
        ("mbasic.facebook.com", ["mbasic.facebook.com", "www.mbasic.facebook.com", "m.mbasic.facebook.com"]),
        ("wwwx.example", ["wwwx.example", "www.wwwx.example", "m.wwwx.example"]),
    ])
    func hostsNames(_ domain: String, _ names: [String]) {
        #expect(Site.hostsNames(domain) == names)
    }

    @Test("W1: a form that would pass 253 characters is left out, not cut")
    func tooLongForAPrefix() throws {
        func name(_ lengths: [Int]) throws -> String {
            try Domain.normalize(lengths.map { String(repeating: "a", count: $0) }.joined(separator: "."))
        }
        let fits = try name([61, 61, 61, 9])  // 195: both forms fit
        #expect(Site.hostsNames(fits).count == 3)
        let mOnly = try name([62, 62, 61, 62])  // 250: m. fits (252), www. does not (254)
        #expect(mOnly.utf8.count == 250 && Site.hostsNames(mOnly) == [mOnly, "m." + mOnly])
        let neither = try name([62, 62, 62, 63])  // 252
        #expect(Site.hostsNames(neither) == [neither])
        #expect(Site.hostsNames(mOnly).allSatisfy { (try? Domain.normalize($0)) == $0 })
    }

    @Test("W1: a domain covers itself and the names under it, never a name that only ends alike", arguments: [
        ("example.com", "example.com", true), ("example.com", "www.example.com", true),
        ("example.com", "a.b.example.com", true), ("example.com", "badexample.com", false),
        ("example.com", "example.com.evil", false), ("www.example.com", "example.com", false),
        ("example.com", "com", false), ("b.example.com", "a.b.example.com", true),
    ])
    func covers(_ domain: String, _ name: String, _ covered: Bool) {
        #expect(Site.covers(domain, name) == covered)
        let entry = Site.cover(of: name, in: [domain])
        #expect(entry == (covered ? domain : nil))
    }

    @Test("W1: the nearest blocked parent is the entry that covers a name")
    func nearestCover() {
        let blocked: Set = ["example.com", "b.example.com"]
        #expect(Site.cover(of: "a.b.example.com", in: blocked) == "b.example.com")
        #expect(Site.cover(of: "c.example.com", in: blocked) == "example.com")
        #expect(Site.cover(of: "example.org", in: blocked) == nil)
    }

    @Test("W1: a pasted address is read as its site, or as its pages' prefix when it has a path", arguments: [
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1s#comments", Site.Reading(kind: .prefix, target: "youtube.com/watch?v=dQw4w9WgXcQ&t=1s")),
        ("https://www.youtube.com/", Site.Reading(kind: .site, target: "youtube.com")),
        ("HTTP://Roblox.COM", Site.Reading(kind: .site, target: "roblox.com")),
        ("https://m.facebook.com/?", Site.Reading(kind: .site, target: "facebook.com")),
        ("https://games.roblox.com/", Site.Reading(kind: .site, target: "games.roblox.com")),
        ("https://user:pw@www.reddit.com:443/r/swift", Site.Reading(kind: .prefix, target: "reddit.com/r/swift")),
        ("https://www.com/", Site.Reading(kind: .site, target: "www.com")),
        ("https://bücher.example/Straße", Site.Reading(kind: .prefix, target: "xn--bcher-kva.example/Stra%C3%9Fe")),
        ("https://example.com?q=1", Site.Reading(kind: .prefix, target: "example.com/?q=1")),
    ])
    func readings(_ given: String, _ reading: Site.Reading) throws {
        #expect(try Site.reading(url: given) == reading)
    }

    @Test("W1: what is not an address is not read as one; a bad host is refused with the domain's reason", arguments: [
        "youtube.com", "youtube.com/shorts", "instagram", "ftp://example.com/",
    ])
    func notAddresses(_ given: String) throws {
        #expect(try Site.reading(url: given) == nil)
    }

    @Test("W1: an address whose host is not a name is refused, saying why")
    func badHosts() {
        for bad in ["https://127.0.0.1/", "https://localhost/x", "https://exa mple.com/", "https:///path"] {
            #expect(throws: CoreError.self, "\(bad)") { try Site.reading(url: bad) }
        }
    }

    @Test("W1: blockc says what it made of an address")
    func summaries() throws {
        let page = try #require(try Site.reading(url: "https://www.youtube.com/watch?v=x"))
        #expect(page.summary(of: "https://www.youtube.com/watch?v=x")
            == "read 'https://www.youtube.com/watch?v=x' as the pages under youtube.com/watch?v=x, blocked in browsers only (the rest of the site stays open; name the site youtube.com to block all of it)")
        let site = try #require(try Site.reading(url: "https://www.roblox.com/"))
        #expect(site.summary(of: "https://www.roblox.com/") == "read 'https://www.roblox.com/' as the site roblox.com and every name under it")
    }

    @Test("W1: the catalog resolves a pasted address to a selection of its site or prefix")
    func catalogReadsAddresses() throws {
        let site = try Catalog.standard.resolve("https://www.roblox.com/home")
        #expect(site.name == "roblox.com/home" && site.paths == ["roblox.com/home"] && site.domains.isEmpty)
        let whole = try Catalog.standard.resolve("https://www.roblox.com/")
        #expect(whole.name == "roblox.com" && whole.domains == ["roblox.com"] && whole.paths.isEmpty)
    }
}
