import BlockClient
import BlockCore
import BlockDaemon
import Foundation
import Testing
import BlockTestSupport
import BlockTestTools

/// The man pages lint clean and document exactly what the code implements: the
/// commands of blockc(1) and the protocol commands of blockd(8) against `Command`, and every
/// flag of `--help`.
@Suite("Man pages")
struct ManPageTests {
    static let mandoc = "/usr/bin/mandoc"
    static let pages = ["man/blockd.8", "man/blockc.1", "man/blockd.conf.5"]

    static func page(_ name: String) throws -> String {
        try String(contentsOfFile: Repo.root + "/" + name, encoding: .utf8)
    }

    @Test("mandoc -Tlint -W warning finds nothing", .enabled(if: Privileged.can(tools: [ManPageTests.mandoc]), Privileged.needsTools), arguments: pages)
    func lint(page: String) throws {
        if Privileged.unavailable(tools: [ManPageTests.mandoc]) != nil { return }
        let result = try Run.capture(ManPageTests.mandoc, ["-Tlint", "-W", "warning", Repo.root + "/" + page])
        #expect(result.status == 0 && result.output.isEmpty, "\(page):\n\(result.output)")
    }

    @Test("blockc(1) COMMANDS lists Command's blockc words, in order")
    func blockcCommands() throws {
        #expect(try ManPageTests.blockcCommands() == Command.cliCommands)
    }

    @Test("blockd(8) PROTOCOL Commands lists Command's wire words, in order")
    func protocolCommands() throws {
        #expect(try ManPageTests.protocolCommands() == Command.allCases.map(\.rawValue))
    }

    static func blockcCommands() throws -> [String] {
        items(in: try page("man/blockc.1"), section: "COMMANDS")
    }

    static func protocolCommands() throws -> [String] {
        items(in: try page("man/blockd.8"), section: "PROTOCOL", subsection: "Commands")
    }

    @Test("every flag of blockd --help is in blockd(8) OPTIONS, and every flag of blockc --help in blockc(1)")
    func flags() throws {
        for (help, page) in [(BlockdOptions.help, "man/blockd.8"), (BlockcHelp.usage, "man/blockc.1")] {
            let text = try ManPageTests.page(page)
            let flags = Set(help.matches(of: /(?:^|[\s\[(|,])(--?[a-z][a-z-]*)/.anchorsMatchLineEndings()).map { String($0.1) })
            #expect(!flags.isEmpty)
            for flag in flags {
                // mdoc writes --json as `Fl -json` and -n as `Fl n`.
                let name = flag.hasPrefix("--") ? "-" + flag.dropFirst(2) : String(flag.dropFirst())
                #expect(text.contains("Fl \(name)"), "\(page) documents \(flag)")
            }
        }
    }

    /// The top-level `.It` items of a section (or of one `.Ss` inside it): the words of the
    /// `.Cm` macro on the `.It` line, or on the line after `.It Xo`, e.g. "schedule add".
    static func items(in page: String, section: String, subsection: String? = nil) -> [String] {
        var inSection = false, inSubsection = subsection == nil, depth = 0
        var out: [String] = []
        var pendingXo = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix(".Sh ") {
                inSection = line.dropFirst(4) == section
                inSubsection = subsection == nil
                continue
            }
            if line.hasPrefix(".Ss "), let subsection { inSubsection = line.dropFirst(4) == subsection; continue }
            guard inSection && inSubsection else { continue }
            if line.hasPrefix(".Bl") { depth += 1; continue }
            if line.hasPrefix(".El") { depth -= 1; continue }
            if pendingXo {
                pendingXo = false
                if let words = command(line) { out.append(words) }
                continue
            }
            guard depth == 1, line.hasPrefix(".It ") else { continue }
            if line == ".It Xo" { pendingXo = true } else if let words = command(String(line.dropFirst(4))) { out.append(words) }
        }
        return out
    }

    /// "Cm schedule add Ar name" or ".Cm start" -> "schedule add" / "start".
    static func command(_ line: String) -> String? {
        var tokens = line.split(separator: " ").map(String.init)
        if tokens.first == ".Cm" { tokens[0] = "Cm" }
        guard tokens.first == "Cm" else { return nil }
        let words = tokens.dropFirst().prefix { !["Ar", "Op", "Li", "Fl", "Ns", "|"].contains($0) && !$0.hasPrefix("{") }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}
