import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// blockc(1) is the API for scripts: every example command on the page must work as printed,
/// against the real blockd in a sandbox, with its pipes (jq) as written.
@Suite("blockc(1): every example works as printed", .serialized)
struct ManExamplesTests {
    /// Examples not run, each with the reason. Every entry must still be on the page.
    static let excluded: [String: String] = [
        // Enables a unit in the user's real service manager: it would touch the system.
        "systemctl --user enable --now blockd-agent.service": "changes the real user session's units",
        // M1: need a selection blocked now, or a pending request or delayed stop by that name;
        // MoreTimeEngineTests and the approval round trip in BlockcIntegrationTests run them.
        "blockc more games 15m --reason \"finish the level\"": "needs the limit games to be used up",
        "blockc more instagram --today": "needs instagram to be blocked",
        "blockc approve mq3v8k2x1fd 30m": "needs a pending request",
        "blockc deny mq3v8k2x1fd --reason \"not on a school night\"": "needs a pending request",
        "blockc cancel work": "needs a stop of 'work' waiting for its Delay=",
        // Per-user blocks: the sandbox has no user named kid; UserScopeTests and torture/users.py run them.
        "blockc schedule add bedtime-kid --daily 21:00-07:00 --user kid youtube steam": "needs a user named kid",
        // Allowed hours: AllowedHoursTests and torture/sessions.py (a real logind) run them.
        "blockc schedule add night --daily 21:00-07:00 --user kid --session": "needs a user named kid",
        "blockc screen --user kid": "needs a user named kid",
    ]

    /// Examples that follow events until interrupted: run for a few seconds while the test
    /// makes an unlock happen, then interrupted (`timeout` exits 124, or 137 after its KILL).
    static let streaming = ["blockc watch"]
    static let streamSeconds = 3

    /// The commands of the page's literal displays: lines after a `$ ` or `# ` prompt, with
    /// backslash-continued lines joined and roff escapes undone.
    static func examples(in page: String) -> [String] {
        var commands: [String] = []
        var inDisplay = false
        var pending: String?
        for raw in page.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix(".Bd -literal") || line == ".EX" { inDisplay = true; continue }
            if line == ".Ed" || line == ".EE" { inDisplay = false; continue }
            guard inDisplay else { continue }
            let text = line.replacingOccurrences(of: "\\e", with: "\\").replacingOccurrences(of: "\\-", with: "-")
                .replacingOccurrences(of: "\\&", with: "")
            var command: String
            if let start = pending {
                command = start + " " + text.trimmingCharacters(in: .whitespaces)
            } else if text.hasPrefix("$ ") || text.hasPrefix("# ") {
                command = String(text.dropFirst(2))
            } else {
                continue  // a JSON sample or other output
            }
            pending = nil
            if command.hasSuffix("\\") {
                command.removeLast()
                pending = command.trimmingCharacters(in: .whitespaces)
            } else {
                commands.append(command)
            }
        }
        return commands
    }

    @Test("the extraction finds the examples, joins continued lines and undoes escapes")
    func extraction() throws {
        let examples = ManExamplesTests.examples(in: try ManPageTests.page("man/blockc.1"))
        #expect(examples.count >= 20)
        #expect(examples.contains("blockc schedule add bedtime --weekly sun-thu 21:30-07:00 instagram tiktok snapchat"))
        #expect(examples.contains("blockc selections show reddit --json | jq -r '.domains[]'"))
        #expect(examples.contains("blockc reload"), "root's '# ' prompt too")
        for example in ManExamplesTests.excluded.keys { #expect(examples.contains(example), "stale exclusion: \(example)") }
    }

    @Test("each example of blockc(1) exits as documented, and each jq in it prints something", .enabled(if: Privileged.can(tools: ["/usr/bin/jq", "/usr/bin/timeout", "/bin/bash"]), Privileged.needsTools))
    func everyExample() throws {
        // The examples pipe into jq(1) and run timeout(1).
        if Privileged.unavailable(tools: ["/usr/bin/jq", "/usr/bin/timeout", "/bin/bash"]) != nil { return }
        let s = Sandbox()
        try s.start()
        for (i, example) in ManExamplesTests.examples(in: try ManPageTests.page("man/blockc.1")).enumerated() {
            if ManExamplesTests.excluded[example] != nil { continue }
            let isStream = ManExamplesTests.streaming.contains { example.hasPrefix($0) }
            let result = try isStream ? stream(example, s, i) : run(example, s, i)
            let expected: Set<Int32> = isStream ? [124, 137] : [0]
            #expect(expected.contains(result.status), "'\(example)' exited \(result.status): \(result.err)")
            if example.contains("| jq") {
                #expect(!result.out.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty,
                        "'\(example)' printed nothing: \(result.err)")
            }
        }
    }

    typealias Result = (status: Int32, out: String, err: String)

    /// Runs one example line in bash (pipefail, so a failing blockc before a pipe counts),
    /// with the built blockc first on PATH and the sandbox's socket, in the sandbox's
    /// directory: a file an example writes (`--html week.html`) never lands in the work tree.
    func launch(_ command: String, _ s: Sandbox, _ i: Int) throws -> (Process, String, String) {
        let out = "\(s.dir)/example\(i).out", err = "\(s.dir)/example\(i).err"
        let env = ["PATH": Repo.binDir + ":/usr/bin:/bin", "BLOCKD_SOCKET": s.socket, "TZ": "Asia/Tokyo", "NO_COLOR": "1"]
        let p = try s.launch("/bin/bash", ["-o", "pipefail", "-c", "cd '\(s.dir)' && { \(command); } 2>'\(err)'"], environment: env, output: out)
        return (p, out, err)
    }

    func finish(_ p: Process, _ out: String, _ err: String, timeout: TimeInterval = 30) -> Result {
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        if p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            Issue.record("still running after \(Int(timeout)) s")
        }
        p.waitUntilExit()
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return (p.terminationStatus, read(out), read(err))
    }

    func run(_ command: String, _ s: Sandbox, _ i: Int) throws -> Result {
        let (p, out, err) = try launch(command, s, i)
        return finish(p, out, err)
    }

    /// A streaming example is interrupted after a few seconds; meanwhile a block it did not
    /// start ends, so that a filter for unlocks has something to print.
    func stream(_ command: String, _ s: Sandbox, _ i: Int) throws -> Result {
        #expect(try s.blockc(["start", "--minutes", "5", "--name", "example-trigger", "twitch"]).status == 0)
        let wrapped = "timeout -k 1 \(ManExamplesTests.streamSeconds) " + command
        let (p, out, err) = try launch(wrapped, s, i)
        let subscribed = Run.eventually(timeout: 5) { (try? s.status()["server"]?["watchers"]?.int) == 1 }
        #expect(subscribed, "'\(command)' did not subscribe")
        #expect(try s.blockc(["stop", "example-trigger"]).status == 0)
        return finish(p, out, err)
    }
}
