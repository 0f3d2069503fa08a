import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import ZoneInfo

/// Runs one parsed `blockc` command (DESIGN §6) and returns its exit status. Everything it
/// touches is injected, so
/// tests drive it with a fake `Transport`, a fixed clock and string writers.
public struct BlockcRunner {
    /// Exit statuses, DESIGN §6.
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

    /// A usage error (exit 2): the parser's or ours. Parser messages already end in
    /// "see 'blockc --help'"; the rest get the pointer added.
    public func usageError(_ error: CoreError) -> Int32 {
        let hint = error.message.lowercased().contains("blockc --help") ? "" : "\nSee 'blockc --help'."
        stderr("blockc: \(error.message)\(hint)\n")
        return BlockcRunner.usage
    }

    func report(_ error: ClientError) -> Int32 {
        stderr("blockc: \(Output.clean(error.description))\n")
        if case .unreachable = error { return BlockcRunner.unreachable }
        return BlockcRunner.refused
    }

    func refused(_ error: CoreError) -> Int32 {
        stderr("blockc: \(Output.clean(error.message)) (\(error.code.rawValue))\n")
        return BlockcRunner.refused
    }

    public func run(_ invocation: BlockcInvocation) -> Int32 {
        let path = invocation.socket(environment: environment)
        switch invocation.command {
        case .help(let topic):
            guard let topic else {
                say(BlockcHelp.usage)
                return BlockcRunner.ok
            }
            guard let text = BlockcHelp.help(for: topic) else {
                return usageError(CoreError(.usage, "no help for '\(Output.clean(topic))'; commands: \(BlockcInvocation.commandNames.joined(separator: ", "))"))
            }
            say(text)
            return BlockcRunner.ok
        case .version(let daemon):
            return version(path: path, daemon: daemon)
        case .watch(_, notify: true):
            return watchNotify(path: path)
        case .watch(let json, notify: false):
            return watch(path: path, json: json)
        case .status(let json, watch: true, let all):
            return statusWatch(path: path, json: json, all: all)
        default:
            break
        }
        let request: Request
        do {
            request = try self.request(for: invocation.command).with(moreTime: invocation.moreTime).forUsers(invocation)
        } catch {
            return usageError(error)
        }
        let object: JSONObject
        switch exchange(request, path: path) {
        case .success(let o): object = o
        case .failure(let failure): return failure.status
        }
        if case .start(_, _, _, _, let json) = invocation.command, let problem = output.notEnforced(object) {
            if json { say(render(invocation.command, object)) }
            stderr("blockc: \(problem)\n")
            return BlockcRunner.refused
        }
        if case .report(_, let options) = invocation.command, case .html(let path) = options.format {
            return writeReportPage(object, to: path)
        }
        say(render(invocation.command, object))
        // A1, T4: a reload that left part of the configuration out of force is not a success.
        if case .reload = invocation.command, object["problems"]?.array?.isEmpty == false { return BlockcRunner.refused }
        return BlockcRunner.ok
    }

    /// The wire request for a command. `--until TIME` is resolved here, against the user's
    /// clock and zone, and sent as an instant (DESIGN §6: HH:MM is the next one after now).
    func request(for command: BlockcCommand) throws(CoreError) -> Request {
        switch command {
        case .start(let end, let lock, let name, let selections, _):
            var args = Request.StartArguments(selections: readAddresses(selections), lock: lock, name: name)
            switch end {
            case .seconds(let seconds): args.seconds = seconds
            case .until(let text): args.until = try TimeText.parse(text, now: now(), clock: clock)
            }
            return .start(args)
        case .stop(let name): return .stop(name: name)
        case .status(_, _, let all): return .status(all: all)
        case .scheduleAdd(let name, let days, let start, let end, let selections):
            return .scheduleAdd(Schedule(name: name, selections: readAddresses(selections), days: days, start: start, end: end))
        case .scheduleRemove(let name): return .scheduleRemove(name: name)
        case .scheduleList: return .scheduleList
        case .selections: return .selections
        case .selectionShow(let name, _): return .selectionShow(name: name)
        case .failures(_, let clear): return clear ? .failuresClear : .failures
        case .limitAdd(let name, let seconds, let selections, let days, let warn):
            return .limitAdd(Limit(name: name, selections: readAddresses(selections), seconds: seconds, days: days, warnSeconds: warn))
        case .limitRemove(let name): return .limitRemove(name: name)
        case .limitList: return .limitList
        case .moreTime(let request, _): return request
        case .stats: return .stats
        case .report(let args, _): return .report(args)
        case .watch: return .watch
        case .reload: return .reload
        case .version: return .hello
        case .help: throw CoreError(.internal, "help needs no daemon")
        }
    }

    /// W1: a pasted `https://` address becomes the site or the pages' prefix it names, and the
    /// user is told on stderr what it was read as (stdout stays the answer, `--json` too). An
    /// address with a bad host goes as it is: blockd's refusal says why.
    /// The parts of an allow-only expression (W2) are read the same way.
    func readAddresses(_ words: [String]) -> [String] {
        words.map { word in
            if AllowOnly.isExpression(word), let parts = try? AllowOnly.parts(of: word) {
                return AllowOnly.expression(allowing: readAddresses(parts))
            }
            guard let reading = (try? Site.reading(url: word)) ?? nil else { return word }
            stderr("blockc: \(Output.clean(reading.summary(of: word)))\n")
            return reading.target
        }
    }

    /// One request, one answer; a failure is already reported and carries the exit status.
    func exchange(_ request: Request, path: String) -> Result<JSONObject, ExitStatus> {
        let transport: any Transport
        do {
            transport = try connect(path)
        } catch {
            return .failure(ExitStatus(report(error)))
        }
        defer { transport.close() }
        do {
            switch try transport.send(request) {
            case .ok(let o): return .success(o)
            case .error(let e): return .failure(ExitStatus(refused(e)))
            case .event:
                return .failure(ExitStatus(report(.protocolError("blockd sent an event instead of an answer to '\(request.command)'"))))
            }
        } catch {
            return .failure(ExitStatus(report(error)))
        }
    }

    /// An exit status as a `Result` failure, once its message is printed.
    struct ExitStatus: Error {
        var status: Int32
        init(_ status: Int32) { self.status = status }
    }

    /// Human text, or with `--json` the documented document (Client+JSON.swift).
    func render(_ command: BlockcCommand, _ o: JSONObject) -> String {
        if let document = BlockcRunner.jsonDocument(command, o) { return jsonText(document) }
        let out = output
        switch command {
        case .start: return out.start(o)
        case .stop: return o["pending"] != nil ? out.moreTime(o) : out.stop(o)
        case .status: return out.status(o)
        case .scheduleAdd: return out.scheduleAdded(o)
        case .scheduleRemove: return o["pending"] != nil ? out.moreTime(o) : out.scheduleRemoved(o)
        case .scheduleList: return out.schedules(o)
        case .selections: return out.selections(o)
        case .selectionShow: return out.selection(o)
        case .failures(_, let clear): return clear ? out.failuresCleared(o) : out.failures(o)
        case .stats: return out.stats(o)
        case .report(_, let options): return options.format == .csv ? out.reportCSV(o) : out.report(o, by: options.by)
        case .reload: return out.reload(o)
        case .limitList: return out.limits(o)
        case .limitAdd: return out.limitAdded(o)
        case .limitRemove: return o["pending"] != nil ? out.moreTime(o) : out.limitRemoved(o)
        case .moreTime: return out.moreTime(o)
        default: return out.generic(o)
        }
    }
}
