import BlockCore
import Foundation
import Testing
@testable import BlockClient

/// CONTRIBUTING.md, "Adding a command": what the compiler cannot check, checked for every
/// `Command` case. A command added to the enum fails here until it has a row below (how
/// blockc asks for it, and an answer as blockd sends it), and then until blockc parses it to
/// its request, shows the answer in words of its own, prints `--json` exactly where it has a
/// JSON shape, and has a route in the authority table and a line in `--help`.
@Suite("§6 Adding a command: every Command has a parser path, a --json shape, a human text, a route and a help line")
struct CommandCoverageTests {
    /// How blockc is asked for a command, and what it must say to an answer blockd gives.
    struct Row: Sendable {
        var argv: [String]
        var answer: JSONObject
        /// A part of the human text the answer must give.
        var says: String
        /// `EVENT` lines after the answer (`watch`), and the exit status when the stream ends.
        var stream: [String] = []
        var status: Int32 = 0
    }

    static let unlock = Response.event(WatchEvent.unlock(time: "2026-11-29T13:35:00+09:00", selection: "instagram",
                                                         why: "timed block 'instagram' ended (30m)").json).line
    static let games = Fixture.shapes.activity(.limit(Limit(name: "games", selections: ["steam"], seconds: 3600)), at: Fixture.now)
    static let grant = GrantReply(id: "m1", selection: "steam", start: "2026-11-29T13:05:00+09:00", end: "2026-11-29T13:20:00+09:00",
                                  uid: 1000, user: "kid", activities: ["focus"], grantedBy: 0, grantedByUser: "root")
    static let request = MoreTimeRequestReply(id: "m2", selection: "steam", asked: "2026-11-29T13:00:00+09:00",
                                              expires: "2026-11-29T14:00:00+09:00", uid: 1000, user: "kid", seconds: 900)

    /// One row per command; nil for a command blockc never sends (`foreground` is blockc-agent's).
    static let rows: [Command: Row?] = [
        .start: Row(argv: ["start", "--minutes", "30", "instagram"], answer: Fixture.start(Fixture.instagramBlock, outcome: "created"),
                    says: "Blocked instagram until 13:35 (30m left)."),
        .stop: Row(argv: ["stop", "instagram"], answer: RemovalReply.stopped("instagram").json, says: "Stopped block 'instagram'."),
        .status: Row(argv: ["status"], answer: Fixture.busyStatus, says: "Blocked now"),
        .scheduleAdd: Row(argv: ["schedule", "add", "bedtime", "--daily", "22:00-07:00", "instagram", "reddit"],
                          answer: Fixture.bedtime.object!, says: "Added schedule 'bedtime' (daily 22:00-07:00)"),
        .scheduleRemove: Row(argv: ["schedule", "remove", "bedtime"], answer: RemovalReply.removed("bedtime").json, says: "Removed schedule 'bedtime'."),
        .scheduleList: Row(argv: ["schedule", "list"], answer: ["schedules": [Fixture.bedtime]], says: "bedtime"),
        .selections: Row(argv: ["selections"], answer: ["selections": [Fixture.reddit]], says: "Details: 'blockc selections show NAME'."),
        .selectionShow: Row(argv: ["selections", "show", "reddit"], answer: ["selection": Fixture.reddit], says: "Selection reddit"),
        .failures: Row(argv: ["failures"], answer: ["failures": [Fixture.capFailure]], says: "Clear them with 'blockc failures --clear'."),
        .failuresClear: Row(argv: ["failures", "--clear"], answer: ["cleared": 2], says: "Cleared 2 failures."),
        .limitAdd: Row(argv: ["limit", "add", "games", "1h", "steam"], answer: games.object!, says: "Added limit 'games': 1h of use a day"),
        .limitRemove: Row(argv: ["limit", "remove", "games"], answer: RemovalReply.removed("games").json, says: "Removed limit 'games'."),
        .limitList: Row(argv: ["limit", "list"], answer: ["limits": [games]], says: "1h daily"),
        .more: Row(argv: ["more", "steam", "15m"], answer: MoreReply.pending(request).json, says: "Asked for more time for steam (request m2)"),
        .requests: Row(argv: ["requests"], answer: RequestsReply(requests: [request], grants: [grant], admin: true).json,
                       says: "Requests"),
        .approve: Row(argv: ["approve", "m1"], answer: grant.json, says: "More time for steam by root until 13:20"),
        .deny: Row(argv: ["deny", "m2"], answer: DeniedReply(id: "m2", selection: "steam").json, says: "Denied request m2 for steam."),
        .cancel: Row(argv: ["cancel", "work"], answer: CancelledReply(name: "work", kind: .loosening(.stop)).json, says: "Cancelled the stop of 'work'; it stays."),
        .stats: Row(argv: ["stats"], answer: ["shieldHits": [["day": "2026-11-29", "selection": "reddit", "hits": 3]]], says: "DAY"),
        .report: Row(argv: ["report", "--day", "2026-11-29"],
                     answer: ["schema": 1, "from": "2026-11-29", "to": "2026-11-29", "days": [ReportOutputTests.day("2026-11-29", "sun")]],
                     says: "Report, Sun 29 Nov 2026 for the whole machine"),
        .screen: Row(argv: ["screen", "--user", "kid"],
                     answer: ScreenReply(user: "kid", uid: 1001, held: true, activity: "night", kind: "schedule", until: "2026-11-30T07:00:00+09:00", action: "lock").json,
                     says: "Allowed hours 'night' keep kid off the screen until"),
        .foreground: nil,
        .web: nil,
        .watch: Row(argv: ["watch"], answer: [:], says: "13:35 Unblocked instagram", stream: [unlock], status: BlockcRunner.unreachable),
        .reload: Row(argv: ["reload"], answer: ["reloaded": 4], says: "Reloaded the configuration (4 files)."),
        .hello: Row(argv: ["version"], answer: ["protocol": 1, "version": "0.1.0", "daemon": "blockd"], says: "blockd 0.1.0 (protocol 1)"),
    ]

    static func row(_ command: Command) throws -> Row? {
        guard let row = rows[command] else {
            throw CoreError(.internal, "no row for '\(command)' in CommandCoverageTests.rows: add how blockc asks for it and an answer")
        }
        return row
    }

    /// blockc run with `row`'s arguments (and `extra`) against a daemon that gives its answer.
    static func run(_ row: Row, _ extra: [String] = []) -> (Harness, Int32) {
        let h = Harness(FakeTransport([.success(.ok(row.answer))], stream: row.stream))
        let status = h.run(row.argv + extra)
        return (h, status)
    }

    @Test("§6: a command blockc cannot send has no words and no help line")
    func rowsCover() throws {
        #expect(Set(CommandCoverageTests.rows.keys) == Set(Command.allCases), "one row per Command")
        for command in Command.allCases where try CommandCoverageTests.row(command) == nil {
            #expect(command.cliWords == nil && command.blockcHelp == nil, "\(command): no row, so blockc has no way to send it")
        }
    }

    @Test("§6: blockc's words parse to the command's request, which the wire carries whole", arguments: Command.allCases)
    func parserPath(command: Command) throws {
        guard let row = try CommandCoverageTests.row(command) else { return }
        let request = try #require(try BlockcInvocation.parse(row.argv).request, "\(row.argv) sends a request")
        #expect(request.command == command)
        #expect(try Request.parse(request.line) == request, "what blockd reads is what blockc built: \(request.line)")
    }

    @Test("§6: the answer is shown in words of the command's own, not as the daemon's object", arguments: Command.allCases)
    func humanText(command: Command) throws {
        guard let row = try CommandCoverageTests.row(command) else { return }
        let (h, status) = CommandCoverageTests.run(row)
        #expect(status == row.status && h.transport?.sent.first?.command == command, "\(row.argv): \(h.err)")
        #expect(h.out.contains(row.says), "\(row.argv) says '\(row.says)': \(h.out)")
        #expect(h.out != Fixture.output().generic(row.answer) + "\n", "\(row.argv) has a text of its own")
    }

    @Test("§6: --json is an option of exactly the commands with a JSON shape, and prints that shape", arguments: Command.allCases)
    func jsonShape(command: Command) throws {
        guard let row = try CommandCoverageTests.row(command) else { return }
        let accepted = Result(catching: { () throws(CoreError) -> BlockcInvocation in try BlockcInvocation.parse(row.argv + ["--json"]) })
        guard let shape = command.jsonShape else {
            guard case .failure(let error) = accepted else { Issue.record("\(row.argv) takes --json but has no JSON shape"); return }
            #expect(error.message.hasPrefix("'--json' is not an option of"), "\(error.message)")
            return
        }
        #expect((try? accepted.get()) != nil, "\(row.argv) --json")
        let expected = switch shape {
        case .events: JSON.object(try #require(try Response.parse(row.stream[0]).eventObject))
        case .answer, .list, .member: shape.document(row.answer)
        }
        #expect(try JSON.parse(CommandCoverageTests.run(row, ["--json"]).0.out) == expected, "\(row.argv) --json")
        if let usage = command.blockcHelp?.usage, command != .cancel {
            // `cancel` takes --json, but its usage line has never said so; --help stays as it is.
            #expect(usage.contains("[--json]") || usage.contains("--json |"), "blockc --help says \(row.argv) takes --json")
        }
    }

    @Test("§6, A1: a route in the authority table, and a help line for each command blockc names", arguments: Command.allCases)
    func routeAndHelp(command: Command) throws {
        #expect(AuthorityTable.routes.contains("| `\(command)` |"), "docs/USERS.md's table has \(command)")
        if let usage = command.blockcHelp?.usage {
            #expect(!usage.contains("--json") || command.jsonShape != nil, "\(command): --help offers --json, so it needs a shape")
        }
        guard let words = command.cliWords else { return }
        #expect(command.blockcHelp != nil && BlockcHelp.help(for: words) != nil, "blockc help \(words)")
    }
}

extension Response {
    /// The object of an `EVENT` line.
    var eventObject: JSONObject? {
        guard case .event(let o) = self else { return nil }
        return o
    }
}
