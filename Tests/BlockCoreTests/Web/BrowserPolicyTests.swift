import Testing
@testable import BlockCore

private func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }
private func text(_ b: [UInt8]?) -> String { b.map { String(decoding: $0, as: UTF8.self) } ?? "<nil>" }

@Suite struct URLPrefixTests {
    @Test("E8: URL prefixes are normalized: host through Domain.normalize, path kept or percent-encoded", arguments: [
        ("youtube.com/shorts", "youtube.com/shorts"),
        ("YouTube.COM/shorts", "youtube.com/shorts"),
        ("https://www.youtube.com/shorts/", "www.youtube.com/shorts/"),
        ("bücher.de/ä", "xn--bcher-kva.de/%C3%A4"),
        ("example.com/a%2fb", "example.com/a%2Fb"),
        ("example.com/100%", "example.com/100%25"),
        ("example.com/watch?v=1", "example.com/watch?v=1"),
        ("example.com/a<b>{c}|^`#", "example.com/a%3Cb%3E%7Bc%7D%7C%5E%60%23"),
    ])
    func normalizes(_ input: String, _ expected: String) throws {
        #expect(try URLPrefix.normalize(input) == expected)
    }

    @Test("E8: nothing that could break the JSON or the filter syntax gets through", arguments: [
        "example.com/a b", "example.com/a\"b", "example.com/a'b", "example.com/a\\b", "example.com/a\nb",
        "example.com/", "example.com", "exa mple.com/x", "localhost.localdomain/x", "https://example.com",
    ])
    func refuses(_ input: String) {
        #expect(throws: CoreError.self) { try URLPrefix.normalize(input) }
    }

    @Test("E8: a start argument with a path is an ad-hoc selection of that prefix only, no domain for the hosts file")
    func adHocPrefix() throws {
        let s = try Catalog.standard.resolve("YouTube.com/shorts")
        #expect(s.name == "youtube.com/shorts")
        #expect(s.paths == ["youtube.com/shorts"])
        #expect(s.domains.isEmpty)
        // The stored name resolves to the same selection again (the daemon re-resolves names).
        #expect(try Catalog.standard.resolve(s.name) == s)
        #expect(Names.blockName(for: [s.name, "reddit"]) == "youtube.com_shorts+reddit")
        try Names.validate(Names.blockName(for: ["example.com/a%20b"]), what: "block name")
    }

    @Test("E8: Paths= in a selection file is a list like Domains=, validated at load time")
    func pathsKey() throws {
        let s = try ConfigFiles.parseSelection(file: "f.conf", text: "[Selection]\nName=yt\nDomains=youtube.com\nPaths=youtube.com/shorts YouTube.com/feed/trending\nPaths=youtube.com/shorts\n")
        #expect(s.paths == ["youtube.com/shorts", "youtube.com/feed/trending"])
        #expect(s.domains == ["youtube.com"])
        let error = #expect(throws: CoreError.self) {
            try ConfigFiles.parseSelection(file: "f.conf", text: "[Selection]\nName=yt\nPaths=\"youtube.com/a\\\"b\"\n")
        }
        #expect(error?.message.hasPrefix("f.conf:3: Paths=:") == true)
        let shape = Shapes(clock: LocalClock.utc).selection(s)
        #expect(shape["paths"] == ["youtube.com/shorts", "youtube.com/feed/trending"])
    }
}

@Suite struct ChromiumPolicyTests {
    @Test("E7: URLBlocklist holds every domain and prefix of every blocked selection, DoH off; nothing blocked, no file")
    func document() throws {
        let blocked = [Selection(name: "a", domains: ["b.example.com", "a.example.com"], apps: ["steam"]),
                       Selection(name: "social.test/shorts", paths: ["social.test/shorts"]),
                       Selection(name: "c", domains: ["a.example.com"])]
        let doc = try #require(ChromiumPolicy.document(blocked: blocked))
        let json = try JSON.parse(bytes: doc)
        #expect(json["URLBlocklist"] == ["a.example.com", "b.example.com", "social.test/shorts"])
        #expect(json["DnsOverHttpsMode"] == "off")
        #expect(doc.last == UInt8(ascii: "\n"))
        #expect(ChromiumPolicy.document(blocked: []) == nil)
        // Apps only: still a block, so DoH stays off, with an empty list.
        let appsOnly = try JSON.parse(bytes: try #require(ChromiumPolicy.document(blocked: [Selection(name: "s", apps: ["steam"])])))
        #expect(appsOnly["URLBlocklist"] == [])
    }

    @Test("W3: while anything is blocked the document closes Incognito, guest and new profiles; nothing blocked, no document", arguments: [
        ([Selection(name: "a", domains: ["a.example.com"])], true),
        ([Selection(name: "s", apps: ["steam"])], true),
        ([Selection(name: "p", paths: ["social.test/shorts"])], true),
        ([], false),
    ])
    func closesPrivateWindows(_ blocked: [Selection], _ closed: Bool) throws {
        let doc = ChromiumPolicy.document(blocked: blocked)
        #expect((doc != nil) == closed)
        guard let doc else { return }
        let json = try JSON.parse(bytes: doc)
        #expect(json["IncognitoModeAvailability"] == 1, "1 is Chromium's \"disabled\"")
        #expect(json["BrowserGuestModeEnabled"] == false)
        #expect(json["BrowserAddPersonEnabled"] == false)
        #expect(json.object?.keys == ["URLBlocklist", "DnsOverHttpsMode", "IncognitoModeAvailability", "BrowserGuestModeEnabled", "BrowserAddPersonEnabled"])
    }

    @Test("E7: an unnormalized target from elsewhere never reaches the policy file")
    func unchecked() {
        #expect(ChromiumPolicy.blocklist([Selection(name: "x", domains: ["bad\"name.com"], paths: ["x.com/\"]}"])]) == [])
    }
}

/// W2: a selection allowing `allowed` ("everything but"), as `Catalog.resolve` makes it.
private func allowingOnly(_ allowed: Selection..., users: [UInt32]? = nil) -> Selection {
    var s = Selection(name: AllowOnly.name(allowing: allowed.map(\.name)))
    s.allowed = allowed
    s.users = users
    return s
}

private func site(_ domains: String...) -> Selection { Selection(name: domains[0], domains: domains) }
private func pages(_ paths: String...) -> Selection { Selection(name: paths[0], paths: paths) }
private func excepting(_ selection: Selection, _ hosts: String...) -> Selection {
    var s = selection
    s.exceptions = hosts
    return s
}

@Suite struct ChromiumAllowOnlyTests {
    static let school = site("school.test", "www.school.test")

    @Test("W2: URLBlocklist holds * and URLAllowlist what every allow-only window allows, less what a block covers", arguments: [
        // One window: its sites and whatever is under them, and Chromium's own pages.
        ([allowingOnly(school, site("editor.test"))], ["*"], ["chrome://*", "editor.test", "school.test", "www.school.test"]),
        // Two windows at once allow only what both allow; a prefix one allows under a site the other allows stays.
        ([allowingOnly(site("school.test"), site("wiki.test")), allowingOnly(pages("school.test/class"), site("wiki.test"), site("news.test"))],
         ["*"], ["chrome://*", "school.test/class", "wiki.test"]),
        ([allowingOnly(site("school.test")), allowingOnly(site("news.test"))], ["*"], ["chrome://*"]),
        // A block inside the window stays blocked: the same site is not allowed at all.
        ([allowingOnly(school), site("school.test")], ["*", "school.test"], ["chrome://*"]),
        // A subdomain blocked under an allowed site: the longer host wins in Chromium, games stays blocked.
        ([allowingOnly(school), site("games.school.test")], ["*", "games.school.test"], ["chrome://*", "school.test", "www.school.test"]),
        // A blocked prefix under an allowed site: the longer path wins.
        ([allowingOnly(site("school.test")), pages("school.test/games")], ["*", "school.test/games"], ["chrome://*", "school.test"]),
        // A blocked prefix of a parent site, an allowed subdomain: restated under it, or the allowed host would win.
        ([allowingOnly(site("www.school.test")), pages("school.test/games")], ["*", "school.test/games", "www.school.test/games"], ["chrome://*", "www.school.test"]),
        // A blocked site covers an allowed prefix or subdomain under it.
        ([allowingOnly(pages("school.test/class"), site("www.school.test")), site("school.test")], ["*", "school.test"], ["chrome://*"]),
        // Allowed prefixes: the allowed one stays, a blocked one inside it too, one covering it takes it out.
        ([allowingOnly(pages("school.test/class")), pages("school.test/class/games")], ["*", "school.test/class/games"], ["chrome://*", "school.test/class"]),
        ([allowingOnly(pages("school.test/class/a")), pages("school.test/class")], ["*", "school.test/class"], ["chrome://*"]),
        // AlwaysAllowed=: a host the engine excepts under a blocked site stays allowed (the longer host wins).
        ([allowingOnly(site("docs.google.test"), site("school.test")), excepting(site("google.test"), "docs.google.test")],
         ["*", "google.test"], ["chrome://*", "docs.google.test", "school.test"]),
        // An apps-only allowed selection opens no site; an unnormalized name never reaches the file.
        ([allowingOnly(Selection(name: "editor", apps: ["code"]), site("bad\"name.test"))], ["*"], ["chrome://*"]),
    ])
    func filters(_ blocked: [Selection], _ blocklist: [String], _ allowlist: [String]) throws {
        let json = try JSON.parse(bytes: try #require(ChromiumPolicy.document(blocked: blocked)))
        #expect(json["URLBlocklist"] == .array(blocklist.map { .string($0) }))
        #expect(json["URLAllowlist"] == .array(allowlist.map { .string($0) }))
        #expect(json.object?.keys == ["URLBlocklist", "URLAllowlist", "DnsOverHttpsMode", "IncognitoModeAvailability", "BrowserGuestModeEnabled", "BrowserAddPersonEnabled"])
        // Deterministic bytes: the order of windows and selections does not matter.
        #expect(ChromiumPolicy.document(blocked: blocked.reversed()) == ChromiumPolicy.document(blocked: blocked))
    }

    @Test("W2: an allow-only window from the catalog: its sites and prefixes allowed, status lists them without Chromium's pages")
    func fromCatalog() throws {
        let selection = try Catalog.standard.resolve("only:https://www.school.test/,wiki.test/class")
        let filters = try #require(ChromiumPolicy.AllowOnlyFilters([selection]))
        #expect(filters.allowed == ["school.test", "wiki.test/class"])
        #expect(filters.allowlist == ["chrome://*", "school.test", "wiki.test/class"])
        #expect(filters.blocklist == ["*"])
    }

    @Test("W2: a per-user allow-only window leaves the policy file as it would be without it")
    func perUserIgnored() throws {
        let block = site("reddit.test")
        #expect(ChromiumPolicy.document(blocked: [allowingOnly(Self.school, users: [1000]), block]) == ChromiumPolicy.document(blocked: [block]))
        #expect(ChromiumPolicy.document(blocked: [allowingOnly(Self.school, users: [1000])]) == nil)
        #expect(ChromiumPolicy.AllowOnlyFilters([allowingOnly(Self.school, users: [1000])]) == nil)
        // A per-user block beside a machine-wide window does not take a site out of the allowlist.
        var mine = site("school.test")
        mine.users = [1000]
        let json = try JSON.parse(bytes: try #require(ChromiumPolicy.document(blocked: [allowingOnly(Self.school), mine])))
        #expect(json["URLAllowlist"] == ["chrome://*", "school.test", "www.school.test"])
        #expect(json["URLBlocklist"] == ["*"])
    }

    @Test("W2: without an allow-only window the document is the E7 one, byte for byte")
    func oldBytes() throws {
        let blocked = [Selection(name: "a", domains: ["b.example.com", "a.example.com"], apps: ["steam"]),
                       Selection(name: "social.test/shorts", paths: ["social.test/shorts"])]
        let golden = """
        {
          "URLBlocklist": [
            "a.example.com",
            "b.example.com",
            "social.test/shorts"
          ],
          "DnsOverHttpsMode": "off",
          "IncognitoModeAvailability": 1,
          "BrowserGuestModeEnabled": false,
          "BrowserAddPersonEnabled": false
        }

        """
        #expect(text(ChromiumPolicy.document(blocked: blocked)) == golden)
        #expect(text(ChromiumPolicy.document(blocked: [Selection(name: "s", apps: ["steam"])])).contains("\"URLBlocklist\": []"))
    }
}


@Suite struct BrowserPolicySettingsTests {
    @Test("E7: BrowserPolicies=, PolicyRoot=, FirefoxPolicies= in blockd.conf; the flags win over the file")
    func layering() throws {
        #expect(DaemonConfig.defaults.browserPolicies && DaemonConfig.defaults.policyRoot == "/" && DaemonConfig.defaults.firefoxPolicies == nil)
        let file = try DaemonConfig.parseLayer(file: "b.conf", text: "[Daemon]\nBrowserPolicies=no\nPolicyRoot=/srv/sandbox\nFirefoxPolicies=/srv/ff.json\n")
        let fromFile = DaemonConfig.defaults.applying(file)
        #expect(!fromFile.browserPolicies && fromFile.policyRoot == "/srv/sandbox" && fromFile.firefoxPolicies == "/srv/ff.json")
        // The flags themselves are parsed in BlockdArgumentsTests.
        var flags = DaemonConfig.Layer()
        (flags.browserPolicies, flags.policyRoot, flags.firefoxPolicies) = (true, "/tmp/r", "/tmp/p.json")
        let both = fromFile.applying(flags)
        #expect(both.browserPolicies && both.policyRoot == "/tmp/r" && both.firefoxPolicies == "/tmp/p.json")
        #expect(throws: CoreError.self) { try DaemonConfig.parseLayer(file: "b.conf", text: "[Daemon]\nBrowserPolicies=sometimes\n") }
        #expect(throws: CoreError.self) { try DaemonConfig.parseLayer(file: "b.conf", text: "[Daemon]\nPolicyRoot=relative\n") }
    }
}

@Suite struct AlwaysAllowedPolicyTests {
    @Test("W2: an always-allowed host under a blocked site goes into URLAllowlist outside a window too; none, no URLAllowlist")
    func exceptions() throws {
        var video = Selection(name: "video", domains: ["video.example"])
        video.exceptions = ["edu.video.example"]
        let doc = try JSON.parse(bytes: try #require(ChromiumPolicy.document(blocked: [video])))
        #expect(doc["URLBlocklist"] == ["video.example"])
        #expect(doc["URLAllowlist"] == ["edu.video.example"])
        let plain = try JSON.parse(bytes: try #require(ChromiumPolicy.document(blocked: [Selection(name: "video", domains: ["video.example"])])))
        #expect(plain["URLAllowlist"] == nil)
    }
}
