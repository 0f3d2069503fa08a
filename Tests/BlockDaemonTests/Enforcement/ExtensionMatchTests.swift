import BlockTestTools
import Foundation
import Testing

/// B4 and B2: the extension's matching (browser/common/match.js), run by node, table by table:
/// which entries of a state block a URL, and the same answer from the declarativeNetRequest
/// rules Chromium is given, read by a model of how Chromium applies them (requestDomains and
/// excludedRequestDomains cover a name and the names under it, regexFilter is a regular
/// expression, regexSubstitution's \0 is the whole URL). node is one of the tools scripts/deps
/// installs: with BLOCKD_PRIVILEGED_TESTS=1 these tests run and fail without it; elsewhere they
/// are skipped without it, saying why. The real browsers are torture/browser_ext.py's.
@Suite("B4: which URLs the extension blocks")
struct ExtensionMatchTests {
    static let node = "/usr/bin/node"
    static let match = Repo.root + "/browser/common/match.js"
    static let blockPage = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/block.html"

    /// One URL against a state: the selections that block it, in order. `dnr: false` for a URL
    /// Chromium's rules are not expected to agree on.
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var state: String
        var url: String
        var blockedBy: [String]
        var dnr = true
        var testDescription: String { name }
    }

    static let social = #"{"selection": "social", "until": null, "domains": ["instagram.com", "tiktok.com"], "exceptions": ["help.instagram.com"], "paths": []}"#
    static let shorts = #"{"selection": "shorts", "until": null, "domains": [], "exceptions": [], "paths": ["youtube.com/shorts", "youtube.com/watch?v=x"]}"#
    static let school = #"{"selection": "only:school", "until": null, "allowOnly": ["school.com", "wiki.org/math"]}"#
    static func state(_ entries: String...) -> String { #"{"blocked": ["# + entries.joined(separator: ", ") + "]}" }
    static func ending(_ until: String) -> String {
        state(#"{"selection": "social", "until": "\#(until)", "domains": ["instagram.com"], "exceptions": [], "paths": []}"#)
    }

    static let rows: [Row] = [
        Row(name: "a domain covers itself", state: state(social), url: "https://instagram.com/", blockedBy: ["social"]),
        Row(name: "and every name under it", state: state(social), url: "https://www.instagram.com/p/1?x=2", blockedBy: ["social"]),
        Row(name: "never a name that only ends alike", state: state(social), url: "https://badinstagram.com/", blockedBy: []),
        Row(name: "an exception stays open", state: state(social), url: "https://help.instagram.com/a", blockedBy: []),
        Row(name: "and the names under it", state: state(social), url: "http://en.help.instagram.com/", blockedBy: []),
        Row(name: "a port, user info and upper case change nothing", state: state(social),
            url: "https://user@WWW.Instagram.com:8443/x", blockedBy: ["social"]),
        Row(name: "a trailing dot is the same name (Chromium's rules are not asked)", state: state(social),
            url: "https://instagram.com./", blockedBy: ["social"], dnr: false),
        Row(name: "http only and https only: not ftp, files or the browser's pages", state: state(social),
            url: "ftp://instagram.com/", blockedBy: []),
        Row(name: "a path prefix blocks the pages under it", state: state(shorts), url: "https://www.youtube.com/shorts/abc", blockedBy: ["shorts"]),
        Row(name: "a path prefix is a prefix of the path", state: state(shorts), url: "https://youtube.com/shortsfeed", blockedBy: ["shorts"]),
        Row(name: "the rest of the site stays open", state: state(shorts), url: "https://youtube.com/watch?v=y", blockedBy: []),
        Row(name: "a prefix with a query", state: state(shorts), url: "https://m.youtube.com/watch?v=x&t=10", blockedBy: ["shorts"]),
        Row(name: "a path is case-sensitive", state: state(shorts), url: "https://youtube.com/Shorts/abc", blockedBy: []),
        Row(name: "a prefix on another port", state: state(shorts), url: "http://youtube.com:8080/shorts", blockedBy: ["shorts"]),
        Row(name: "allow-only: an allowed site is open", state: state(school), url: "https://school.com/", blockedBy: []),
        Row(name: "allow-only: and the names under it", state: state(school), url: "https://www.school.com/x", blockedBy: []),
        Row(name: "allow-only: an allowed prefix opens its whole site", state: state(school), url: "https://wiki.org/art", blockedBy: []),
        Row(name: "allow-only: every other site is blocked", state: state(school), url: "https://example.com/", blockedBy: ["only:school"]),
        Row(name: "allow-only: an address too", state: state(school), url: "http://127.0.0.1:8000/", blockedBy: ["only:school"]),
        Row(name: "allow-only: not the browser's pages", state: state(school), url: "chrome://settings/", blockedBy: []),
        Row(name: "allow-only: not the extension's own pages", state: state(school), url: blockPage + "#https://example.com/", blockedBy: []),
        Row(name: "allow-only: not about:blank", state: state(school), url: "about:blank", blockedBy: []),
        Row(name: "allow-only: not files", state: state(school), url: "file:///etc/hosts", blockedBy: []),
        Row(name: "a block inside an allow-only window blocks an allowed site", state: state(school, #"{"selection": "games", "until": null, "domains": ["games.school.com"]}"#),
            url: "https://games.school.com/", blockedBy: ["games"]),
        Row(name: "two entries: both, in the state's order", state: state(shorts, school), url: "https://youtube.com/shorts/1",
            blockedBy: ["shorts", "only:school"]),
        Row(name: "an entry whose end has passed blocks nothing", state: ending("2001-01-01T00:00:00Z"), url: "https://instagram.com/", blockedBy: []),
        Row(name: "one whose end is to come blocks", state: ending("2099-01-01T00:00:00+09:00"), url: "https://instagram.com/", blockedBy: ["social"]),
        Row(name: "no state blocks nothing", state: #"{}"#, url: "https://instagram.com/", blockedBy: []),
    ]

    /// What node says for each row: {blockedBy, redirect (what Chromium's rules make of it)}.
    static func run(_ rows: [Row]) throws -> [[String: Any]] {
        let dir = try TempDir(prefix: "bd-match-")
        let table = try JSONSerialization.data(withJSONObject: rows.map { ["state": $0.state, "url": $0.url] })
        try table.write(to: URL(fileURLWithPath: dir.path + "/table.json"))
        try driver.write(toFile: dir.path + "/driver.js", atomically: true, encoding: .utf8)
        let out = try Run.capture(node, [dir.path + "/driver.js", match, dir.path + "/table.json", blockPage])
        guard out.status == 0, let results = try JSONSerialization.jsonObject(with: Data(out.output.utf8)) as? [[String: Any]]
        else { throw TestFailure("node \(dir.path)/driver.js failed (\(out.status)): \(out.output)") }
        return results
    }

    /// Each row through match.js's blockedBy and dnrRules. `now` is fixed: 2026-06-01.
    static let driver = #"""
        const [match, tablePath, blockPage] = process.argv.slice(2);
        const M = require(match);
        const now = Date.parse("2026-06-01T12:00:00Z");
        const table = JSON.parse(require("fs").readFileSync(tablePath, "utf8"));
        // How Chromium applies a rule to a top-level navigation (declarativeNetRequest's docs).
        function redirect(rules, url) {
          let href;
          try { href = new URL(url).href; } catch (e) { return null; }
          if (!/^(https?|wss?):/.test(href)) return null;
          const host = new URL(href).hostname;
          const under = (d) => host === d || host.endsWith("." + d);
          for (const r of rules) {
            const c = r.condition;
            if (!c.resourceTypes.includes("main_frame")) continue;
            if (c.requestDomains && !c.requestDomains.some(under)) continue;
            if (c.excludedRequestDomains && c.excludedRequestDomains.some(under)) continue;
            const m = new RegExp(c.regexFilter, c.isUrlFilterCaseSensitive ? "" : "i").exec(href);
            if (m) return r.action.redirect.regexSubstitution.replace("\\0", m[0]);
          }
          return null;
        }
        const out = table.map(({ state, url }) => {
          const s = JSON.parse(state);
          const rules = M.dnrRules(s, blockPage, now);
          const ids = rules.map((r) => r.id);
          return { blockedBy: M.blockedBy(s, url, now).map((e) => e.selection), redirect: redirect(rules, url),
                   href: (() => { try { return new URL(url).href; } catch (e) { return url; } })(),
                   idsDistinct: new Set(ids).size === ids.length && ids.every((i) => Number.isInteger(i) && i >= 1) };
        });
        process.stdout.write(JSON.stringify(out));
        """#

    @Test("B4: a URL is blocked by the entries whose domains, paths or allow-only window cover it, and Chromium's rules agree",
          .enabled(if: Privileged.can(tools: [ExtensionMatchTests.node]), Privileged.needsTools))
    func table() throws {
        if Privileged.unavailable(tools: [Self.node]) != nil { return }
        let results = try Self.run(Self.rows)
        try #require(results.count == Self.rows.count)
        for (row, result) in zip(Self.rows, results) {
            let got = result["blockedBy"] as? [String]
            #expect(got == row.blockedBy, "\(row.name): \(row.url) is blocked by \(got ?? []), want \(row.blockedBy)")
            #expect(result["idsDistinct"] as? Bool == true, "\(row.name): rule ids are distinct positive integers")
            guard row.dnr else { continue }
            let redirect = result["redirect"] as? String
            let want = row.blockedBy.isEmpty ? nil : Self.blockPage + "#" + (result["href"] as? String ?? "")
            #expect(redirect == want, "\(row.name): Chromium's rules send \(row.url) to \(redirect ?? "nowhere"), want \(want ?? "nowhere")")
        }
    }

    @Test("B4: the next end is the earliest until to come; B2: the site of a tab is its host, for http(s) only",
          .enabled(if: Privileged.can(tools: [ExtensionMatchTests.node]), Privileged.needsTools))
    func endsAndSites() throws {
        if Privileged.unavailable(tools: [Self.node]) != nil { return }
        let script = #"""
            const M = require(process.argv[1]);
            const now = Date.parse("2026-06-01T12:00:00Z");
            const s = { blocked: [{ until: "2026-06-01T11:00:00Z" }, { until: "2026-06-01T18:00:00+02:00" }, { until: null }, { until: "2026-06-02T00:00:00Z" }] };
            process.stdout.write(JSON.stringify({
              next: new Date(M.nextEnd(s, now)).toISOString(), none: M.nextEnd({ blocked: [{ until: null }] }, now),
              sites: ["https://www.YouTube.com/watch?v=1", "http://127.0.0.1:8080/", "chrome://newtab/", "about:blank", "moz-extension://x/block.html", "not a url"].map(M.siteOfURL),
            }));
            """#
        let out = try Run.capture(Self.node, ["-e", script, Self.match])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(out.output.utf8)) as? [String: Any], "node: \(out.output)")
        #expect(result["next"] as? String == "2026-06-01T16:00:00.000Z")
        #expect(result["none"] is NSNull)
        let sites = (result["sites"] as? [Any])?.map { $0 as? String }
        #expect(sites == ["www.youtube.com", "127.0.0.1", nil, nil, nil, nil])
    }
}
