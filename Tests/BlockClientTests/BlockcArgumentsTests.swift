@testable import BlockClient
import BlockCore
import Testing

@Suite("blockc's command line (DESIGN §6)")
struct BlockcArgumentsTests {
    @Test("blockc commands", arguments: [
        (["start", "--minutes", "30", "instagram"], BlockcCommand.start(end: .seconds(1800), lock: false, name: nil, selections: ["instagram"], json: false)),
        (["start", "--for", "1h30m", "--lock", "--name", "focus", "instagram", "reddit"],
         .start(end: .seconds(5400), lock: true, name: "focus", selections: ["instagram", "reddit"], json: false)),
        (["start", "--until=00:05", "x", "--json"], .start(end: .until("00:05"), lock: false, name: nil, selections: ["x"], json: true)),
        (["start", "--for", "24h", "youtube"], .start(end: .seconds(86_400), lock: false, name: nil, selections: ["youtube"], json: false)),
        (["stop", "instagram"], .stop(name: "instagram")),
        (["status"], .status(json: false, watch: false)),
        (["status", "--json"], .status(json: true, watch: false)),
        (["status", "--watch"], .status(json: false, watch: true)),
        (["status", "--all", "--json"], .status(json: true, watch: false, all: true)),
        (["schedule", "add", "bedtime", "--daily", "22:00-07:00", "instagram", "reddit"],
         .scheduleAdd(name: "bedtime", days: .all, start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0), selections: ["instagram", "reddit"])),
        (["schedule", "add", "school", "--weekly", "mon-fri", "09:00-15:00", "youtube"],
         .scheduleAdd(name: "school", days: .weekdays, start: WallTime(hour: 9, minute: 0), end: WallTime(hour: 15, minute: 0), selections: ["youtube"])),
        (["schedule", "add", "allday", "--daily", "13:05-13:05", "x"],
         .scheduleAdd(name: "allday", days: .all, start: WallTime(hour: 13, minute: 5), end: WallTime(hour: 13, minute: 5), selections: ["x"])),
        (["schedule", "remove", "bedtime"], .scheduleRemove(name: "bedtime")),
        (["schedule", "list", "--json"], .scheduleList(json: true)),
        (["selections"], .selections(json: false)),
        (["selections", "show", "instagram"], .selectionShow(name: "instagram", json: false)),
        (["failures", "--clear"], .failures(json: false, clear: true)),
        (["limit", "add", "games", "1h", "steam"], .limitAdd(name: "games", seconds: 3600, selections: ["steam"], days: .all, warnSeconds: nil)),
        (["limit", "add", "games", "1h", "--days", "mon-fri", "--warn", "5m", "steam", "minecraft"],
         .limitAdd(name: "games", seconds: 3600, selections: ["steam", "minecraft"], days: .weekdays, warnSeconds: 300)),
        (["limit", "remove", "games"], .limitRemove(name: "games")),
        (["limit", "list"], .limitList(json: false)),
        (["stats", "--json"], .stats(json: true)),
        (["report"], .report(ReportArguments(), ReportOptions())),
        (["report", "--last", "14", "--to", "2026-11-29", "--user", "kid", "--json"],
         .report(ReportArguments(period: .days(14), to: CivilDate(year: 2026, month: 11, day: 29), view: .user("kid")), ReportOptions(format: .json))),
        (["report", "--all-users"], .report(ReportArguments(view: .allUsers), ReportOptions())),
        (["report", "--csv"], .report(ReportArguments(), ReportOptions(format: .csv))),
        (["report", "--day", "2026-11-20", "--by", "app"], .report(ReportArguments(period: .days(1), to: CivilDate(year: 2026, month: 11, day: 20)), ReportOptions(by: .app))),
        (["report", "--week"], .report(ReportArguments(period: .week), ReportOptions())),
        (["report", "--week", "2026-11-18", "--html", "w.html"], .report(ReportArguments(period: .week, to: CivilDate(year: 2026, month: 11, day: 18)), ReportOptions(format: .html("w.html")))),
        (["report", "--month", "2026-02", "--all-users", "--by", "user"], .report(ReportArguments(period: .month, to: CivilDate(year: 2026, month: 2, day: 1), view: .allUsers), ReportOptions(by: .user))),
        (["watch", "--notify"], .watch(json: false, notify: true)),
        (["reload"], .reload),
        (["version"], .version(daemon: true)),
        (["--version"], .version(daemon: false)),
        (["--help"], .help(topic: nil)),
        (["start", "--help"], .help(topic: "start")),
        (["start", "--minutes", "5", "--", "-weird"], .start(end: .seconds(300), lock: false, name: nil, selections: ["-weird"], json: false)),
    ])
    func blockc(args: [String], expected: BlockcCommand) throws {
        #expect(try BlockcInvocation.parse(args).command == expected)
    }

    @Test("blockc --socket anywhere, then BLOCKD_SOCKET, then the default")
    func socket() throws {
        #expect(try BlockcInvocation.parse(["status", "--socket", "/tmp/s"]).socket(environment: ["BLOCKD_SOCKET": "/e"]) == "/tmp/s")
        #expect(try BlockcInvocation.parse(["--socket=/tmp/s", "status"]).socketPath == "/tmp/s")
        #expect(try BlockcInvocation.parse(["status"]).socket(environment: ["BLOCKD_SOCKET": "/e"]) == "/e")
        #expect(try BlockcInvocation.parse(["status"]).socket(environment: [:]) == "/run/blockd/blockd.sock")
    }

    @Test("blockc refuses bad input with a typed error and a hint", arguments: [
        (["start", "instagram"], ErrorCode.usage),
        (["start", "--minutes", "30"], .usage),
        (["start", "--minutes", "0", "x"], .invalidDuration),
        (["start", "--minutes", "abc", "x"], .invalidDuration),
        (["start", "--minutes", "527041", "x"], .invalidDuration),
        (["start", "--for", "90", "x"], .invalidDuration),
        (["start", "--minutes", "5", "--for", "5m", "x"], .usage),
        (["start", "--minutes", "5", "--name", "bad name", "x"], .invalidName),
        (["stop"], .usage),
        (["stop", "a", "b"], .usage),
        (["status", "--lock"], .usage),
        (["status", "extra"], .usage),
        (["schedule", "add", "bedtime", "--daily", "22:00", "x"], .invalidTime),
        (["schedule", "add", "bedtime", "--daily", "25:00-07:00", "x"], .invalidTime),
        (["schedule", "add", "bedtime", "--weekly", "funday", "22:00-07:00", "x"], .invalidDays),
        (["schedule", "add", "bedtime", "--daily", "22:00-07:00"], .usage),
        (["schedule", "add", "bedtime", "--daily", "22:00-07:00", "--weekly", "mon", "x"], .usage),
        (["schedule", "frob"], .usage),
        (["limit", "add", "games", "1h"], .usage),
        (["staus"], .usage),
        ([], .usage),
        (["--socket"], .usage),
        (["--frob", "status"], .usage),
    ])
    func blockcErrors(args: [String], code: ErrorCode) {
        do {
            let parsed = try BlockcInvocation.parse(args)
            Issue.record("accepted \(args) as \(parsed)")
        } catch {
            #expect(error.code == code)
        }
    }

    @Test("R2: report's mistakes say what it takes", arguments: [
        (["report", "--json", "--csv"], "give one of --json, --csv and --html"),
        (["report", "--html", ""], "--html needs a file to write, such as --html week.html"),
        (["report", "--by", "day"], "--by takes selection, app or user, not 'day'"),
        (["report", "--by", "user"], "--by user compares people: give it with --all-users (root and blockd-admin members)"),
        (["report", "--week", "--last", "3"], "give one of --last, --day, --week and --month"),
        (["report", "--day", "2026-11-20", "--to", "2026-11-21"], "--to goes with --last; --day, --week and --month take their own date"),
        (["report", "--week", "23.11."], "'23.11.' is not a date; write it as YYYY-MM-DD, such as 2026-11-29"),
        (["report", "2026-11-20"], "unexpected argument '2026-11-20' for 'report'"),
    ])
    func reportErrors(args: [String], message: String) {
        do {
            let parsed = try BlockcInvocation.parse(args)
            Issue.record("accepted \(args) as \(parsed)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("-h and --help before or after a command give that command's help, whatever else is wrong", arguments: [
        (["-h", "start"], "start"),
        (["--help", "stop", "x"], "stop"),
        (["start", "-h"], "start"),
        (["-h", "schedule", "add"], "schedule add"),
        (["schedule", "add", "--help"], "schedule add"),
        (["selections", "show", "-h"], "selections show"),
        (["limit", "list", "--help"], "limit list"),
        (["help", "schedule", "remove"], "schedule remove"),
        (["-h", "start", "--minutes"], "start"),
        (["start", "--minutes", "5", "--minutes", "6", "x", "--help"], "start"),
        (["--socket", "/tmp/s", "-h"], nil),
    ] as [([String], String?)])
    func helpAnywhere(args: [String], topic: String?) throws {
        #expect(try BlockcInvocation.parse(args).command == .help(topic: topic))
        if let topic { #expect(BlockcHelp.help(for: topic) != nil, "\(topic) has help") }
    }

    @Test("an option given twice is a usage error that says so", arguments: [
        (["start", "--minutes", "5", "--minutes", "6", "x"], "--minutes"),
        (["start", "--minutes", "5", "--lock", "--lock", "x"], "--lock"),
        (["status", "--json", "--json"], "--json"),
        (["--socket", "/a", "status", "--socket=/b"], "--socket"),
        (["schedule", "add", "b", "--daily", "22:00-07:00", "--daily", "21:00-07:00", "x"], "--daily"),
    ])
    func repeatedOption(args: [String], option: String) {
        do {
            let parsed = try BlockcInvocation.parse(args)
            Issue.record("accepted \(args) as \(parsed)")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message == "option \(option) given twice; see 'blockc --help'")
        }
    }

    @Test("an unknown command suggests the closest one")
    func didYouMean() {
        do { _ = try BlockcInvocation.parse(["staus"]) } catch {
            #expect(error.message.contains("did you mean 'status'?"))
        }
    }

    @Test("help for a command group lists every subcommand", arguments: [
        ("schedule", ["blockc schedule add", "blockc schedule remove", "blockc schedule list"]),
        ("limit", ["blockc limit add", "blockc limit remove"]),
        ("start", ["blockc start (--minutes N"]),
        ("selections", ["blockc selections [--json]", "blockc selections show NAME"]),
    ])
    func helpTopics(topic: String, expected: [String]) throws {
        let text = try #require(BlockcHelp.help(for: topic))
        for line in expected { #expect(text.contains(line), "\(topic): \(line)") }
        #expect(BlockcHelp.help(for: "frobnicate") == nil)
    }

    @Test("every command in --help parses from its usage line's first words")
    func helpListsEveryCommand() {
        for name in BlockcInvocation.commandNames {
            #expect(BlockcHelp.usage.contains("  \(name)") || BlockcHelp.usage.contains("| \(name)"), "\(name) is in --help")
        }
    }
}
