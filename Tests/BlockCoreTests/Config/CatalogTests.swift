import Testing
@testable import BlockCore

/// The error `Catalog.standard.resolve` throws for `argument`, or nil if it resolves.
private func resolveError(_ argument: String, in catalog: Catalog = .standard) -> CoreError? {
    do {
        _ = try catalog.resolve(argument)
        return nil
    } catch {
        return error
    }
}

@Suite struct CatalogTests {
    @Test("§1: the built-in catalog has the common services", arguments: [
        ("instagram", "www.instagram.com"), ("facebook", "www.facebook.com"), ("tiktok", "www.tiktok.com"),
        ("youtube", "www.youtube.com"), ("reddit", "www.reddit.com"), ("x", "x.com"), ("x", "twitter.com"),
        ("snapchat", "www.snapchat.com"), ("twitch", "www.twitch.tv"), ("netflix", "www.netflix.com"),
        ("discord", "discord.com"), ("steam", "store.steampowered.com"),
    ])
    func builtInNames(_ name: String, _ domain: String) throws {
        let selection = try #require(Catalog.standard.selection(named: name))
        #expect(selection.name == name)
        #expect(selection.domains.contains(domain))
        #expect(selection.openURL == nil)
    }

    @Test("E1: every built-in domain is already in normalized form, once",
          arguments: Catalog.builtIn.map(\.name))
    func builtInDomainsAreNormalized(_ name: String) throws {
        let selection = try #require(Catalog.builtIn.first { $0.name == name })
        try Names.validate(selection.name, what: "selection name")
        #expect(!selection.domains.isEmpty)
        #expect(Set(selection.domains).count == selection.domains.count, "duplicates in \(name)")
        for domain in selection.domains {
            #expect(try Domain.normalize(domain) == domain)
        }
    }

    @Test("§1: built-in names are unique and `names` is sorted")
    func namesSortedAndUnique() {
        let builtIn = Catalog.builtIn.map(\.name)
        #expect(Set(builtIn).count == builtIn.count)
        #expect(Catalog.standard.names == builtIn.sorted())
    }

    @Test("§1: a selection name resolves regardless of case", arguments: ["instagram", "Instagram", "YOUTUBE", "X"])
    func resolvesByName(_ argument: String) throws {
        let selection = try Catalog.standard.resolve(argument)
        #expect(selection.name == argument.lowercased())
        #expect(!selection.domains.isEmpty)
    }

    @Test("§1: a domain that is not a selection is an ad-hoc selection of that domain", arguments: [
        ("example.com", "example.com"), ("News.Example.ORG.", "news.example.org"), ("bücher.de", "xn--bcher-kva.de"),
    ])
    func adHocDomain(_ argument: String, _ domain: String) throws {
        let selection = try Catalog.standard.resolve(argument)
        #expect(selection == Selection(name: domain, domains: [domain]))
    }

    @Test("E1: an argument that looks like a domain but is not valid is an invalid-domain error", arguments: [
        "a..com", "1.2.3.4", "*.example.com", "-a.com", "example.com/a b", "😀.com",
    ])
    func adHocInvalid(_ argument: String) throws {
        let error = try #require(resolveError(argument))
        #expect(error.code == .invalidDomain)
    }

    @Test("§6: an unknown selection gets a did-you-mean suggestion", arguments: [
        ("instgram", "instagram"), ("Instagarm", "instagram"), ("insta", "instagram"), ("redit", "reddit"),
        ("yotube", "youtube"), ("tiktk", "tiktok"), ("discrod", "discord"), ("twich", "twitch"),
        ("netflx", "netflix"), ("stema", "steam"), ("facebok", "facebook"), ("snap", "snapchat"),
        ("twitter", "x"), ("Twitter", "x"), ("youtu", "youtube"),
    ])
    func suggestion(_ argument: String, _ expected: String) throws {
        let error = try #require(resolveError(argument))
        #expect(error.code == .unknownSelection)
        #expect(error.message.contains("did you mean '\(expected)'?"), "\(error.message)")
        #expect(error.message.hasSuffix("'blockc selections' lists them"))
    }

    @Test("§6: an unknown selection with nothing close still says where the list is", arguments: [
        "zzzzzz", "homework", "q", "a b", "line\nbreak",
    ])
    func noSuggestion(_ argument: String) throws {
        let error = try #require(resolveError(argument))
        #expect(error.code == .unknownSelection)
        #expect(!error.message.contains("did you mean"))
        #expect(error.message.contains("'blockc selections' lists them"))
        #expect(!error.message.contains { $0.isNewline })
    }

    @Test("§1: a configured selection replaces the built-in of the same name and adds new ones")
    func merging() throws {
        let mine = Selection(name: "Instagram", domains: ["instagram.com"], openURL: "https://example.org")
        let homework = Selection(name: "homework", domains: ["example.com"], apps: ["steam"])
        let catalog = Catalog.standard.merging([mine, homework])
        #expect(catalog.selection(named: "instagram") == mine)
        #expect(try catalog.resolve("homework") == homework)
        #expect(catalog.names.count == Catalog.builtIn.count + 1)
        #expect(catalog.names == catalog.names.sorted())
        #expect(Catalog.standard.selection(named: "instagram")?.domains.count ?? 0 > 1, "the original is unchanged")
    }

    @Test("§1: a later selection of the same name wins in init")
    func initLastWins() {
        let a = Selection(name: "work", domains: ["a.com"])
        let b = Selection(name: "work", domains: ["b.com"])
        #expect(Catalog(selections: [a, b]).selection(named: "work") == b)
        #expect(Catalog(selections: [a, b]).names == ["work"])
    }

    @Test("Suggest: OSA distance counts a swap of neighbours as one edit", arguments: [
        ("instagram", "instagram", 0), ("instgaram", "instagram", 1), ("redit", "reddit", 1),
        ("ab", "ba", 1), ("kitten", "sitting", nil), ("", "abc", nil),
    ] as [(String, String, Int?)])
    func distance(_ a: String, _ b: String, _ expected: Int?) {
        #expect(Suggest.distance(Array(a), Array(b), atMost: 2) == expected)
    }

    @Test("Suggest: nothing is suggested for unrelated or empty input")
    func suggestNothing() {
        #expect(Suggest.closest(to: "", among: ["x"]) == nil)
        #expect(Suggest.closest(to: "y", among: ["x"]) == nil)
        #expect(Suggest.closest(to: "zzzz", among: Catalog.standard.names) == nil)
        #expect(Suggest.closest(to: "instagrm", among: ["instagram", "telegram"]) == "instagram")
    }

    @Test("Suggest: among names in no order, equally close ones go to the first in name order, whatever the order given")
    func suggestUnordered() {
        #expect(Suggest.closest(to: "cat", amongUnordered: ["cot", "bat"]) == "bat")
        #expect(Suggest.closest(to: "cat", amongUnordered: ["bat", "cot"]) == "bat")
        #expect(Suggest.closest(to: "redit", amongUnordered: ["rebit", "reddit", "zzz"]) == "rebit")
        #expect(Suggest.closest(to: "homewrk", amongUnordered: Set(["homework", "games"])) == "homework")
        #expect(Suggest.closest(to: "zzzz", amongUnordered: ["homework"]) == nil)
    }
}
