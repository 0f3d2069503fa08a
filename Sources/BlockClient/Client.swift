import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import ZoneInfo

/// Runs one parsed `blockc` command (§6) and returns its exit status. Everything it
/// touches is injected, so
/// tests drive it with a fake `Transport`, a fixed clock and string writers.
public struct BlockcRunner {
    /// Exit statuses, §6.
    public static let ok: Int32 = 0, refused: Int32 = 1, usage: Int32 = 2, unreachable: Int32 = 3

    public typealias Connector = (_ socketPath: String) throws(ClientError) -> any Transport

    public var environment: [String: String]
    /// Writes text to standard output; false when nobody reads it any more (a closed pipe),
    /// which ends the streaming commands.
    public var stdout: (String) -> Bool
    public var stderr: (String) -> Void
    public var now: () -> Date
    public var clock: LocalClock
    /// ANSI colour in human output: the caller decides (a TTY and NO_COLOR unset or empty).
    public var color: Bool
    /// Whether stdout is a terminal: `status --watch` then redraws in place.
    public var isTerminal: Bool
    public var connect: Connector
    /// Waits between `status --watch` frames; returning false stops the loop (tests).
    public var sleep: (TimeInterval) -> Bool
    /// `watch --notify`: the user agent (BlockAgent), set by the executable, which links it.
    public var notifyAgent: ((_ socketPath: String) -> Int32)?
    /// R2: writes `report --html`'s page; the problem's text, or nil (tests replace it).
    public var writeFile: (_ path: String, _ text: String) -> String? = { BlockcRunner.writeAtomically($0, $1) }

    public init(environment: [String: String], stdout: @escaping (String) -> Bool, stderr: @escaping (String) -> Void,
                now: @escaping () -> Date, clock: LocalClock, color: Bool, isTerminal: Bool,
                connect: @escaping Connector, sleep: @escaping (TimeInterval) -> Bool) {
        self.environment = environment
        self.stdout = stdout
        self.stderr = stderr
        self.now = now
        self.clock = clock
        self.color = color
        self.isTerminal = isTerminal
        self.connect = connect
        self.sleep = sleep
    }

    /// The real process: stdio, the system clock and zone, the Unix socket.
    public static func system() -> BlockcRunner {
        let environment = ProcessInfo.processInfo.environment
        let tty = isatty(STDOUT_FILENO) == 1
        // https://no-color.org: NO_COLOR set to anything non-empty turns colour off.
        let color = tty && (environment["NO_COLOR"] ?? "").isEmpty
        return BlockcRunner(
            environment: environment,
            stdout: { text in writeAll(STDOUT_FILENO, text) },
            stderr: { text in _ = writeAll(STDERR_FILENO, text) },
            now: { Date() },
            clock: LocalClock(SystemTimeZone.current(environment: environment)),
            color: color,
            isTerminal: tty,
            connect: { path throws(ClientError) in try ControlConnection(path: path) },
            sleep: { seconds in
                var time = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
                var left = timespec()
                while nanosleep(&time, &left) == -1 && errno == EINTR { time = left }
                return true
            })
    }

    /// Unbuffered write(2), so that each watch line leaves at once even into a pipe; false
    /// on EPIPE and other errors (SIGPIPE is ignored by the executable).
    static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let start = offset
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + start, $0.count - start) }
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }

    var output: Output {
        var out = Output(now: now(), clock: clock, color: color)
        if let columns = environment["COLUMNS"].flatMap(Int.init), columns >= 40 { out.columns = min(columns, 160) }
        let locale = environment["LC_ALL"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["LC_CTYPE"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["LANG"] ?? ""
        out.ascii = !(locale.uppercased().contains("UTF-8") || locale.uppercased().contains("UTF8"))
        return out
    }

    @discardableResult
    func say(_ text: String) -> Bool { stdout(text + "\n") }

    /// A usage error (exit 2): the parser's or ours, with a pointer to the help: the command's
    /// own (`blockc help start`, with its examples) when the arguments name one, else
    /// `blockc --help`. A message that points somewhere already keeps its pointer.
    public func usageError(_ error: CoreError, topic: String? = nil) -> Int32 {
        var message = error.message
        let generic = "; see 'blockc --help'"
        if topic != nil, message.hasSuffix(generic) { message.removeLast(generic.count) }
        let points = message.contains("blockc --help") || message.contains("blockc help ")
        let hint = points ? "" : "\nSee " + (topic.map { "'blockc help \($0)'" } ?? "'blockc --help'") + "."
        stderr("blockc: \(message)\(hint)\n")
        return BlockcRunner.usage
    }

    func report(_ error: ClientError) -> Int32 {
        stderr("blockc: \(Output.clean(error.description))\n")
        if case .unreachable = error { return BlockcRunner.unreachable }
        return BlockcRunner.refused
    }

    /// The daemon's refusal: its message for people; with `--json` the error object on stdout
    /// too (`{"error":{"code":"locked","message":…}}`), the code being for scripts.
    func refused(_ error: CoreError, json: Bool = false) -> Int32 {
        if json {
            say(JSON.object(["error": .object(["code": .string(error.code.rawValue), "message": .string(error.message)])]).serialized())
        }
        stderr("blockc: \(Output.clean(error.message))\n")
        return BlockcRunner.refused
    }

    public func run(_ invocation: BlockcInvocation) -> Int32 {
        switch invocation.action {
        case .help(let topic): return help(topic)
        case .version: return version(path: nil)
        case .send(let request, let options):
            for note in invocation.notes { stderr("blockc: \(Output.clean(note))\n") }
            return send(request, options, path: invocation.socket(environment: environment))
        }
    }

    func help(_ topic: String?) -> Int32 {
        guard let topic else {
            say(BlockcHelp.usage)
            return BlockcRunner.ok
        }
        guard let text = BlockcHelp.help(for: topic) else {
            return usageError(CoreError(.usage, "no help for '\(Output.clean(topic))'; commands: \(BlockcInvocation.commandNames.joined(separator: ", "))"))
        }
        say(text)
        return BlockcRunner.ok
    }

    /// The commands that are more than one request and one answer go their own way
    /// (Client+Watch.swift); every other sends its request and shows the answer.
    func send(_ request: Request, _ options: OutputOptions, path: String) -> Int32 {
        switch request {
        case .hello: return version(path: path)
        case .watch: return options.notify ? watchNotify(path: path) : watch(path: path, json: options.json)
        case .status where options.watch: return statusWatch(request, path: path, json: options.json)
        case .screen where options.pam: return pamAccount(path: path)
        case .start, .stop, .status, .scheduleAdd, .scheduleRemove, .scheduleList, .selections, .selectionShow, .failures,
             .failuresClear, .limitAdd, .limitRemove, .limitList, .more, .requests, .approve, .deny, .cancel, .stats, .report,
             .screen, .foreground, .web, .reload:
            switch exchange(request, path: path, json: options.json) {
            case .answer(let o): return show(request, options, o)
            case .failed(let status): return status
            }
        }
    }

    /// Prints the answer to `request` and says how the command went.
    func show(_ request: Request, _ options: OutputOptions, _ o: JSONObject) -> Int32 {
        // §7 Truth: a start accepted but not enforced is not a success.
        if case .start = request, let problem = output.notEnforced(StartReply(o)) {
            if options.json { say(render(request, options, o)) }
            stderr("blockc: \(problem)\n")
            return BlockcRunner.refused
        }
        if case .html(let path) = options.format { return writeReportPage(ReportReply(o), to: path) }
        say(render(request, options, o))
        // A1, T4: a reload that left part of the configuration out of force is not a success.
        if case .reload = request, !ReloadReply(o).problems.isEmpty { return BlockcRunner.refused }
        return BlockcRunner.ok
    }

    /// One request, one answer; a failure is already reported and carries the exit status.
    func exchange(_ request: Request, path: String, json: Bool = false) -> Exchanged {
        let transport: any Transport
        do {
            transport = try connect(path)
        } catch {
            return .failed(status: report(error))
        }
        defer { transport.close() }
        do {
            switch try transport.send(request) {
            case .ok(let o): return .answer(o)
            case .error(let e): return .failed(status: refused(e, json: json))
            case .event:
                return .failed(status: report(.protocolError("blockd sent an event instead of an answer to '\(request.command)'")))
            }
        } catch {
            return .failed(status: report(error))
        }
    }

    /// What one request came to: the answer, or the exit status of a failure whose message
    /// is already printed.
    enum Exchanged {
        case answer(JSONObject)
        case failed(status: Int32)
    }

    /// Human text, or with `--json` the documented document (Client+JSON.swift). One case per
    /// request, so that a new command does not compile until it has its text; each answer is
    /// decoded once, by its type in Replies.swift where it has one.
    func render(_ request: Request, _ options: OutputOptions, _ o: JSONObject) -> String {
        if options.json { return jsonText(BlockcRunner.jsonDocument(request, o)) }
        let out = output
        switch request {
        case .start: return out.start(StartReply(o))
        case .stop: return out.removal(RemovalReply(o), kind: "block")
        case .scheduleRemove: return out.removal(RemovalReply(o), kind: "schedule")
        case .limitRemove: return out.removal(RemovalReply(o), kind: "limit")
        case .status: return out.status(StatusReply(o))
        case .scheduleAdd: return out.scheduleAdded(o)
        case .scheduleList: return out.schedules(o)
        case .selections: return out.selections(o)
        case .selectionShow: return out.selection(o)
        case .failures: return out.failures(o)
        case .failuresClear: return out.failuresCleared(o)
        case .limitAdd: return out.limitAdded(o)
        case .limitList: return out.limits(o)
        case .more, .approve: return out.more(MoreReply(o))
        case .requests: return out.requests(RequestsReply(o))
        case .deny: return out.denied(DeniedReply(o))
        case .cancel: return out.cancelled(CancelledReply(o))
        case .stats: return out.stats(StatsReply(o))
        case .report: return options.format == .csv ? out.reportCSV(ReportReply(o)) : out.report(ReportReply(o), by: options.by)
        case .screen: return out.screen(ScreenReply(o))
        case .reload: return out.reload(o)
        // Sent by other commands' own paths (Client+Watch.swift) or by blockc-agent: shown as they come.
        case .hello, .watch, .foreground, .web: return out.generic(o)
        }
    }
}
