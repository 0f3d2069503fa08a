import BlockCore

/// `blockc`'s command line (DESIGN §6), parsed without touching the clock: `--until TIME` is
/// kept as text and resolved against "now" by the executable (TimeText.parse).
public struct BlockcInvocation: Equatable, Sendable {
    /// `--socket PATH`; nil means `BLOCKD_SOCKET`, then the default path.
    public var socketPath: String?
    public var command: BlockcCommand
    /// M1, M2: `--more-time`, `--delay`, `--more-time-per-day` of `start`, `schedule add` and
    /// `limit add` (nil: the defaults).
    public var moreTime: MoreTimePolicy? = nil
    /// `--user NAME` (repeatable) on start, schedule add and limit add; `status --user NAME`
    /// or `--all-users` (BlockcArguments+Users.swift).
    public var users: [String] = []
    public var view: StatusView = .caller

    public static let defaultSocket = "/run/blockd/blockd.sock"

    /// The socket to use: `--socket`, else `BLOCKD_SOCKET`, else the default.
    public func socket(environment: [String: String]) -> String {
        if let socketPath { return socketPath }
        if let env = environment["BLOCKD_SOCKET"], !env.isEmpty { return env }
        return BlockcInvocation.defaultSocket
    }
}

public enum BlockEnd: Equatable, Sendable {
    case seconds(Int)
    case until(String)
}

public enum BlockcCommand: Equatable, Sendable {
    case start(end: BlockEnd, lock: Bool, name: String?, selections: [String], json: Bool)
    case stop(name: String)
    /// `all`: every activity, not only the active ones and counts.
    case status(json: Bool, watch: Bool, all: Bool = false)
    case scheduleAdd(name: String, days: WeekdaySet, start: WallTime, end: WallTime, selections: [String])
    case scheduleRemove(name: String)
    case scheduleList(json: Bool)
    case selections(json: Bool)
    case selectionShow(name: String, json: Bool)
    case failures(json: Bool, clear: Bool)
    case limitAdd(name: String, seconds: Int, selections: [String], days: WeekdaySet, warnSeconds: Int?)
    case limitRemove(name: String)
    case limitList(json: Bool)
    /// M1, M2: `more`, `requests`, `approve`, `deny`, `cancel`, carried as their request.
    case moreTime(Request, json: Bool)
    case stats(json: Bool)
    /// R2: the days and whose view (`--user`, `--all-users`) travel as the request's arguments;
    /// the options say how to print it.
    case report(ReportArguments, ReportOptions)
    case watch(json: Bool, notify: Bool)
    case reload
    /// `blockc version` asks the daemon too; `--version` is the client's alone and needs no daemon.
    case version(daemon: Bool)
    case help(topic: String?)
}

extension BlockcInvocation {
    /// The commands `--help` lists, in order: derived from `Command`, the one list.
    public static var commandNames: [String] { Command.cliCommands }

    public static func parse(_ arguments: [String]) throws(CoreError) -> BlockcInvocation {
        var scanner = ArgumentScanner(arguments, program: "blockc")
        var socket: String?
        var words: [String] = []
        var flags: [(name: String, value: String?)] = []
        var help = false, version = false
        // A mistake seen before or after -h/--help does not hide the help asked for.
        var mistake: CoreError?
        // Global options may stand anywhere; everything else is gathered for the command.
        while let token = scanner.next() {
            switch token {
            case .positional(let p): words.append(p)
            case .option(let name, _) where ["-h", "--help"].contains(name): help = true
            case .option("--version", _): version = true
            case .option(let name, let inline):
                if name == "--socket" && socket != nil || name != "--user" && flags.contains(where: { $0.name == name }) {
                    mistake = mistake ?? scanner.usage("option \(name) given twice")
                }
                if name == "--socket" || BlockcInvocation.valued.contains(name) {
                    do {
                        let value = try scanner.value(for: name, inline: inline)
                        if name == "--socket" { socket = value } else { flags.append((name, value)) }
                    } catch {
                        mistake = mistake ?? error
                    }
                } else {
                    if inline != nil { mistake = mistake ?? scanner.usage("\(name) takes no value") }
                    flags.append((name, nil))
                }
            }
        }
        if help { return BlockcInvocation(socketPath: socket, command: .help(topic: helpTopic(words))) }
        if version { return BlockcInvocation(socketPath: socket, command: .version(daemon: false)) }
        if let mistake { throw mistake }
        if let s = socket, s.isEmpty { throw scanner.usage("--socket needs a non-empty path") }
        guard let verb = words.first else { throw scanner.usage("no command given") }
        var p = CommandParser(scanner: scanner, words: Array(words.dropFirst()), flags: flags, verb: verb)
        let command = try p.parse()
        var invocation = BlockcInvocation(socketPath: socket, command: command, moreTime: p.moreTime)
        (invocation.users, invocation.view) = (p.users, p.view)
        return invocation
    }

    /// `blockc -h schedule add` and `blockc schedule add --help` both ask about "schedule add";
    /// `blockc help start` is the command `help` with its topic.
    static func helpTopic(_ words: [String]) -> String? {
        let words = words.first == "help" ? Array(words.dropFirst()) : words
        guard let first = words.first else { return nil }
        if words.count > 1, BlockcHelp.help(for: "\(first) \(words[1])") != nil { return "\(first) \(words[1])" }
        return first
    }

    static let valued: Set<String> = ["--minutes", "--for", "--until", "--name", "--daily", "--weekly", "--days", "--warn", "--reason",
                                      "--more-time", "--delay", "--more-time-per-day", "--user", "--last", "--to",
                                      "--day", "--by", "--html"]
}

/// Parses one command's words and flags; every flag must be used by the command it follows.
struct CommandParser {
    let scanner: ArgumentScanner
    var words: [String]
    var flags: [(name: String, value: String?)]
    var verb: String
    /// Set by `moreTimeFlags()` for the commands that take them.
    var moreTime: MoreTimePolicy?
    var users: [String] = []
    var view = StatusView.caller

    mutating func parse() throws(CoreError) -> BlockcCommand {
        let command = try dispatch()
        if let extra = flags.first { throw scanner.usage("'\(extra.name)' is not an option of '\(verb)'") }
        return command
    }

    private mutating func dispatch() throws(CoreError) -> BlockcCommand {
        if verb == "help" { return .help(topic: BlockcInvocation.helpTopic(words)) }
        guard let (command, consumed) = Command.named(by: [verb] + words) else { throw unknown() }
        words.removeFirst(consumed - 1)
        verb = command.cliWords ?? verb
        return try build(command)
    }

    /// The words name no command: a group without (or with a wrong) second word, or a typo.
    private func unknown() -> CoreError {
        let subs = Command.subcommands(of: verb)
        if !subs.isEmpty {
            let choices = subs.dropLast().joined(separator: ", ") + " or " + subs.last!
            guard let sub = words.first else { return scanner.usage("\(verb) needs \(choices)") }
            return scanner.usage("unknown \(verb) command '\(sub)'; use \(choices)")
        }
        let hint = Suggest.closest(to: verb, among: Command.cliGroups + ["help"]).map { "; did you mean '\($0)'?" } ?? ""
        return CoreError(.usage, "unknown command '\(verb)'\(hint) See 'blockc --help'")
    }

    private mutating func build(_ command: Command) throws(CoreError) -> BlockcCommand {
        switch command {
        case .start, .scheduleAdd, .limitAdd: try takeUsers()
        default: break
        }
        switch command {
        case .start: return try start()
        case .stop: return .stop(name: try single("NAME"))
        case .status:
            let json = take("--json"), watch = take("--watch"), all = take("--all")
            try takeView()
            try none()
            return .status(json: json, watch: watch, all: all)
        case .scheduleAdd: return try scheduleAdd()
        case .scheduleRemove: return .scheduleRemove(name: try single("NAME"))
        case .scheduleList: return .scheduleList(json: try jsonOnly())
        case .selections: return .selections(json: try jsonOnly())
        case .selectionShow:
            let json = take("--json")
            return .selectionShow(name: try single("NAME"), json: json)
        case .failures, .failuresClear:
            let json = take("--json"), clear = take("--clear")
            try none()
            return .failures(json: json, clear: clear)
        case .limitAdd: return try limitAdd()
        case .limitRemove: return .limitRemove(name: try single("NAME"))
        case .limitList: return .limitList(json: try jsonOnly())
        case .more, .requests, .approve, .deny, .cancel:
            let json = take("--json")
            return .moreTime(try moreTimeRequest(command), json: json)
        case .stats: return .stats(json: try jsonOnly())
        case .report: return try report()
        case .foreground:  // R1: it has no blockc words (cliWords), so it is never named here
            throw CoreError(.usage, "blockc has no 'foreground' command; blockc-agent sends it")
        case .watch:
            let json = take("--json"), notify = take("--notify")
            try none()
            return .watch(json: json, notify: notify)
        case .reload:
            try none()
            return .reload
        case .hello:
            try none()
            return .version(daemon: true)
        }
    }

    /// A listing command: `--json` and nothing else.
    private mutating func jsonOnly() throws(CoreError) -> Bool {
        let json = take("--json")
        try none()
        return json
    }

    private mutating func start() throws(CoreError) -> BlockcCommand {
        let minutes = value("--minutes"), duration = value("--for"), until = value("--until")
        let given = [minutes, duration, until].compactMap { $0 }
        guard given.count == 1 else {
            throw scanner.usage(given.isEmpty ? "start needs --minutes N, --for DURATION or --until TIME"
                                              : "give only one of --minutes, --for and --until")
        }
        var end: BlockEnd
        if let minutes {
            guard let n = Int(minutes) else {
                throw CoreError(.invalidDuration, "--minutes takes a whole number from 1 to \(DurationText.maximum / 60), not '\(minutes)'")
            }
            let (seconds, overflow) = n.multipliedReportingOverflow(by: 60)
            end = .seconds(overflow ? Int.max : seconds)
        } else if let duration {
            end = .seconds(try DurationText.parse(duration))
        } else {
            end = .until(until!)
        }
        let lock = take("--lock"), json = take("--json"), allowOnly = take("--allow-only")
        let name = value("--name")
        try moreTimeFlags()
        guard !words.isEmpty else { throw scanner.usage("start needs at least one SELECTION (see 'blockc selections')") }
        var seconds: Int?
        if case .seconds(let s) = end { seconds = s }
        let selections = try allowing(allowOnly)
        try Request.StartArguments(selections: selections, seconds: seconds, name: name).validate()
        defer { words = [] }
        return .start(end: end, lock: lock, name: name, selections: selections, json: json)
    }

    /// W2: with `--allow-only`, the SELECTIONs are what stays allowed: one `only:` expression.
    private func allowing(_ allowOnly: Bool) throws(CoreError) -> [String] {
        guard allowOnly else { return words }
        let expression = AllowOnly.expression(allowing: words)
        _ = try AllowOnly.parts(of: expression)
        return [expression]
    }

    private mutating func scheduleAdd() throws(CoreError) -> BlockcCommand {
        guard !words.isEmpty else { throw scanner.usage("schedule add needs a NAME") }
        let name = words.removeFirst()
        let allowOnly = take("--allow-only")
        try moreTimeFlags()
        let daily = value("--daily"), weekly = value("--weekly")
        var days = WeekdaySet.all
        let window: String
        switch (daily, weekly) {
        case (let d?, nil): window = d
        case (nil, let w?):
            days = try WeekdaySet.parse(w)
            guard !words.isEmpty else { throw scanner.usage("--weekly DAYS needs the window after it: --weekly mon-fri 09:00-15:00") }
            window = words.removeFirst()
        default:
            throw scanner.usage("schedule add needs exactly one of --daily HH:MM-HH:MM and --weekly DAYS HH:MM-HH:MM")
        }
        guard let (start, end) = try WallTime.window(window) else {
            throw CoreError(.invalidTime, "'\(window)' is not a window; write HH:MM-HH:MM, e.g. 22:00-07:00")
        }
        guard !words.isEmpty else { throw scanner.usage("schedule add needs at least one SELECTION") }
        let selections = try allowing(allowOnly)
        try Schedule(name: name, selections: selections, days: days, start: start, end: end).validate()
        defer { words = [] }
        return .scheduleAdd(name: name, days: days, start: start, end: end, selections: selections)
    }

    private mutating func limitAdd() throws(CoreError) -> BlockcCommand {
        guard words.count >= 3 else { throw scanner.usage("limit add needs NAME DURATION SELECTION...") }
        let name = words.removeFirst()
        let seconds = try DurationText.parse(words.removeFirst())
        let days = try value("--days").map { text throws(CoreError) in try WeekdaySet.parse(text) } ?? .all
        let warn = try value("--warn").map { text throws(CoreError) in try DurationText.parse(text) }
        try moreTimeFlags()
        try Limit(name: name, selections: words, seconds: seconds, days: days, warnSeconds: warn).validate()
        defer { words = [] }
        return .limitAdd(name: name, seconds: seconds, selections: words, days: days, warnSeconds: warn)
    }

    mutating func take(_ flag: String) -> Bool {
        guard let i = flags.firstIndex(where: { $0.name == flag }) else { return false }
        flags.remove(at: i)
        return true
    }

    mutating func value(_ flag: String) -> String? {
        guard let i = flags.firstIndex(where: { $0.name == flag }) else { return nil }
        return flags.remove(at: i).value
    }

    mutating func single(_ what: String) throws(CoreError) -> String {
        guard words.count == 1 else {
            throw scanner.usage(words.isEmpty ? "'\(verb)' needs \(what)" : "'\(verb)' takes one \(what)")
        }
        return words.removeFirst()
    }

    func none() throws(CoreError) {
        if let w = words.first { throw scanner.usage("unexpected argument '\(w)' for '\(verb)'") }
    }
}
