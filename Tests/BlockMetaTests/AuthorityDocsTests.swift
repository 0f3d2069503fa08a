import BlockCore
import Foundation
import Testing
import BlockTestTools

/// A1: docs/USERS.md's authority table is the one the daemon decides by. Both tables there are
/// rendered from the routes and from `Authority.decide` (AuthorityTable.swift); a change to
/// either that the page does not show fails here, with the table to paste; with
/// `BLOCKD_WRITE_DOCS=1` the test writes the tables into the page instead.
@Suite("A1: docs/USERS.md shows the authority table the daemon decides by", .serialized)
struct AuthorityDocsTests {
    static let page = Repo.root + "/docs/USERS.md"

    /// The text between `<!-- authority:MARKER -->` and its closing marker; `render` goes there
    /// first when BLOCKD_WRITE_DOCS=1.
    static func section(_ marker: String, render: String) throws -> String {
        var text = try String(contentsOfFile: page, encoding: .utf8)
        let open = "<!-- authority:\(marker) -->\n", close = "<!-- /authority:\(marker) -->"
        var start = try #require(text.range(of: open), "docs/USERS.md has no \(open)")
        var end = try #require(text.range(of: close, range: start.upperBound..<text.endIndex), "docs/USERS.md has no \(close)")
        if ProcessInfo.processInfo.environment["BLOCKD_WRITE_DOCS"] == "1" {
            text.replaceSubrange(start.upperBound..<end.lowerBound, with: render + "\n")
            try text.write(toFile: page, atomically: true, encoding: .utf8)
            start = try #require(text.range(of: open))
            end = try #require(text.range(of: close, range: start.upperBound..<text.endIndex))
        }
        return String(text[start.upperBound..<end.lowerBound].dropLast())
    }

    @Test("A1: every command's route is in docs/USERS.md as the daemon has it")
    func routes() throws {
        let shown = try Self.section("routes", render: AuthorityTable.routes)
        #expect(shown == AuthorityTable.routes, "docs/USERS.md's routes table differs; it should read:\n\(AuthorityTable.routes)")
    }

    @Test("A1: who may stop or remove whose, locked or not, is in docs/USERS.md as the daemon decides it")
    func owners() throws {
        let shown = try Self.section("owners", render: AuthorityTable.owners)
        #expect(shown == AuthorityTable.owners, "docs/USERS.md's owners table differs; it should read:\n\(AuthorityTable.owners)")
    }
}
