import BlockCore
import Foundation
import Testing
import BlockTestTools

/// blockd.conf(5) documents exactly the keys the parser takes: a key on the page that the
/// parser rejects as unknown (15 text keys once were) or a key the parser takes that the page
/// does not name fails here.
@Suite("blockd.conf(5) names exactly the keys the parser takes")
struct ConfigKeysDocTests {
    /// The `Key=` names given with `.It Cm` in the page's section `title`.
    static func documented(in title: String) throws -> Set<String> {
        let page = try String(contentsOfFile: Repo.root + "/man/blockd.conf.5", encoding: .utf8)
        let start = try #require(page.range(of: "\n.Sh \(title)\n"), "no section \(title)")
        let rest = page[start.upperBound...]
        let section = rest.range(of: "\n.Sh ").map { rest[..<$0.lowerBound] } ?? rest
        var keys = Set<String>()
        for line in section.split(separator: "\n") where line.hasPrefix(".It Cm ") {
            for match in line.matches(of: /([A-Z][A-Za-z]+)=/) { keys.insert(String(match.1)) }
        }
        return keys
    }

    @Test("S6: every [Selection] key on the page parses, and every key the parser takes is on the page")
    func selectionKeys() throws {
        let parser = Set(ConfigFiles.selectionKeys + ConfigFiles.textKeys)
        let page = try Self.documented(in: "SELECTION FILES")
        #expect(page.subtracting(parser).isEmpty, "documented but refused as unknown: \(page.subtracting(parser).sorted())")
        #expect(parser.subtracting(page).isEmpty, "parsed but not documented: \(parser.subtracting(page).sorted())")
        for key in ConfigFiles.textKeys {
            let file = "[Selection]\nName=games\nApps=steam\n\(key)=x\n\(key)[ja]=y\n"
            #expect(throws: Never.self, "\(key)= parses") { _ = try ConfigFiles.parseSelection(file: "/etc/blockd/selections.d/games.conf", text: file) }
        }
    }

    @Test("every [Daemon] key on the page parses, and every key the parser takes is on the page")
    func daemonKeys() throws {
        let page = try Self.documented(in: "BLOCKD.CONF")
        #expect(page == Set(DaemonConfig.keys), "page \(page.sorted()) vs parser \(DaemonConfig.keys.sorted())")
    }
}
