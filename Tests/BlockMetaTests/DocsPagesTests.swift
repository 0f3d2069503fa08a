import BlockTestTools
import Foundation
import Testing

/// docs/README.md's index names one page for each § and for each family of rules (T, S, E, W, U,
/// A, M, R, F, P). A rule is defined by the heading whose first word is its tag (`### T1 — …`,
/// `## §9a …`), by exactly one heading in docs/, on that page, so a reader goes from any tag to
/// one page. Links whose text is a tag lead there, and every `#anchor` is a heading.
@Suite("Docs pages: one page per family of rules, as docs/README.md's index says")
struct DocsPagesTests {
    /// Every § the rules have; the families are the letters `DocsTests.tags(in:)` reads.
    static let sections = (1...11).map { "§\($0)" } + ["§9a", "§9b", "§9f"]
    static let families = "TSEMUAWRFPB"

    @Test("the index names one page for every § and every family, and every page of docs/ is in it")
    func indexComplete() throws {
        let rows = try Self.index()
        var problems: [String] = []
        for key in Self.sections + Self.families.map(String.init) {
            let pages = rows.filter { $0.keys.contains(key) }.map(\.page)
            if pages.count != 1 { problems.append("the index names \(pages.count) pages for \(key): \(pages); give it one row") }
        }
        let named = Set(rows.map(\.page))
        for page in try DocsTests.files(under: "docs") where page.hasSuffix(".md") && !named.contains(page) {
            problems.append("\(page) is in no row of docs/README.md's index")
        }
        #expect(rows.count > 10, "read \(rows.count) rows")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("each rule tag and § is defined by exactly one heading, on the page the index names for it")
    func definedOnItsPage() throws {
        let rows = try Self.index()
        let defined = try Self.definitions()
        var problems: [String] = []
        for (tag, pages) in defined.sorted(by: { $0.key < $1.key }) {
            guard let page = Self.page(of: tag, in: rows) else {
                problems.append("\(tag) is defined in \(pages) but its family or § has no row in docs/README.md's index"); continue
            }
            if pages != [page] { problems.append("\(tag) is defined by headings in \(pages); it belongs in \(page) alone") }
        }
        for tag in rows.flatMap(\.tags) where defined[tag] == nil {
            problems.append("the index lists \(tag), but no heading in docs/ starts with it")
        }
        for tag in Self.sections where defined[tag] == nil {
            problems.append("no heading in docs/ starts with \(tag)")
        }
        #expect(defined.count > 50, "read \(defined.count) definitions")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("a link whose text is a rule tag leads to the page that defines it")
    func tagLinks() throws {
        let defined = try Self.definitions()
        var problems: [String] = [], checked = 0
        for (page, text) in try Self.pages() {
            for link in Self.links(in: text, of: page) {
                guard let tag = Self.definedTag(atStartOf: link.text), let pages = defined[tag], pages.count == 1 else { continue }
                checked += 1
                if link.path != pages[0] { problems.append("\(page): [\(link.text)] leads to \(link.path); \(tag) is defined in \(pages[0])") }
            }
        }
        #expect(checked > 100, "read \(checked) links")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("every #anchor a link in docs/*.md or README.md names is a heading of the page it leads to")
    func anchorsResolve() throws {
        let pages = try Self.pages()
        var anchors: [String: Set<String>] = [:]
        for (page, text) in pages { anchors[page] = Set(Self.headings(in: text).map(\.anchor)) }
        var problems: [String] = [], checked = 0
        for (page, text) in pages {
            for link in Self.links(in: text, of: page) {
                guard let anchor = link.anchor, let known = anchors[link.path] else { continue }
                checked += 1
                if !known.contains(anchor) { problems.append("\(page): [\(link.text)] names #\(anchor), which is no heading of \(link.path)") }
            }
        }
        #expect(checked > 20, "read \(checked) anchors")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("the heading and link readers find what they should")
    func readers() {
        #expect(Self.headings(in: "# A\n```sh\n# not one\n```\n## §9a More time (\"ask\")\n### `--json` shapes\n## A\n").map(\.anchor)
            == ["a", "9a-more-time-ask", "--json-shapes", "a-1"])
        #expect(Self.headings(in: "### T1 — No minimum window\n").map(\.anchor) == ["t1--no-minimum-window"])
        #expect(Self.definedTag(atStartOf: "§9b Per-user scope") == "§9b")
        #expect(Self.definedTag(atStartOf: "T10 — Extending") == "T10")
        #expect(Self.definedTag(atStartOf: "§7 `blockd`: flags") == "§7")
        #expect(Self.definedTag(atStartOf: "Users: §9b") == nil)
        #expect(Self.definedTag(atStartOf: "E2E tests") == nil)
        let links = Self.links(in: "[T5](TIMING.md) [a](#here) [b](../README.md#layout) [c](https://x.org#y)", of: "docs/A.md")
        #expect(links.map(\.path) == ["docs/TIMING.md", "docs/A.md", "README.md"])
        #expect(links.map(\.anchor) == [nil, "here", "layout"])
    }

    // MARK: Readers

    /// A row of the index: the §s and families it names (`§5`, `U`, `A`), the tags it lists,
    /// and its page, repository-relative.
    struct Row { var keys: Set<String>; var tags: [String]; var page: String }

    /// The rows of docs/README.md's index table (`| § | rules | page |`).
    static func index() throws -> [Row] {
        let text = try String(contentsOfFile: Repo.root + "/docs/README.md", encoding: .utf8)
        let lines = text.components(separatedBy: "\n").drop(while: { !$0.hasPrefix("| § | rules | page |") }).dropFirst(2)
        return lines.prefix { $0.hasPrefix("|") }.compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { return nil }
            let sections = cells[1].matches(of: /§[0-9]{1,2}[abf]?/).map { String($0.0) }
            let tags = DocsTests.tags(in: cells[2]).filter { !$0.hasPrefix("§") }
            let page = cells[3].hasPrefix("this page") ? "docs/README.md"
                : links(in: cells[3], of: "docs/README.md").first?.path ?? cells[3]
            return Row(keys: Set(sections + tags.map { String($0.prefix(1)) }), tags: tags, page: page)
        }
    }

    /// The page the index names for a tag: its own row for a §, its family's for a rule.
    static func page(of tag: String, in rows: [Row]) -> String? {
        let key = tag.hasPrefix("§") ? tag : String(tag.prefix(1))
        let pages = rows.filter { $0.keys.contains(key) }.map(\.page)
        return pages.count == 1 ? pages[0] : nil
    }

    /// Each tag a heading in docs/*.md starts with, and the pages of those headings (a page once
    /// per heading, so two headings on one page show up).
    static func definitions() throws -> [String: [String]] {
        var defined: [String: [String]] = [:]
        for (page, text) in try pages() where page.hasPrefix("docs/") {
            for heading in headings(in: text) {
                if let tag = definedTag(atStartOf: heading.text) { defined[tag, default: []].append(page) }
            }
        }
        return defined
    }

    /// The tag a heading or a link text starts with: `T1`, `§9a`, `§7` in "§7 `blockd`: …".
    static func definedTag(atStartOf text: String) -> String? {
        guard let match = text.prefixMatch(of: /([TSEMUAWRFPB][0-9]{1,2}|§[0-9]{1,2}[abf]?)(?=$|[\s:,.)])/) else { return nil }
        return String(match.1)
    }

    /// docs/*.md and README.md, repository-relative, with their text.
    static func pages() throws -> [(String, String)] {
        try (DocsTests.files(under: "docs").filter { $0.hasSuffix(".md") } + ["README.md"]).map {
            ($0, try String(contentsOfFile: Repo.root + "/" + $0, encoding: .utf8))
        }
    }

    /// The headings of a Markdown page outside fenced code, each with its anchor as GitHub makes
    /// it: lower case, only letters, digits, `_`, `-` and spaces kept, spaces to `-`, a repeated
    /// one numbered (`a`, `a-1`).
    static func headings(in markdown: String) -> [(text: String, anchor: String)] {
        var out: [(String, String)] = [], seen: [String: Int] = [:], fenced = false
        for line in markdown.components(separatedBy: "\n") {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, let m = line.wholeMatch(of: /#{1,6} +(.*?) */) else { continue }
            let text = String(m.1)
            let plain = text.replacing(/\[([^\]]*)\]\([^)]*\)/) { String($0.1) }.replacingOccurrences(of: "`", with: "")
            let base = String(plain.lowercased().filter { $0.isLetter || $0.isNumber || "_- ".contains($0) })
                .replacingOccurrences(of: " ", with: "-")
            let n = seen[base, default: 0]
            seen[base] = n + 1
            out.append((text, n == 0 ? base : "\(base)-\(n)"))
        }
        return out
    }

    /// The relative links of a page: their text, the repository-relative file they lead to (the
    /// page itself for a bare `#anchor`) and their anchor.
    static func links(in markdown: String, of page: String) -> [(text: String, path: String, anchor: String?)] {
        let base = URL(fileURLWithPath: "/" + page).deletingLastPathComponent()
        return markdown.matches(of: /\[([^\]]*)\]\(([^)\s]+)\)/).compactMap { m in
            let target = String(m.2)
            if target.contains("://") || target.hasPrefix("mailto:") { return nil }
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let path = parts[0].isEmpty ? page : String(base.appendingPathComponent(parts[0]).standardizedFileURL.path.dropFirst())
            return (String(m.1), path, parts.count > 1 ? parts[1] : nil)
        }
    }
}
