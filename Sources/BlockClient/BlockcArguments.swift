import BlockCore
import FoundationEssentials

/// `blockc`'s command line (§6): the wire request its command names, built whole by the
/// parser (`Command` ⊂ `Request` is the one vocabulary), plus how blockc shows the answer.
/// Time is a parameter: `--until TIME` is resolved against the `now` and zone given to `parse`
/// (§6: HH:MM is the next one after now).
public struct BlockcInvocation: Equatable, Sendable {
    /// `--socket PATH`; nil means `BLOCKD_SOCKET`, then the default path.
    public var socketPath: String?
    public var action: Action
    /// W1: what each pasted address was read as, for stderr before the request goes (stdout
    /// stays the answer, `--json` too).
    public var notes: [String] = []

    public enum Action: Equatable, Sendable {
        /// `--help`, `-h` or `help [COMMAND]`: no daemon needed.
        case help(topic: String?)
        /// `--version`: the client's own, no daemon needed (`blockc version` sends hello).
        case version
        /// Every command: its request, and how to show the answer.
        case send(Request, OutputOptions)
    }

    public init(socketPath: String? = nil, action: Action, notes: [String] = []) {
        (self.socketPath, self.action, self.notes) = (socketPath, action, notes)
    }

    public static let defaultSocket = "/run/blockd/blockd.sock"

    /// The socket to use: `--socket`, else `BLOCKD_SOCKET`, else the default.
    public func socket(environment: [String: String]) -> String {
        if let socketPath { return socketPath }
        if let env = environment["BLOCKD_SOCKET"], !env.isEmpty { return env }
        return BlockcInvocation.defaultSocket
    }
}

/// How blockc shows an answer: all that it adds to the wire request.
public struct OutputOptions: Equatable, Sendable {
    public enum Format: Equatable, Sendable {
        case text
        /// `--json`: the command's JSON shape (Client+JSON.swift).
        case json
        /// R2: `report --csv`.
        case csv
        /// R2: `report --html FILE`: one self-contained page written to this path (`-`: stdout).
        case html(String)
    }

    public var format: Format
    /// R2: `report --by`.
    public var by: ReportGrouping
    /// `status --watch`: the status again every second.
    public var watch: Bool
    /// `watch --notify`: desktop notifications from the session agent (S1).
    public var notify: Bool
    /// `screen --pam`: pam_exec's account check for the user in `PAM_USER` (Client+Screen.swift).
    public var pam = false

    public init(format: Format = .text, by: ReportGrouping = .selection, watch: Bool = false, notify: Bool = false) {
        (self.format, self.by, self.watch, self.notify) = (format, by, watch, notify)
    }

    public var json: Bool { format == .json }
}

extension BlockcInvocation {
    /// The commands `--help` lists, in order: derived from `Command`, the one list.
    public static var commandNames: [String] { Command.cliCommands }

    /// The invocation `arguments` (argv without the program) name; `now` and `clock` resolve
    /// `--until TIME`. Never touches the system: no clock, no daemon, no output.
    public static func parse(_ arguments: [String], now: Date, clock: LocalClock) throws(CoreError) -> BlockcInvocation {
        var scanner = ArgumentScanner(arguments, program: "blockc")
        var socket: String?
        var words: [String] = []
        var flags: [(name: String, value: String?)] = []
        var help = false, version = false
        var valueless: (name: String, error: CoreError)?
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
                        let value = joined(try scanner.value(for: name, inline: inline), for: name, scanner: &scanner)
                        if name == "--socket" { socket = value } else { flags.append((name, value)) }
                    } catch {
                        // `report --weekly`: whether the flag lacks its value or is not the
                        // command's at all is known once the command is.
                        if name == "--socket" || valueless != nil { mistake = mistake ?? error } else {
                            valueless = (name, error)
                            flags.append((name, nil))
                        }
                    }
                } else {
                    if inline != nil { mistake = mistake ?? scanner.usage("\(name) takes no value") }
                    flags.append((name, nil))
                }
            }
        }
        if help { return BlockcInvocation(socketPath: socket, action: .help(topic: helpTopic(words))) }
        if version { return BlockcInvocation(socketPath: socket, action: .version) }
        if let mistake { throw mistake }
        if let s = socket, s.isEmpty { throw scanner.usage("--socket needs a non-empty path") }
        guard let verb = words.first else { throw scanner.usage("no command given") }
        var p = CommandParser(scanner: scanner, words: Array(words.dropFirst()), flags: flags, verb: verb, now: now, clock: clock)
        let action: Action
        do throws(CoreError) {
            action = try p.parse()
        } catch {
            // The command did not take the flag: that is the mistake, not its missing value.
            if let valueless, p.flags.contains(where: { $0.name == valueless.name }) || p.command?.takes(valueless.name) == false {
                throw p.notAnOption(valueless.name)
            }
            throw valueless?.error ?? error
        }
        if let valueless { throw valueless.error }  // taken without its value
        return BlockcInvocation(socketPath: socket, action: action, notes: p.notes)
    }

    /// The command `arguments` name, as a help topic ("start", "schedule add"), for a usage
    /// error's pointer; nil when they name none. Option values are not words.
    public static func topic(of arguments: [String]) -> String? {
        var words: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("-") {
                if (valued.contains(a) || a == "--socket") && !a.contains("=") { i += 1 }
            } else {
                words.append(a)
            }
            i += 1
        }
        guard let topic = helpTopic(words), topic != "help", BlockcHelp.help(for: topic) != nil else { return nil }
        return topic
    }

    /// `blockc -h schedule add` and `blockc schedule add --help` both ask about "schedule add";
    /// `blockc help start` is the command `help` with its topic.
    static func helpTopic(_ words: [String]) -> String? {
        let words = words.first == "help" ? Array(words.dropFirst()) : words
        guard let first = words.first else { return nil }
        if words.count > 1, BlockcHelp.help(for: "\(first) \(words[1])") != nil { return "\(first) \(words[1])" }
        return first
    }

    /// `--for 2 hours`, `--until tomorrow 07:00`: the value of a flag that takes a DURATION or
    /// a TIME, with the words after it that belong to it as people type them unquoted
    /// (`DurationText.wordsContinuing`, `TimeText.wordsContinuing` say which).
    static func joined(_ value: String, for flag: String, scanner: inout ArgumentScanner) -> String {
        let following = scanner.upcoming
        let n = durationFlags.contains(flag) ? DurationText.wordsContinuing(value, in: following)
            : flag == "--until" ? TimeText.wordsContinuing(value, in: following) : 0
        guard n > 0 else { return value }
        scanner.skip(n)
        return ([value] + following.prefix(n)).joined(separator: " ")
    }

    /// The flags whose value is a DURATION.
    static let durationFlags: Set<String> = ["--for", "--warn", "--delay", "--more-time-per-day"]

    static let valued: Set<String> = ["--minutes", "--for", "--until", "--name", "--daily", "--weekly", "--days", "--warn", "--reason", "--action",
                                      "--more-time", "--delay", "--more-time-per-day", "--user", "--last", "--to",
                                      "--day", "--by", "--html"]
    /// The flags some command takes without a value.
    static let switches: Set<String> = ["--all", "--all-users", "--allow-only", "--clear", "--csv", "--json", "--lock", "--month",
                                        "--notify", "--pam", "--session", "--today", "--watch", "--week"]
    /// Every option of some command, and the global ones: a flag past these is a typo.
    static var options: Set<String> { valued.union(switches).union(["--socket", "--help", "-h", "--version"]) }
}

/// Parses one command's words and flags into its request; every flag must be used by the
/// command it follows.
struct CommandParser {
    let scanner: ArgumentScanner
    var words: [String]
    var flags: [(name: String, value: String?)]
    var verb: String
    /// What `--until TIME` is resolved against.
    let now: Date
    let clock: LocalClock
    var options = OutputOptions()
    /// The command the words name, once known.
    var command: Command?
    /// W1: what pasted addresses were read as.
    var notes: [String] = []

    mutating func parse() throws(CoreError) -> BlockcInvocation.Action {
        let action: BlockcInvocation.Action
        do throws(CoreError) {
            action = try dispatch()
        } catch {
            // A typo'd option is the mistake to tell, not the option it kept from being seen
            // (`start --minuts 5 x` is not "start needs --minutes").
            let own = command.map(\.blockcOptions) ?? BlockcInvocation.options
            if let typo = flags.first(where: { !own.contains($0.name) }) { throw notAnOption(typo.name) }
            throw error
        }
        try noFlagsLeft()
        return action
    }

    /// Every flag was taken by the command.
    func noFlagsLeft() throws(CoreError) {
        if let extra = flags.first { throw notAnOption(extra.name) }
    }

    private mutating func dispatch() throws(CoreError) -> BlockcInvocation.Action {
        if verb == "help" { return .help(topic: BlockcInvocation.helpTopic(words)) }
        guard let (command, consumed) = Command.named(by: [verb] + words) else { throw unknown() }
        self.command = command
        words.removeFirst(consumed - 1)
        verb = command.cliWords ?? verb
        // §6: `--json` is an option of exactly the commands with a JSON shape (Client+JSON.swift);
        // elsewhere it is left over and refused like any flag the command does not take.
        if command.jsonShape != nil, take("--json") { options.format = .json }
        let request = try build(command)
        return .send(request, options)
    }

    /// The request for `command`, whole: nothing is added to it after the parser.
    private mutating func build(_ command: Command) throws(CoreError) -> Request {
        switch command {
        case .start: return .start(try start())
        case .stop: return .stop(name: try single("NAME"))
        case .status:
            options.watch = take("--watch")
            let all = take("--all")
            let view = try takeView()
            try none()
            return .status(all: all, view: view)
        case .scheduleAdd: return .scheduleAdd(try scheduleAdd())
        case .scheduleRemove: return .scheduleRemove(name: try single("NAME"))
        case .scheduleList: return try alone(.scheduleList)
        case .selections: return try alone(.selections)
        case .selectionShow: return .selectionShow(name: try single("NAME"))
        case .failures, .failuresClear:
            let clear = take("--clear")
            return try alone(clear ? .failuresClear : .failures)
        case .limitAdd: return .limitAdd(try limitAdd())
        case .limitRemove: return .limitRemove(name: try single("NAME"))
        case .limitList: return try alone(.limitList)
        case .more: return .more(try more())
        case .requests: return try alone(.requests)
        case .approve: return try approve()
        case .deny: return try deny()
        case .cancel:
            let name = try single("NAME")
            try Names.validateReference(name, what: "name")
            return .cancel(name: name)
        case .stats: return try alone(.stats)
        case .report: return .report(try report())
        case .screen:
            options.pam = take("--pam")
            let view = try takeView()
            if options.pam, view != .caller { throw scanner.usage("screen --pam takes the user from PAM_USER, as pam_exec sets it; give no --user") }
            try none()
            return .screen(view: view)
        case .foreground:  // R1: it has no blockc words (cliWords), so it is never named here
            throw CoreError(.usage, "blockc has no 'foreground' command; blockc-agent sends it")
        case .web:  // B2: the same; blockd's native-messaging host sends it
            throw CoreError(.usage, "blockc has no 'web' command; blockd's browser extension sends it through blockc-agent")
        case .watch:
            options.notify = take("--notify")
            return try alone(.watch)
        case .reload: return try alone(.reload)
        case .hello: return try alone(.hello)
        }
    }

    /// A command that takes no words (its flags are taken already).
    private func alone(_ request: Request) throws(CoreError) -> Request {
        try none()
        return request
    }

    private mutating func start() throws(CoreError) -> Request.StartArguments {
        let users = try takeUsers()
        let minutes = value("--minutes"), duration = value("--for"), until = value("--until")
        let given = [minutes, duration, until].compactMap { $0 }
        guard given.count == 1 else {
            // `start 10m reddit`, `start 2 hours reddit`: the duration is there, without its flag.
            if given.isEmpty, let first = words.first, words.count > 1 {
                let n = DurationText.wordsContinuing(first, in: Array(words.dropFirst()))
                let typed = words.prefix(n + 1).joined(separator: " ")
                if words.count > n + 1, (try? DurationText.parse(typed)) != nil {
                    func word(_ w: String) -> String { w.contains(" ") ? "\"\(w)\"" : w }
                    let rest = words.dropFirst(n + 1).map(word).joined(separator: " ")
                    throw CoreError(.usage, "start needs --minutes N, --for DURATION or --until TIME; did you mean 'blockc start --for \(word(typed)) \(rest)'? See 'blockc --help'.")
                }
            }
            throw scanner.usage(given.isEmpty ? "start needs --minutes N, --for DURATION or --until TIME"
                                              : "give only one of --minutes, --for and --until")
        }
        var seconds: Int?
        if let minutes {
            guard let n = Int(minutes) else {
                throw CoreError(.invalidDuration, "--minutes takes a whole number from 1 to \(DurationText.maximum / 60), not '\(minutes)'")
            }
            let (product, overflow) = n.multipliedReportingOverflow(by: 60)
            seconds = overflow ? Int.max : product
        } else if let duration {
            seconds = try DurationText.parse(duration)
        }
        let lock = take("--lock"), allowOnly = take("--allow-only")
        let name = value("--name")
        let policy = try moreTimeFlags()
        guard !words.isEmpty else { throw scanner.usage("start needs at least one SELECTION (see 'blockc selections')") }
        let selections = try allowing(allowOnly)
        try Request.StartArguments(selections: selections, seconds: seconds, name: name).validate()
        words = []
        // A flag start does not take is the mistake to report before the time is read.
        try noFlagsLeft()
        var args = Request.StartArguments(selections: readAddresses(selections), seconds: seconds, lock: lock, name: name)
        if let until { args.until = try TimeText.parse(until, now: now, clock: clock) }
        (args.moreTime, args.users) = (policy, users)
        return args
    }

    /// W2: with `--allow-only`, the SELECTIONs are what stays allowed: one `only:` expression.
    func allowing(_ allowOnly: Bool) throws(CoreError) -> [String] {
        guard allowOnly else { return words }
        let expression = AllowOnly.expression(allowing: words)
        _ = try AllowOnly.parts(of: expression)
        return [expression]
    }

    /// W1: a pasted `https://` address becomes the site or the pages' prefix it names, and a
    /// note says what it was read as. An address with a bad host goes as it is: blockd's
    /// refusal says why. The parts of an allow-only expression (W2) are read the same way.
    mutating func readAddresses(_ words: [String]) -> [String] {
        words.map { word in
            if AllowOnly.isExpression(word), let parts = try? AllowOnly.parts(of: word) {
                return AllowOnly.expression(allowing: readAddresses(parts))
            }
            guard let reading = (try? Site.reading(url: word)) ?? nil else { return word }
            notes.append(reading.summary(of: word))
            return reading.target
        }
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
