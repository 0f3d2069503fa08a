@testable import BlockClient
import BlockCore
import Foundation
import Testing

@Suite("blockc's command line (§6)")
struct BlockcArgumentsTests {
    /// The refusal of `arguments`, or nil with an issue recorded when they were accepted.
    static func refusal(_ arguments: [String]) -> String? {
        do {
            let parsed = try BlockcInvocation.parse(arguments)
            Issue.record("accepted as \(parsed)")
            return nil
        } catch {
            return error.message
        }
    }

    static let text = OutputOptions(), json = OutputOptions(format: .json)
    static func start(_ selections: [String], seconds: Int? = nil, until: Date? = nil, lock: Bool = false, name: String? = nil) -> Request {
        .start(Request.StartArguments(selections: selections, seconds: seconds, until: until, lock: lock, name: name))
    }
    static func hm(_ h: Int, _ m: Int) -> WallTime { WallTime(hour: h, minute: m) }

    @Test("§6: each command line is one request, built whole by the parser, and how to show its answer", arguments: [
        (["start", "--minutes", "30", "instagram"], .send(start(["instagram"], seconds: 1800), text)),
        (["start", "--for", "1h30m", "--lock", "--name", "focus", "instagram", "reddit"],
         .send(start(["instagram", "reddit"], seconds: 5400, lock: true, name: "focus"), text)),
        (["start", "--until=00:05", "x", "--json"], .send(start(["x"], until: Fixture.at("2026-11-30T00:05:00+09:00")), json)),
        (["start", "--for", "24h", "youtube"], .send(start(["youtube"], seconds: 86_400), text)),
        (["stop", "instagram"], .send(.stop(name: "instagram"), text)),
        (["status"], .send(.status(), text)),
        (["status", "--json"], .send(.status(), json)),
        (["status", "--watch"], .send(.status(), OutputOptions(watch: true))),
        (["status", "--all", "--json"], .send(.status(all: true), json)),
        (["schedule", "add", "bedtime", "--daily", "22:00-07:00", "instagram", "reddit"],
         .send(.scheduleAdd(Schedule(name: "bedtime", selections: ["instagram", "reddit"], days: .all, start: hm(22, 0), end: hm(7, 0))), text)),
        (["schedule", "add", "school", "--weekly", "mon-fri", "09:00-15:00", "youtube"],
         .send(.scheduleAdd(Schedule(name: "school", selections: ["youtube"], days: .weekdays, start: hm(9, 0), end: hm(15, 0))), text)),
        (["schedule", "add", "allday", "--daily", "13:05-13:05", "x"],
         .send(.scheduleAdd(Schedule(name: "allday", selections: ["x"], days: .all, start: hm(13, 5), end: hm(13, 5))), text)),
        (["schedule", "add", "night", "--daily", "21:00-07:00", "--session"],
         .send(.scheduleAdd({ var s = Schedule(name: "night", selections: [], days: .all, start: hm(21, 0), end: hm(7, 0)); s.session = .lock; return s }()), text)),
        (["schedule", "add", "night", "--daily", "21:00-07:00", "--session", "--action", "logout"],
         .send(.scheduleAdd({ var s = Schedule(name: "night", selections: [], days: .all, start: hm(21, 0), end: hm(7, 0)); s.session = .logout; return s }()), text)),
        (["schedule", "remove", "bedtime"], .send(.scheduleRemove(name: "bedtime"), text)),
        (["schedule", "list", "--json"], .send(.scheduleList, json)),
        (["selections"], .send(.selections, text)),
        (["selections", "show", "instagram"], .send(.selectionShow(name: "instagram"), text)),
        (["failures", "--clear"], .send(.failuresClear, text)),
        (["limit", "add", "games", "1h", "steam"], .send(.limitAdd(Limit(name: "games", selections: ["steam"], seconds: 3600)), text)),
        (["limit", "add", "games", "1h", "--days", "mon-fri", "--warn", "5m", "steam", "minecraft"],
         .send(.limitAdd(Limit(name: "games", selections: ["steam", "minecraft"], seconds: 3600, days: .weekdays, warnSeconds: 300)), text)),
        (["limit", "remove", "games"], .send(.limitRemove(name: "games"), text)),
        (["limit", "list"], .send(.limitList, text)),
        (["more", "steam", "15m", "--reason", "homework"], .send(.more(.init(selection: "steam", seconds: 900, reason: "homework")), text)),
        (["more", "steam", "--today", "--json"], .send(.more(.init(selection: "steam", today: true)), json)),
        (["requests"], .send(.requests, text)),
        (["approve", "m3", "10m"], .send(.approve(id: "m3", seconds: 600), text)),
        (["deny", "m3", "--reason", "not tonight"], .send(.deny(id: "m3", reason: "not tonight"), text)),
        (["cancel", "work"], .send(.cancel(name: "work"), text)),
        (["stats", "--json"], .send(.stats, json)),
        (["report"], .send(.report(ReportArguments()), text)),
        (["report", "--last", "14", "--to", "2026-11-29", "--user", "kid", "--json"],
         .send(.report(ReportArguments(period: .days(14), to: CivilDate(year: 2026, month: 11, day: 29), view: .user("kid"))), json)),
        (["report", "--all-users"], .send(.report(ReportArguments(view: .allUsers)), text)),
        (["report", "--csv"], .send(.report(ReportArguments()), OutputOptions(format: .csv))),
        (["report", "--day", "2026-11-20", "--by", "app"],
         .send(.report(ReportArguments(period: .days(1), to: CivilDate(year: 2026, month: 11, day: 20))), OutputOptions(by: .app))),
        (["report", "--week"], .send(.report(ReportArguments(period: .week)), text)),
        (["report", "--week", "2026-11-18", "--html", "w.html"],
         .send(.report(ReportArguments(period: .week, to: CivilDate(year: 2026, month: 11, day: 18))), OutputOptions(format: .html("w.html")))),
        (["report", "--month", "2026-02", "--all-users", "--by", "user"],
         .send(.report(ReportArguments(period: .month, to: CivilDate(year: 2026, month: 2, day: 1), view: .allUsers)), OutputOptions(by: .user))),
        (["watch", "--notify"], .send(.watch, OutputOptions(notify: true))),
        (["watch", "--json"], .send(.watch, json)),
        (["reload"], .send(.reload, text)),
        (["version"], .send(.hello, text)),
        (["--version"], .version),
        (["--help"], .help(topic: nil)),
        (["start", "--help"], .help(topic: "start")),
        (["start", "--minutes", "5", "--", "-weird"], .send(start(["-weird"], seconds: 300), text)),
    ] as [([String], BlockcInvocation.Action)])
    func blockc(args: [String], expected: BlockcInvocation.Action) throws {
        #expect(try BlockcInvocation.parse(args).action == expected)
    }

    @Test("T1, T3: a DURATION or a TIME typed in words, quoted or not, is one value wherever blockc takes one", arguments: [
        (["start", "--for", "2", "hours", "reddit"], start(["reddit"], seconds: 7200)),
        (["start", "--for", "2 hours", "reddit"], start(["reddit"], seconds: 7200)),
        (["start", "--for=2", "hours", "reddit"], start(["reddit"], seconds: 7200)),
        (["start", "reddit", "--for", "1", "hour", "30", "minutes"], start(["reddit"], seconds: 5400)),
        (["start", "--for", "1h", "30m", "x.com"], start(["x.com"], seconds: 5400)),
        (["start", "--for", "1h30", "x.com"], start(["x.com"], seconds: 5400)),
        (["start", "--for", "90min", "x.com"], start(["x.com"], seconds: 5400)),
        (["start", "--for", "1.5h", "x.com"], start(["x.com"], seconds: 5400)),
        (["start", "--for", "2h", "hours"], start(["hours"], seconds: 7200)),
        (["start", "--until", "tomorrow", "07:00", "reddit"], start(["reddit"], until: Fixture.at("2026-11-30T07:00:00+09:00"))),
        (["start", "--until", "tomorrow 7am", "reddit"], start(["reddit"], until: Fixture.at("2026-11-30T07:00:00+09:00"))),
        (["start", "--until", "7am", "tomorrow", "reddit"], start(["reddit"], until: Fixture.at("2026-11-30T07:00:00+09:00"))),
        (["start", "--until", "10", "pm", "reddit"], start(["reddit"], until: Fixture.at("2026-11-29T22:00:00+09:00"))),
        (["start", "--until", "10pm", "reddit"], start(["reddit"], until: Fixture.at("2026-11-29T22:00:00+09:00"))),
        (["start", "--until", "sat", "9", "am", "reddit"], start(["reddit"], until: Fixture.at("2026-12-05T09:00:00+09:00"))),
        (["start", "--until", "2026-11-30", "22:00", "reddit"], start(["reddit"], until: Fixture.at("2026-11-30T22:00:00+09:00"))),
        (["start", "--until", "22:00", "9gag"], start(["9gag"], until: Fixture.at("2026-11-29T22:00:00+09:00"))),
        (["limit", "add", "games", "1", "hour", "steam"], .limitAdd(Limit(name: "games", selections: ["steam"], seconds: 3600))),
        (["limit", "add", "games", "1h", "--warn", "5", "min", "steam"],
         .limitAdd(Limit(name: "games", selections: ["steam"], seconds: 3600, warnSeconds: 300))),
        (["more", "reddit", "10", "minutes"], .more(.init(selection: "reddit", seconds: 600))),
        (["more", "reddit", "10 minutes"], .more(.init(selection: "reddit", seconds: 600))),
        (["approve", "m3", "10", "minutes"], .approve(id: "m3", seconds: 600)),
    ] as [([String], Request)])
    func typedInWords(args: [String], expected: Request) throws {
        #expect(try BlockcInvocation.parse(args).request == expected)
    }

    @Test("T1, T3: a DURATION or TIME refused on the command line says what to write, from what was typed", arguments: [
        (["start", "--for", "90", "reddit"], "'90' is not a duration: it has no unit; write 90m for minutes or 90s for seconds"),
        (["start", "--for", "2", "hourz", "reddit"], "'2 hourz' is not a duration: 'hourz' is not a unit (s, m, h or d, or a word such as minutes); did you mean '2 hours'?"),
        (["start", "--for", "2", "weeks", "reddit"], "did you mean '14d'?"),
        (["limit", "add", "games", "1", "hour"], "limit add needs NAME DURATION SELECTION..."),
        (["more", "reddit", "10", "minutes", "extra"], "more needs a DURATION such as 15m, or --today"),
        (["approve", "m3", "10", "minutes", "extra"], "approve needs ID and optionally a DURATION"),
        (["start", "--until", "tomorrow", "reddit"], "'tomorrow' is not a time: 'tomorrow' needs a time of day; write one after it, as in tomorrow 07:00"),
        (["start", "--until", "tomorow", "07:00", "reddit"], "'tomorow 07:00' is not a time: 'tomorow' is neither a day nor a time of day; did you mean 'tomorrow 07:00'?"),
        (["start", "--until", "today", "09:00", "reddit"], "'today 09:00' has passed (it is 13:05 now); write 'tomorrow 09:00'"),
    ])
    func typedInWordsRefused(args: [String], message: String) {
        do {
            let parsed = try BlockcInvocation.parse(args)
            Issue.record("accepted \(args) as \(parsed)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("W1: a pasted address is read as the site it names in the parser, with a note for stderr")
    func pastedAddress() throws {
        let invocation = try BlockcInvocation.parse(["start", "--for", "1h", "https://www.youtube.com/", "reddit"])
        #expect(invocation.request == BlockcArgumentsTests.start(["youtube.com", "reddit"], seconds: 3600))
        #expect(invocation.notes.count == 1 && invocation.notes[0].contains("as the site youtube.com"), "\(invocation.notes)")
        #expect(try BlockcInvocation.parse(["start", "--for", "1h", "reddit"]).notes.isEmpty)
    }

    @Test("§6: a flag start does not take is reported before a bad --until is read, as blockc always has")
    func leftoverBeforeUntil() {
        guard let message = Self.refusal(["start", "--until", "25:00", "--frob", "x"]) else { return }
        #expect(message.hasPrefix("'--frob' is not an option of 'start'"), "\(message)")
    }

    @Test("§6: a mistyped option is the mistake told, before what it kept from being seen, with the command's own option meant (by spelling, by its usual word, by its letter) and its help; an option of another command gets no guess",
          arguments: [
              (["start", "--minuts", "5", "x"], "'--minuts' is not an option of 'start'; did you mean '--minutes'? See 'blockc help start'."),
              (["start", "--fro", "1h", "x"], "'--fro' is not an option of 'start'; did you mean '--for'? See 'blockc help start'."),
              (["status", "--all-user"], "'--all-user' is not an option of 'status'; did you mean '--all-users'? See 'blockc help status'."),
              (["status", "--minutes", "5"], "'--minutes' is not an option of 'status'. See 'blockc help status'."),
              (["start", "-m", "10", "x"], "'-m' is not an option of 'start'; did you mean '--minutes'? See 'blockc help start'."),
              (["start", "--time", "10m", "x"], "'--time' is not an option of 'start'; did you mean '--for'? See 'blockc help start'."),
              (["report", "--weekly"], "'--weekly' is not an option of 'report'; did you mean '--week'? See 'blockc help report'."),
              (["schedule", "add", "b", "--week", "mon", "22:00-07:00", "x"],
               "'--week' is not an option of 'schedule add'; did you mean '--weekly'? See 'blockc help schedule add'."),
          ])
    func mistypedOption(arguments: [String], message: String) {
        #expect(Self.refusal(arguments) == message)
    }

    @Test("§6: what people call a command, and a time or a window typed another way, are told with what blockc takes", arguments: [
        (["block", "reddit"], "unknown command 'block'; did you mean 'start' (blockc start --for 30m SELECTION)?"),
        (["unblock", "reddit"], "unknown command 'unblock'; did you mean 'stop' (blockc stop NAME)?"),
        (["list"], "unknown command 'list'; did you mean 'status', 'schedule list' or 'limit list'?"),
        (["frob"], "unknown command 'frob'. See 'blockc --help'."),
        (["start", "--until", "2200", "x"], "'2200' is not a time of day; did you mean '22:00'?"),
        (["start", "--until", "22h", "x"], "'22h' is not a time of day; did you mean '22:00'?"),
        (["start", "--until", "7.30", "x"], "'7.30' is not a time of day; did you mean '07:30'?"),
    ])
    func saidAnotherWay(arguments: [String], says: String) {
        guard let message = Self.refusal(arguments) else { return }
        #expect(message.contains(says), "\(message)")
    }

    @Test("§6: a window typed with spaces, and today and yesterday as a report's DATE, are taken")
    func typedWithSpaces() throws {
        for argv in [["schedule", "add", "lunch", "--daily", "12:00", "-", "13:00", "x"], ["schedule", "add", "lunch", "--daily", "12:00-", "13:00", "x"]] {
            guard case .send(.scheduleAdd(let s), _) = try BlockcInvocation.parse(argv).action else { Issue.record("\(argv)"); continue }
            #expect(s.start == WallTime(hour: 12, minute: 0) && s.end == WallTime(hour: 13, minute: 0) && s.selections == ["x"], "\(argv)")
        }
        guard case .send(.report(let r), _) = try BlockcInvocation.parse(["report", "--day", "yesterday"]).action else { Issue.record("report"); return }
        #expect(r.to != nil && r.period == .days(1))
    }

    @Test("§6: a usage error points at the command's own help when the arguments name one", arguments: [
        (["start", "--minutes"], "start"), (["schedule", "add", "x"], "schedule add"), (["--socket", "/s", "report", "--weekly"], "report"),
        (["frob"], nil), ([], nil),
    ])
    func usageTopic(arguments: [String], topic: String?) {
        #expect(BlockcInvocation.topic(of: arguments) == topic)
    }

    @Test("§6: a duration typed without its flag is told with the command meant", arguments: [
        (["start", "10m", "reddit"], "did you mean 'blockc start --for 10m reddit'?"),
        (["start", "2", "hours", "reddit", "youtube"], "did you mean 'blockc start --for \"2 hours\" reddit youtube'?"),
    ])
    func durationWithoutFlag(arguments: [String], says: String) {
        guard let message = Self.refusal(arguments) else { return }
        #expect(message.hasPrefix("start needs --minutes N, --for DURATION or --until TIME; ") && message.contains(says), "\(message)")
    }

    @Test("§6: the options blockc knows are exactly those its help names")
    func optionsAreTheHelps() {
        let texts = [BlockcHelp.usage] + BlockcInvocation.commandNames.compactMap { BlockcHelp.help(for: $0) }
        let named = Set(texts.flatMap { $0.matches(of: /--[a-z][a-z-]*[a-z]/).map { String($0.output) } }).union(["-h"])
        #expect(BlockcInvocation.options == named, "only in the parser: \(BlockcInvocation.options.subtracting(named).sorted()); only in the help: \(named.subtracting(BlockcInvocation.options).sorted())")
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
        (["schedule", "add", "night", "--daily", "21:00-07:00", "--session", "youtube"], .usage),
        (["schedule", "add", "night", "--daily", "21:00-07:00", "--session", "--allow-only", "wikipedia"], .usage),
        (["schedule", "add", "night", "--daily", "21:00-07:00", "--action", "lock", "youtube"], .usage),
        (["schedule", "add", "night", "--daily", "21:00-07:00", "--session", "--action", "nap"], .usage),
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
        #expect(try BlockcInvocation.parse(args).action == .help(topic: topic))
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
