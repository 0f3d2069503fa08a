import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// blockc's shell completions complete every argument that names something (blockc(1),
/// docs/PROTOCOL.md §6): users and @groups after `--user`, the daemon's blocks, schedules,
/// limits and request ids after `stop`, `schedule remove`, `limit remove`, `approve`, `deny`
/// and `cancel`, and the values of flags that take a word from a list. Each case runs the
/// completion file in a real bash, zsh and fish (`InstallTests.complete`), against a real
/// blockd where the names come from the daemon.
///
/// Completing must never run anything: the daemon test checks at its end that nothing it set
/// up was stopped, removed, granted or denied (InstallTests' zsh driver once sent a newline
/// after the TAB, and zsh ran the completed line).
@Suite("Completions name what blockc's arguments name (§6)", .serialized)
struct CompletionNamesTests {
    typealias Shell = InstallTests.Shell

    /// A socket nothing listens on: the client is real, the daemon does not answer.
    static let deadSocket = "/nonexistent/blockd.sock"
    static var client: String { Repo.binDir + "/blockc" }
    static var offline: String { "\(client) --socket \(deadSocket)" }
    static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun", "mon-fri", "sat-sun"]

    /// The name of group 0 (`root` almost everywhere), for `--user @GROUP`.
    static var rootGroup: String {
        guard let g = getgrgid(0) else { return "root" }
        return String(cString: g.pointee.gr_name)
    }

    /// What `shell` offers after `line`, without the global flags fish adds wherever a flag fits.
    static func offered(_ shell: Shell, _ line: String) throws -> Set<String> {
        try InstallTests.complete(shell: shell, line).subtracting(["--socket", "--help"])
    }

    @Test("§6: --user completes user names (and @group names where a group may be given), not selection names",
          .enabled(if: Privileged.can(tools: [Shell.bash.path, Shell.zsh.path, Shell.fish.path]), Privileged.needsTools),
          arguments: Shell.allCases)
    func users(shell: Shell) throws {
        if Privileged.unavailable(tools: [shell.path]) != nil { return }
        let group = Self.rootGroup
        let selections = Set(InstallTests.selections)
        for command in ["start", "schedule add bedtime --daily 22:00-07:00", "limit add games 1h", "status"] {
            let got = try Self.offered(shell, "\(Self.offline) \(command) --user ")
            #expect(got.contains("root"), "\(shell): '\(command) --user' -> \(got.sorted())")
            #expect(got.isDisjoint(with: selections), "\(shell): '\(command) --user' offers selections: \(got.sorted())")
            let atGroup = try Self.offered(shell, "\(Self.offline) \(command) --user @\(group.prefix(2))")
            if command == "status" {
                // status --user takes one user's view, not a group.
                #expect(atGroup.isEmpty, "\(shell): 'status --user @' -> \(atGroup.sorted())")
                #expect(!got.contains { $0.hasPrefix("@") }, "\(shell): 'status --user' -> \(got.sorted())")
            } else if shell == .zsh {
                // zsh inserts '@' + the group; its compadd sees the group name after the '@'.
                #expect(atGroup.contains(group) || atGroup.contains("@" + group), "zsh: '\(command) --user @' -> \(atGroup.sorted())")
            } else {
                #expect(got.contains("@" + group), "\(shell): '\(command) --user' -> @groups too: \(got.sorted())")
                #expect(atGroup.contains("@" + group) && atGroup.allSatisfy { $0.hasPrefix("@") },
                        "\(shell): '\(command) --user @' -> \(atGroup.sorted())")
            }
        }
        // The user is the flag's value, not a command word: the selections still come after it.
        #expect(try Self.offered(shell, "\(Self.offline) start --user root --minutes 5 ") == selections, "\(shell)")
        #expect(try Self.offered(shell, "\(Self.offline) limit add games 1h --user root st") == ["steam"], "\(shell)")
        // --all-users stays a flag.
        #expect(try Self.offered(shell, "\(Self.offline) status --all-") == ["--all-users"], "\(shell)")
    }

    @Test("§6: flag values: --days and --weekly day names, --more-time its modes; --warn, --delay, --more-time-per-day and --reason nothing",
          .enabled(if: Privileged.can(tools: [Shell.bash.path, Shell.zsh.path, Shell.fish.path]), Privileged.needsTools),
          arguments: Shell.allCases)
    func flagValues(shell: Shell) throws {
        if Privileged.unavailable(tools: [shell.path]) != nil { return }
        let cases: [(String, Set<String>)] = [
            ("limit add games 1h --days ", Set(Self.days)),
            ("limit add games 1h --days mon", ["mon", "mon-fri"]),
            ("schedule add school --weekly ", Set(Self.days)),
            // The modes MoreTimeMode accepts (blockc's --more-time, MoreTime=).
            ("start --more-time ", Set(MoreTimeMode.allCases.map(\.rawValue))),
            ("schedule add school --more-time ", Set(MoreTimeMode.allCases.map(\.rawValue))),
            ("limit add games 1h --more-time ", Set(MoreTimeMode.allCases.map(\.rawValue))),
            ("limit add games 1h --warn ", []),
            ("start --for 1h --delay ", []),
            ("start --for 1h --more-time-per-day ", []),
            ("more youtube 5m --reason ", []),
            ("deny m1 --reason ", []),
        ]
        for (line, expected) in cases {
            let got = try Self.offered(shell, "\(Self.offline) \(line)")
            #expect(got == expected, "\(shell): '\(line)' -> \(got.sorted())")
        }
    }

    @Test("§6, M1: stop, schedule remove, limit remove, more, approve, deny and cancel complete what the daemon holds",
          .enabled(if: Privileged.can(tools: [Shell.bash.path, Shell.zsh.path, Shell.fish.path, "/usr/bin/timeout"]), Privileged.needsTools),
          arguments: Shell.allCases)
    func daemonNames(shell: Shell) throws {
        if Privileged.unavailable(tools: [shell.path, "/usr/bin/timeout"]) != nil { return }
        let s = Sandbox()
        try s.start()
        func run(_ arguments: [String]) {
            let r = try? s.blockc(arguments)
            #expect(r?.status == 0, "blockc \(arguments.joined(separator: " ")): \(r?.err ?? "did not run")")
        }
        // Blocks: two that ask (approval), one whose stop waits for Delay=, one with a grant
        // over one of its two selections (still blocking the other).
        run(["start", "--for", "1h", "--name", "work", "--more-time", "approval", "instagram"])
        run(["start", "--for", "1h", "--name", "focus", "--more-time", "approval", "reddit"])
        run(["start", "--for", "1h", "--name", "slow", "--delay", "1h", "facebook"])
        run(["stop", "slow"])
        run(["start", "--for", "1h", "--name", "chill", "youtube", "twitch"])
        // Two pending requests, and a grant (its id is no request's).
        run(["more", "instagram", "15m"])
        run(["more", "reddit", "10m"])
        run(["more", "youtube", "5m"])
        // A schedule active now (its kind is not "block") and one idle; two limits.
        run(["schedule", "add", "bedtime", "--daily", "00:00-23:59", "x"])
        run(["schedule", "add", "homework", "--daily", "16:00-18:00", "tiktok"])
        run(["limit", "add", "games", "2h", "steam"])
        run(["limit", "add", "chat", "1h", "discord"])

        let requests = try JSON.parse(try s.blockc(["requests", "--json"]).out)
        let pending = Set((requests["requests"]?.array ?? []).compactMap { $0["id"]?.string })
        let granted = Set((requests["grants"]?.array ?? []).compactMap { $0["id"]?.string })
        #expect(pending.count == 2 && granted.count == 1, "\(requests)")

        let line = "\(Self.client) --socket \(s.socket)"
        let cases: [(String, Set<String>)] = [
            ("stop ", ["work", "focus", "slow", "chill"]),
            ("schedule remove ", ["bedtime", "homework"]),
            ("limit remove ", ["games", "chat"]),
            ("more ", Set(InstallTests.selections).union(["games", "chat"])),  // M1: a selection or a limit's name
            ("approve ", pending),
            ("deny ", pending),
            ("cancel ", pending.union(["slow"])),
        ]
        for (words, expected) in cases {
            let got = try Self.offered(shell, "\(line) \(words)")
            #expect(got == expected, "\(shell): '\(words)' -> \(got.sorted())")
        }

        // Nothing the completions asked (or zsh ran) changed what the daemon holds.
        let all = try JSON.parse(try s.blockc(["status", "--all", "--json"]).out)
        let names = Set((all["activities"]?.array ?? []).compactMap { $0["name"]?.string })
        #expect(names == ["work", "focus", "slow", "chill", "bedtime", "homework", "games", "chat"], "\(names.sorted())")
        let after = try JSON.parse(try s.blockc(["requests", "--json"]).out)
        #expect(Set((after["requests"]?.array ?? []).compactMap { $0["id"]?.string }) == pending, "\(after)")
        #expect(after["delayed"]?[0]?["pending"] == "slow", "\(after)")
    }

    @Test("§6: when the daemon does not answer, blocks, schedules, limits and request ids complete to nothing",
          .enabled(if: Privileged.can(tools: [Shell.bash.path, Shell.zsh.path, Shell.fish.path]), Privileged.needsTools),
          arguments: Shell.allCases)
    func noDaemon(shell: Shell) throws {
        if Privileged.unavailable(tools: [shell.path]) != nil { return }
        for words in ["stop ", "schedule remove ", "limit remove ", "approve ", "deny ", "cancel "] {
            // (zsh offers a command's flags where no argument is found.)
            let got = try Self.offered(shell, "\(Self.offline) \(words)").filter { !$0.hasPrefix("-") }
            #expect(got.isEmpty, "\(shell): '\(words)' -> \(got.sorted())")
        }
    }
}
