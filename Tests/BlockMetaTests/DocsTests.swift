import BlockCore
import BlockDaemon
import Foundation
import Testing
import BlockTestTools

/// The project's rules (docs/README.md) stand on their own: nothing in the repository points
/// outside it, every rule tag a test is named after is defined in docs/, and every relative
/// link in docs/ and README.md leads to a file of the repository.
@Suite("Docs: the rules are defined in the repository")
struct DocsTests {
    /// Paths that exist only on the machine the project was written on. Built from pieces so
    /// that this file does not match itself.
    static let outsidePaths = [".." + "/shared", "/work" + "/shared"]
    /// Build products and VCS data, never scanned.
    static let skipped: Set<String> = [".git", ".build", ".swiftpm"]

    @Test("no file in the repository points outside it")
    func nothingOutside() throws {
        var problems: [String] = []
        for file in try DocsTests.files(under: "") {
            guard let data = FileManager.default.contents(atPath: Repo.root + "/" + file) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for needle in DocsTests.outsidePaths where text.contains(needle) {
                problems.append("\(file) mentions \(needle); link to docs/ in this repository instead")
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// The section of docs/LAYOUT.md (§11) that is the source map: from its heading to the next.
    static let layoutPage = "docs/LAYOUT.md", layoutHeading = "## Where each concern lives\n"

    @Test("§11: docs/LAYOUT.md names every source file on its folder's line, so it says where each concern lives")
    func layoutComplete() throws {
        let page = try String(contentsOfFile: Repo.root + "/" + DocsTests.layoutPage, encoding: .utf8)
        let start = try #require(page.range(of: DocsTests.layoutHeading), "\(DocsTests.layoutPage) has no section \(DocsTests.layoutHeading)")
        let layout = String(page[start.upperBound...]).components(separatedBy: "\n## ").first ?? ""
        let lines = layout.split(separator: "\n").map(String.init)
        let section = "\(DocsTests.layoutPage)'s section \"Where each concern lives\""
        var problems: [String] = []
        for file in try DocsTests.files(under: "Sources") + DocsTests.files(under: "Tests/Support") + DocsTests.files(under: "Tests/Tools")
        where file.hasSuffix(".swift") || file.hasSuffix(".c") {
            let name = (file as NSString).lastPathComponent
            if !layout.contains("`\(name)`") && !layout.contains("`\(file)`") { problems.append("\(file) is not in \(section)"); continue }
            // Sources/BlockCore/Time/Civil.swift is named on the line of `Time/`: the section is the folder tree.
            let parts = file.split(separator: "/").map(String.init)
            guard parts.first == "Sources", parts.count > 3 else { continue }
            let folder = "`" + parts[2..<(parts.count - 1)].joined(separator: "/") + "/`"
            if !lines.contains(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- \(folder) ") && $0.contains("`\(name)`") }) {
                problems.append("\(file) is not on the line of its folder \(folder) in \(section)")
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("§7: every BLOCKD_* journal field blockd writes is in blockd(8)'s list, and every one listed is written")
    func journalFields() throws {
        let page = try String(contentsOfFile: Repo.root + "/man/blockd.8", encoding: .utf8)
        let listed = Set(page.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix(".It Li BLOCKD_") else { return nil }
            return String(line.dropFirst(".It Li BLOCKD_".count))
        })
        let written = Set(JournalField.allCases.map(\.rawValue) + ["EVENT"])
        #expect(written.subtracting(listed).isEmpty, "written but not in blockd(8): \(written.subtracting(listed).sorted())")
        #expect(listed.subtracting(written).isEmpty, "in blockd(8) but never written: \(listed.subtracting(written).sorted())")
    }

    @Test("no issue numbers anywhere: comments, suite names and scripts say what a thing is")
    func noIssueNumbers() throws {
        // Built from pieces so that this file does not match itself.
        let pattern = try NSRegularExpression(pattern: "\\b" + "issues? ?#?[0-9]+" + "\\b", options: [.caseInsensitive])
        var problems: [String] = []
        for top in ["Sources", "Tests", "scripts", "bench", "torture", "man", "docs", ".ci", "Makefile", "Package.swift", "README.md"] {
            let files = FileManager.default.fileExists(atPath: Repo.root + "/" + top + "/") ? try DocsTests.files(under: top) : [top]
            for file in files {
                guard let data = FileManager.default.contents(atPath: Repo.root + "/" + file),
                      !data.contains(0) else { continue }  // text files only
                let text = String(decoding: data, as: UTF8.self)
                for m in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    problems.append("\(file): \((text as NSString).substring(with: m.range))")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("every rule tag and § used in a test or suite name is defined in docs/ by a heading")
    func tagsDefined() throws {
        let defined = try DocsTests.definedTags()
        var problems: [String] = []
        for file in try DocsTests.files(under: "Tests") where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8)
            for name in DocsTests.testNames(in: text) {
                for tag in DocsTests.tags(in: name) where !defined.contains(tag) {
                    problems.append("\(file): \"\(name)\" names \(tag), which no heading in docs/*.md starts with; define it on its family's page (docs/README.md)")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("every relative link in docs/*.md and README.md leads to a file in the repository")
    func linksResolve() throws {
        let pages = try DocsTests.files(under: "docs").filter { $0.hasSuffix(".md") } + ["README.md"]
        #expect(pages.count > 1, "docs/ has no Markdown pages")
        var problems: [String] = []
        for page in pages {
            let text = try String(contentsOfFile: Repo.root + "/" + page, encoding: .utf8)
            let base = URL(fileURLWithPath: Repo.root + "/" + page).deletingLastPathComponent()
            for target in DocsTests.relativeLinks(in: text) {
                let path = base.appendingPathComponent(target).standardizedFileURL.path
                if !path.hasPrefix(Repo.root + "/") {
                    problems.append("\(page) links to \(target), outside the repository")
                } else if !FileManager.default.fileExists(atPath: path) {
                    problems.append("\(page) links to \(target), which does not exist; fix the link or add the file")
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// "Implemented in: [Policy.swift](../Sources/BlockCore/Activities/Policy.swift) (`desired(at:)`, ...)":
    /// each code name in the parentheses right after a link to a source file is in that file
    /// (its last component, without argument labels, as a whole word), so a rename or a
    /// removal cannot leave the page pointing at nothing.
    @Test("every symbol docs/ names next to a source file in 'Implemented in' is in that file")
    func implementedInSymbols() throws {
        let link = /\[[^\]]+\]\(\.\.\/((?:Sources|Tests|nss|torture|scripts)\/[^)\s#]+)\)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)/
        var problems: [String] = [], checked = 0
        for page in try DocsTests.files(under: "docs") where page.hasSuffix(".md") {
            let text = try String(contentsOfFile: Repo.root + "/" + page, encoding: .utf8)
                .replacingOccurrences(of: "\n", with: " ")
            for m in text.matches(of: link) {
                let file = String(m.1)
                guard let source = try? String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8) else { continue }
                for code in String(m.2).matches(of: /`([^`]+)`/) {
                    guard let name = DocsTests.symbol(String(code.1)) else { continue }
                    checked += 1
                    // Simple word boundaries: in Unicode's, "EventHub.Counters" is one word.
                    if source.firstMatch(of: try Regex("\\b\(name)\\b").wordBoundaryKind(.simple)) == nil {
                        problems.append("\(page): `\(code.1)` is not in \(file)")
                    }
                }
            }
        }
        #expect(checked > 100, "read \(checked) names")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// The identifier a code span names (`Schedule.window(startingOn:clock:)` → `window`), or
    /// nil when it is not a code name (`start`/`end`, `minimum...maximum`, `0600`).
    static func symbol(_ code: String) -> String? {
        let head = code.split(separator: "(", maxSplits: 1).first.map(String.init) ?? code
        // A directory or file name (`selections.d`, `blockd.conf`) is not a code name.
        if [".d", ".conf", ".json", ".swift", ".py", ".c", ".h"].contains(where: { head.hasSuffix($0) }) { return nil }
        guard let last = head.split(separator: ".").last, head.firstMatch(of: /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/) != nil
        else { return nil }
        return String(last)
    }

    @Test("the tag and link readers find what they should")
    func readers() {
        #expect(DocsTests.tags(in: "E1, S5: a removed section (S1-S4, T10) per RFC 3492 §6.2 and §7")
            == ["E1", "S5", "S1", "S2", "S3", "S4", "T10", "§7"])
        #expect(DocsTests.tags(in: "STYLE 7, E2E, 0T1, T1x, page 5").isEmpty)
        #expect(DocsTests.testNames(in: #"@Test("T1: a \"quoted\" word", arguments: [1]) @Suite("§9: limits")"#)
            == [#"T1: a \"quoted\" word"#, "§9: limits"])
        #expect(DocsTests.relativeLinks(in: "[a](../Sources/A.swift) [b](https://x.org) [c](#here) [d](B.md#sec)")
            == ["../Sources/A.swift", "B.md"])
    }

    // MARK: Readers

    /// Repository-relative paths of the regular files under `dir` ("" for the whole repository).
    static func files(under dir: String) throws -> [String] {
        let fm = FileManager.default
        var out: [String] = []
        var pending = [dir]
        while let rel = pending.popLast() {
            let abs = rel.isEmpty ? Repo.root : Repo.root + "/" + rel
            for name in try fm.contentsOfDirectory(atPath: abs).sorted() where !skipped.contains(name) {
                let child = rel.isEmpty ? name : rel + "/" + name
                var isDir: ObjCBool = false
                guard fm.fileExists(atPath: Repo.root + "/" + child, isDirectory: &isDir) else { continue }
                if isDir.boolValue { pending.append(child) } else { out.append(child) }
            }
        }
        return out
    }

    /// The first string literal of every `@Test("…")` and `@Suite("…")`.
    static func testNames(in source: String) -> [String] {
        source.matches(of: /@(?:Test|Suite)\("((?:[^"\\]|\\.)*)"/).map { String($0.1) }
    }

    /// Rule tags in a name: `T6`, `E1`, ranges such as `S1-S4` expanded, and `§7` unless it
    /// is an RFC's section. A tag is a capital T, S, E, M, U, A, W, R, F or P and one or two digits, with no
    /// letter or digit on either side.
    static func tags(in name: String) -> [String] {
        let chars = Array(name)
        func isWord(_ i: Int) -> Bool { i >= 0 && i < chars.count && (chars[i].isLetter || chars[i].isNumber) }
        func number(at i: Int) -> (value: Int, end: Int)? {
            var j = i
            while j < chars.count, j - i < 2, chars[j].isASCII, chars[j].isNumber { j += 1 }
            guard j > i, !isWord(j) else { return nil }
            return (Int(String(chars[i..<j]))!, j)
        }
        var out: [String] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if "TSEMUAWRFPB".contains(c), !isWord(i - 1), let (n, end) = number(at: i + 1) {
                out.append("\(c)\(n)")
                i = end
                // A range: `S1-S4` or `S1-4` stands for every tag between.
                if i < chars.count, chars[i] == "-" || chars[i] == "–" {
                    let start = i + 1 < chars.count && chars[i + 1] == c ? i + 2 : i + 1
                    if let (last, rangeEnd) = number(at: start), last > n {
                        out += (n + 1...last).map { "\(c)\($0)" }
                        i = rangeEnd
                    }
                }
                continue
            }
            if c == "§", let (n, end) = number(at: i + 1) {
                let before = String(chars[max(0, i - 12)..<i])
                if !before.contains("RFC") { out.append("§\(n)") }
                i = end
                continue
            }
            i += 1
        }
        return out
    }

    /// Targets of Markdown links that are paths in the repository (no scheme, not a bare
    /// `#anchor`), without their `#fragment`.
    static func relativeLinks(in markdown: String) -> [String] {
        markdown.matches(of: /\]\(([^)\s]+)\)/).compactMap { match in
            let target = String(match.1)
            if target.hasPrefix("#") || target.contains("://") || target.hasPrefix("mailto:") { return nil }
            return String(target.split(separator: "#", maxSplits: 1)[0])
        }
    }

    /// Tags docs/*.md defines: the first word of a heading (`### T1 — …`, `## §5 Who may do
    /// what`). DocsPagesTests checks that each is defined once, on its family's page.
    static func definedTags() throws -> Set<String> {
        Set(try DocsPagesTests.definitions().keys)
    }
}
