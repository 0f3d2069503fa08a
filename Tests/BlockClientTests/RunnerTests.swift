import BlockClient
import BlockCore
import Foundation
import Testing

/// A daemon that answers from a script. Fails closed: a request nobody
/// scripted is recorded as a test issue, not answered with something plausible.
final class FakeTransport: Transport {
    var answers: [Result<Response, ClientError>]
    var stream: [String]
    var sent: [Request] = []
    var closed = false

    init(_ answers: [Result<Response, ClientError>], stream: [String] = []) {
        self.answers = answers
        self.stream = stream
    }

    func send(_ request: Request) throws(ClientError) -> Response {
        sent.append(request)
        guard !answers.isEmpty else {
            Issue.record("unexpected request \(request.line)")
            throw .protocolError("no scripted answer")
        }
        switch answers.removeFirst() {
        case .success(let response): return response
        case .failure(let error): throw error
        }
    }

    func readLine() throws(ClientError) -> String? { stream.isEmpty ? nil : stream.removeFirst() }
    func close() { closed = true }
}

/// Runs blockc against a fake daemon and keeps what it printed.
final class Harness {
    var out = ""
    var err = ""
    var connects = 0
    var frames = 0
    let transport: FakeTransport?
    let connectError: ClientError?
    /// What `watch --notify` hands off to (the executable sets BlockAgent's here).
    var notifyAgent: ((String) -> Int32)?
    /// R2: what `report --html` wrote, by path; `writeProblem` makes the write fail.
    var written: [String: String] = [:]
    var writeProblem: String?
    /// More of blockc's environment (`screen --pam` reads pam_exec's PAM_* variables).
    var environment: [String: String] = [:]

    init(_ transport: FakeTransport?, connectError: ClientError? = nil) {
        self.transport = transport
        self.connectError = connectError
    }

    func run(_ arguments: [String], now: Date = Fixture.now, tty: Bool = false, frames maxFrames: Int = 1) -> Int32 {
        var runner = BlockcRunner(
            environment: ["BLOCKD_SOCKET": "/tmp/test.sock"].merging(environment) { $1 },
            stdout: { self.out += $0; return true },
            stderr: { self.err += $0 },
            now: { now },
            clock: Fixture.tokyo,
            color: false,
            isTerminal: tty,
            connect: { _ throws(ClientError) in
                self.connects += 1
                if let error = self.connectError { throw error }
                guard let t = self.transport else { throw .protocolError("no transport") }
                return t
            },
            sleep: { _ in
                self.frames += 1
                return self.frames < maxFrames
            })
        runner.notifyAgent = notifyAgent
        runner.writeFile = { path, text in
            if let problem = self.writeProblem { return problem }
            self.written[path] = text
            return nil
        }
        do {
            return runner.run(try BlockcInvocation.parse(arguments, now: now))
        } catch {
            return runner.usageError(error)
        }
    }
}

@Suite("blockc exit status and requests (§6)")
struct RunnerTests {
    static let down = ClientError.unreachable(path: "/tmp/test.sock", errno: ENOENT)

    @Test("exit status: 0 ok, 1 refused, 2 usage, 3 unreachable",
          arguments: [
              (["stop", "instagram"], Result<Response, ClientError>.success(.ok(["stopped": "instagram"])), Int32(0)),
              (["stop", "study"], .success(.error(CoreError(.locked, "block 'study' was started with --lock"))), 1),
              (["stop", "study"], .failure(.protocolError("blockd closed the connection")), 1),
              (["stop", "study"], .failure(.unreachable(path: "/tmp/test.sock", reason: "did not answer")), 3),
              (["stpo", "study"], .success(.ok([:])), 2),
              (["start", "--minutes", "0", "instagram"], .success(.ok([:])), 2),
              (["start", "--until", "25:00", "instagram"], .success(.ok([:])), 2),
          ])
    func exitStatus(arguments: [String], answer: Result<Response, ClientError>, expected: Int32) {
        let h = Harness(FakeTransport([answer]))
        #expect(h.run(arguments) == expected)
        if expected == 2 {
            #expect(h.connects == 0, "a usage error never reaches the daemon")
            #expect(h.err.lowercased().contains("see 'blockc --help'"))
        }
    }

    @Test("refused: 'blockc: <message>' on stderr, with the daemon's text cleaned; with --json the code for scripts on stdout too")
    func refusedMessage() throws {
        let error = CoreError(.unknownSelection, "no selection 'instagarm'\u{1B}[2J; did you mean 'instagram'?")
        let h = Harness(FakeTransport([.success(.error(error))]))
        #expect(h.run(["start", "--minutes", "30", "instagarm"]) == 1)
        #expect(h.err == "blockc: no selection 'instagarm'[2J; did you mean 'instagram'?\n", "people read the message, not the code")
        #expect(h.out.isEmpty)
        let j = Harness(FakeTransport([.success(.error(error))]))
        #expect(j.run(["start", "--minutes", "30", "--json", "instagarm"]) == 1)
        let o = try JSON.parse(j.out)
        #expect(o["error"]?["code"] == "unknown-selection")
        #expect(o["error"]?["message"]?.string == error.message)
        #expect(j.err == h.err)
    }

    @Test("§7 Truth: a start accepted but not enforced says so, that the block is registered, and exits 1",
          arguments: [false, true])
    func acceptedNotEnforced(json: Bool) {
        let answer: JSONObject = ["name": "reddit", "kind": "block", "selections": ["reddit"], "outcome": "created", "enforced": false,
                                  "notEnforced": [["selection": "reddit", "cause": "cannot write /etc/hosts: No space left on device"]]]
        let h = Harness(FakeTransport([.success(.ok(answer))]))
        #expect(h.run(["start", "--minutes", "10", "reddit"] + (json ? ["--json"] : [])) == 1)
        #expect(h.err.hasPrefix("blockc: accepted, but not enforced: cannot write /etc/hosts: No space left on device\n"))
        #expect(h.err.contains("The block 'reddit' is registered"))
        #expect(h.out.isEmpty != json, "--json still prints the object")
        var enforced = answer
        enforced["enforced"] = true
        enforced["notEnforced"] = nil
        let ok = Harness(FakeTransport([.success(.ok(enforced))]))
        #expect(ok.run(["start", "--minutes", "10", "reddit"]) == 0)
        #expect(ok.err.isEmpty)
    }

    @Test("unreachable: exit 3 with the hint that says how to start the daemon or join the group")
    func unreachable() {
        let h = Harness(nil, connectError: Self.down)
        #expect(h.run(["status"]) == 3)
        #expect(h.err.contains("no blockd at /tmp/test.sock (from --socket or BLOCKD_SOCKET); if it was a sandbox, start it again ('make try'"))
        let denied = Harness(nil, connectError: .unreachable(path: "/tmp/test.sock", errno: EACCES))
        #expect(denied.run(["status"]) == 3)
        #expect(denied.err.contains("join group 'blockd' ('sudo usermod -aG blockd $USER', then log in again)"))
    }

    @Test("--minutes and --for are seconds; --until HH:MM is the next one after now (T3), sent as an instant",
          arguments: [
              (["start", "--minutes", "30", "instagram"], Request.StartArguments(selections: ["instagram"], seconds: 1800)),
              (["start", "--for", "1h30m", "--lock", "--name", "focus", "reddit", "youtube"],
               Request.StartArguments(selections: ["reddit", "youtube"], seconds: 5400, lock: true, name: "focus")),
              (["start", "--until", "00:05", "instagram"],
               Request.StartArguments(selections: ["instagram"], until: Fixture.at("2026-11-30T00:05:00+09:00"))),
              (["start", "--until", "2026-12-01T09:00", "instagram"],
               Request.StartArguments(selections: ["instagram"], until: Fixture.at("2026-12-01T09:00:00+09:00"))),
          ])
    func startRequest(arguments: [String], expected: Request.StartArguments) {
        let h = Harness(FakeTransport([.success(.ok(Fixture.start(Fixture.instagramBlock, outcome: "created")))]))
        #expect(h.run(arguments, now: Fixture.at("2026-11-29T23:58:00+09:00")) == 0)
        #expect(h.transport?.sent == [.start(expected)])
        #expect(h.transport?.closed == true)
    }

    @Test("--json prints what blockc(1) documents: status and start their object, the listings their arrays, selections show one selection (§6)",
          arguments: [
              (["status", "--json"], Fixture.busyStatus, JSON.object(Fixture.busyStatus)),
              (["start", "--json", "--minutes", "30", "instagram"], Fixture.start(Fixture.instagramBlock, outcome: "created"),
               JSON.object(Fixture.start(Fixture.instagramBlock, outcome: "created"))),
              (["schedule", "list", "--json"], ["schedules": [Fixture.bedtime]], [Fixture.bedtime]),
              (["failures", "--json"], ["failures": [Fixture.capFailure]], [Fixture.capFailure]),
              (["failures", "--clear", "--json"], ["cleared": 2], ["cleared": 2]),
              (["limit", "list", "--json"], ["limits": []], []),
              (["stats", "--json"], ["shieldHits": [["day": "2026-11-29", "selection": "reddit", "hits": 3]]],
               [["day": "2026-11-29", "selection": "reddit", "hits": 3]]),
              (["selections", "--json"], ["selections": [Fixture.reddit]], [Fixture.reddit]),
              (["selections", "show", "reddit", "--json"], ["selection": Fixture.reddit], Fixture.reddit),
          ] as [([String], JSONObject, JSON)])
    func json(arguments: [String], answer: JSONObject, expected: JSON) throws {
        let piped = Harness(FakeTransport([.success(.ok(answer))]))
        #expect(piped.run(arguments) == 0)
        #expect(try JSON.parse(piped.out) == expected)
        #expect(piped.out == expected.serialized() + "\n", "one line into a pipe")
        let terminal = Harness(FakeTransport([.success(.ok(answer))]))
        #expect(terminal.run(arguments, tty: true) == 0)
        #expect(terminal.out == expected.prettyPrinted() + "\n", "indented on a terminal")
    }

    @Test("commands that change something answer in a sentence, not the daemon's JSON", arguments: [
        (["limit", "remove", "games"], ["removed": "games"], "Removed limit 'games'.\n"),
        (["schedule", "remove", "bedtime"], ["removed": "bedtime"], "Removed schedule 'bedtime'.\n"),
    ] as [([String], JSONObject, String)])
    func sentences(arguments: [String], answer: JSONObject, expected: String) {
        let h = Harness(FakeTransport([.success(.ok(answer))]))
        #expect(h.run(arguments) == 0)
        #expect(h.out == expected)
    }

    @Test("each command sends its wire request",
          arguments: [
              (["status"], Request.status()),
              (["status", "--all"], .status(all: true)),
              (["schedule", "add", "bedtime", "--weekly", "mon-fri", "22:00-07:00", "instagram"],
               .scheduleAdd(Schedule(name: "bedtime", selections: ["instagram"], days: .weekdays,
                                     start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0)))),
              (["schedule", "remove", "bedtime"], .scheduleRemove(name: "bedtime")),
              (["selections", "show", "reddit"], .selectionShow(name: "reddit")),
              (["failures", "--clear"], .failuresClear),
              (["limit", "add", "social", "1h", "instagram"], .limitAdd(Limit(name: "social", selections: ["instagram"], seconds: 3600))),
              (["reload"], .reload),
          ])
    func wireRequest(arguments: [String], expected: Request) {
        let h = Harness(FakeTransport([.success(.ok([:]))]))
        _ = h.run(arguments)
        #expect(h.transport?.sent == [expected])
    }

    @Test("limit commands pass the daemon's refusal through (exit 1)")
    func limitRefused() {
        let h = Harness(FakeTransport([.success(.error(CoreError(.usage, "usage limits are not available in this version of blockd (0.1.0)")))]))
        #expect(h.run(["limit", "list"]) == 1)
        #expect(h.err == "blockc: usage limits are not available in this version of blockd (0.1.0)\n")
    }

    @Test("version: the client's, then the daemon's from hello; without a daemon still the client's, exit 3; --version needs no daemon")
    func version() {
        let h = Harness(FakeTransport([.success(.ok(["protocol": 1, "version": "0.1.0", "daemon": "blockd"]))]))
        #expect(h.run(["version"]) == 0)
        #expect(h.out == "blockc \(BlockdVersion.version)\nblockd 0.1.0 (protocol 1)\n")
        #expect(h.transport?.sent == [.hello])
        let down = Harness(nil, connectError: Self.down)
        #expect(down.run(["version"]) == 3)
        #expect(down.out == "blockc \(BlockdVersion.version)\n")
        let flag = Harness(nil, connectError: Self.down)
        #expect(flag.run(["--version"]) == 0, "the client's own version needs no daemon")
        #expect(flag.out == "blockc \(BlockdVersion.version)\n" && flag.transport == nil)
    }

    @Test("help needs no daemon")
    func help() {
        let h = Harness(nil)
        #expect(h.run(["--help"]) == 0)
        #expect(h.out == BlockcHelp.usage + "\n")
        let one = Harness(nil)
        #expect(one.run(["help", "stop"]) == 0)
        #expect(one.out == BlockcHelp.help(for: "stop")! + "\n")
        #expect(Harness(nil).run(["help", "frobnicate"]) == 2)
    }

    @Test("watch prints one line per event until the stream ends (then exit 3: the daemon went away)")
    func watch() {
        let unlock = Response.event(WatchEvent.unlock(time: "2026-11-29T13:35:00+09:00", selection: "instagram",
                                                      why: "timed block 'instagram' ended (30m)").json).line
        let h = Harness(FakeTransport([.success(.ok([:]))], stream: [unlock, "garbage", unlock]))
        #expect(h.run(["watch"]) == 3)
        #expect(h.transport?.sent == [.watch])
        #expect(h.out == String(repeating: "13:35 Unblocked instagram: timed block 'instagram' ended (30m)\n", count: 2))
        #expect(h.err.contains("skipped a line"))

        #expect(!h.err.contains("Following"), "piped, nothing but the events")

        let j = Harness(FakeTransport([.success(.ok([:]))], stream: [unlock]))
        _ = j.run(["watch", "--json"])
        #expect(j.out == String(unlock.dropFirst(6)) + "\n")

        let t = Harness(FakeTransport([.success(.ok([:]))], stream: []))
        _ = t.run(["watch"], tty: true)
        #expect(t.err.hasPrefix("Following blockd's events as they happen (Ctrl-C stops).\n"), "on a terminal it says it follows: \(t.err)")
    }

    @Test("watch --notify hands the socket path to the agent and exits with its status; without one, exit 2")
    func watchNotify() {
        let h = Harness(FakeTransport([]))
        var given: [String] = []
        h.notifyAgent = { path in
            given.append(path)
            return 3
        }
        #expect(h.run(["--socket", "/tmp/other.sock", "watch", "--notify"]) == 3)
        #expect(given == ["/tmp/other.sock"])
        #expect(h.connects == 0, "the agent makes its own connections")

        let bare = Harness(FakeTransport([]))
        #expect(bare.run(["watch", "--notify"]) == 2)
        #expect(bare.err.hasPrefix("blockc: this blockc was built without the notification agent; use blockc watch"))
    }

    @Test("watch --notify looks for blockc-agent next to blockc, then in ../libexec/blockd (make install), else runs blockc's own file by the agent's name (P1)")
    func agentCandidates() {
        // Installed, /proc/self/exe is the one file, /usr/local/bin/blockd (blockc is a link to it).
        #expect(AgentLauncher.candidates(executable: "/usr/local/bin/blockd") == ["/usr/local/bin/blockc-agent", "/usr/local/libexec/blockd/blockc-agent"])
        #expect(AgentLauncher.candidates(executable: "/usr/local/bin/blockc") == ["/usr/local/bin/blockc-agent", "/usr/local/libexec/blockd/blockc-agent"])
        #expect(AgentLauncher.candidates(executable: "/work/.build/debug/blockc") == ["/work/.build/debug/blockc-agent", "/work/.build/libexec/blockd/blockc-agent"])
        #expect(AgentLauncher.candidates(executable: "/blockc") == ["/blockc-agent", "/libexec/blockd/blockc-agent"])
        #expect(AgentLauncher.candidates(executable: "blockc").isEmpty, "only an absolute path (from /proc/self/exe) is searched")
        #expect(AgentLauncher.arguments(agent: "/a/blockc-agent", socketPath: "/run/x.sock") == ["/a/blockc-agent", "--socket", "/run/x.sock", "watch", "--notify"])
        let fallback = AgentLauncher.fallback(executable: "/home/u/bin/blockc", socketPath: "/run/x.sock")
        #expect(fallback.path == "/home/u/bin/blockc" && fallback.argv == ["blockc-agent", "--socket", "/run/x.sock", "watch", "--notify"])
    }

    @Test("status --watch re-queries every frame; a TTY is redrawn in place, a pipe gets a new block")
    func statusWatch() {
        let frames = 3
        let pipe = Harness(FakeTransport(Array(repeating: .success(.ok(Fixture.emptyStatus)), count: frames)))
        #expect(pipe.run(["status", "--watch"], frames: frames) == 0)
        #expect(pipe.transport?.sent == Array(repeating: .status(), count: frames))
        #expect(pipe.out.components(separatedBy: "Nothing is blocked.").count == frames + 1)
        #expect(!pipe.out.contains("\u{1B}"))

        let tty = Harness(FakeTransport(Array(repeating: .success(.ok(Fixture.emptyStatus)), count: 2)))
        #expect(tty.run(["status", "--watch"], tty: true, frames: 2) == 0)
        #expect(tty.out.components(separatedBy: "\u{1B}[H\u{1B}[2J").count == 3)

        // The daemon going away mid-watch is shown and retried rather than ending the watch.
        let flaky = Harness(FakeTransport([.success(.ok(Fixture.emptyStatus)), .failure(.protocolError("blockd closed the connection")),
                                           .success(.ok(Fixture.emptyStatus))]))
        #expect(flaky.run(["status", "--watch"], frames: 3) == 0)
        #expect(flaky.out.contains("blockc: blockd closed the connection (retrying every second)"))
        #expect(flaky.connects == 2)
    }

    @Test("§6: status --watch asks for the view it was given, every frame (--all, --user, --all-users)")
    func statusWatchView() {
        let h = Harness(FakeTransport(Array(repeating: .success(.ok(Fixture.emptyStatus)), count: 2)))
        #expect(h.run(["status", "--watch", "--all", "--user", "kid"], frames: 2) == 0)
        #expect(h.transport?.sent == Array(repeating: .status(all: true, view: .user("kid")), count: 2))
    }
}
