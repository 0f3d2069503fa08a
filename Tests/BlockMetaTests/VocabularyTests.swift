import BlockClient
import BlockCore
import Foundation
import Testing
import BlockTestTools

/// One vocabulary: `Command` is the list of commands, and everything that names them to a
/// person (blockc's `--help`, the shell completions, blockc(1), blockd(8)) follows it. A
/// command added to the enum fails here, and for the man pages in ManPageTests, until every one
/// of them says it.
@Suite("One command vocabulary: help, completions and man pages follow Command")
struct VocabularyTests {
    @Test("blockc --help has a usage line for every blockc command, and help for each")
    func help() {
        for words in Command.cliCommands {
            let lines = BlockcHelp.usage.split(separator: "\n").map(String.init)
            #expect(lines.contains { $0 == "  \(words)" || $0.hasPrefix("  \(words) ") }, "--help lists \(words)")
            #expect(BlockcHelp.help(for: words) != nil, "blockc help \(words)")
        }
        for group in Command.cliGroups { #expect(BlockcHelp.help(for: group) != nil, "blockc help \(group)") }
    }

    @Test("each completion file offers every command, and every subcommand of a group",
          arguments: ["completions/blockc.bash", "completions/_blockc", "completions/blockc.fish"])
    func completions(file: String) throws {
        let text = try String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8)
        #expect(VocabularyTests.offered(in: text, file: file) == Set(Command.cliGroups + ["help"]), "\(file)")
        for group in Command.cliGroups {
            let subs = Command.subcommands(of: group)
            #expect(subs.isEmpty || text.contains(subs.joined(separator: " ")), "\(file) completes \(group) \(subs)")
        }
    }

    @Test("M1, M2: the more-time policy flags are in --help, blockc(1) and each completion file")
    func policyFlags() throws {
        let flags = ["--more-time", "--delay", "--more-time-per-day"]
        let man = try String(contentsOfFile: Repo.root + "/man/blockc.1", encoding: .utf8)
        for flag in flags {
            #expect(BlockcHelp.usage.contains(flag), "--help says \(flag)")
            #expect(man.contains("Fl -\(flag.dropFirst(2))"), "blockc(1) says \(flag)")
            for file in ["completions/blockc.bash", "completions/_blockc", "completions/blockc.fish"] {
                let text = try String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8)
                #expect(text.contains(file.hasSuffix(".fish") ? "-l \(flag.dropFirst(2))" : flag), "\(file) completes \(flag)")
            }
        }
    }

    @Test("every wire word parses to its command, and every request formats with it")
    func wire() throws {
        for command in Command.allCases {
            do {
                #expect(try Request.parse(command.rawValue).command == command)
            } catch {
                // A command with required arguments names what is missing, never "unknown command".
                #expect(error.code == .usage, "\(command): \(error.message)")
            }
        }
    }

    /// The top-level words a completion file offers after `blockc `.
    static func offered(in text: String, file: String) -> Set<String> {
        let lines = text.split(separator: "\n").map(String.init)
        if file.hasSuffix(".bash") {
            let list = lines.first { $0.contains("local commands=\"") } ?? ""
            return Set(list.split(separator: "\"").dropFirst().first?.split(separator: " ").map(String.init) ?? [])
        }
        if file.hasSuffix(".fish") {
            let prefix = "complete -c blockc -n __blockc_needs_command -a "
            return Set(lines.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count).prefix { $0 != " " }) })
        }
        // zsh: the entries of `commands=( 'name:description' ... )`.
        guard let open = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "commands=(" }) else { return [] }
        let entries = lines[(open + 1)...].prefix { $0.trimmingCharacters(in: .whitespaces) != ")" }
        return Set(entries.map { String($0.trimmingCharacters(in: .whitespaces).dropFirst().prefix { $0 != ":" }) })
    }
}
