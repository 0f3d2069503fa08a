import FoundationEssentials

/// The control protocol (§8), shared by the daemon and every client.
///
/// A request is one UTF-8 line, at most 4096 bytes: a command word, optionally followed by a
/// space and a JSON object of arguments (`start {"selections":["instagram"],"seconds":1800}`).
/// Every request gets exactly one response line: `OK {json}` or `ERR <code> <message>`.
/// After `watch` the connection carries `EVENT {json}` lines.
public enum Request: Equatable, Sendable {
    case hello
    /// `all`: every activity; without it, what is blocked, the active activities and counts
    /// (a status with a hundred thousand idle schedules stays short). `view`: whose blocks.
    case status(all: Bool = false, view: StatusView = .caller)
    case start(StartArguments)
    case stop(name: String)
    case scheduleAdd(Schedule)
    case scheduleRemove(name: String)
    case scheduleList
    case selections
    case selectionShow(name: String)
    case failures
    case failuresClear
    case limitAdd(Limit)
    case limitRemove(name: String)
    case limitList
    /// M1, M2: `more`, `requests`, `approve`, `deny`, `cancel` (ProtocolMoreTime.swift).
    case more(MoreArguments)
    case requests
    case approve(id: String, seconds: Int?)
    case deny(id: String, reason: String?)
    case cancel(name: String)
    case stats
    /// R2: the usage ledger for some days (ProtocolReport.swift).
    case report(ReportArguments)
    /// Screen time: whether the viewed person may be at the screen now (`view`: the caller, or
    /// `user` for an administrator), or what keeps them off it (Core+Screen.swift).
    case screen(view: StatusView = .caller)
    /// R1: the app in the caller's foreground now, by executable path (nil: none), from the
    /// session agent (ProtocolForeground.swift).
    case foreground(app: String?)
    /// B2: the site in the focused window's visible tab of one of the caller's browsers while
    /// they are active (nil: none), from blockd's extension through its native-messaging host
    /// (ProtocolWeb.swift).
    case web(site: String?)
    case watch
    case reload

    public struct StartArguments: Equatable, Sendable {
        public var selections: [String]
        /// Exactly one of the two: a duration counted from the daemon's receipt (T1, T6) or
        /// an absolute end instant.
        public var seconds: Int?
        public var until: Date?
        public var lock: Bool
        public var name: String?
        /// M1: `--more-time`, `--delay` (nil: the defaults).
        public var moreTime: MoreTimePolicy?
        /// `--user`: names and `@group`s (nil: the daemon's default scope for the caller).
        public var users: Scope?

        public init(selections: [String], seconds: Int? = nil, until: Date? = nil, lock: Bool = false, name: String? = nil) {
            self.selections = selections
            self.seconds = seconds
            self.until = until
            self.lock = lock
            self.name = name
        }
    }

    public static let maxLineBytes = 4096

    /// The command word of this request.
    public var command: Command {
        switch self {
        case .hello: .hello
        case .status: .status
        case .start: .start
        case .stop: .stop
        case .scheduleAdd: .scheduleAdd
        case .scheduleRemove: .scheduleRemove
        case .scheduleList: .scheduleList
        case .selections: .selections
        case .selectionShow: .selectionShow
        case .failures: .failures
        case .failuresClear: .failuresClear
        case .limitAdd: .limitAdd
        case .limitRemove: .limitRemove
        case .limitList: .limitList
        case .more: .more
        case .requests: .requests
        case .approve: .approve
        case .deny: .deny
        case .cancel: .cancel
        case .stats: .stats
        case .report: .report
        case .screen: .screen
        case .foreground: .foreground
        case .web: .web
        case .watch: .watch
        case .reload: .reload
        }
    }

    /// Whether the request changes state (and so needs §5's write permission).
    public var modifies: Bool { command.modifies }

    /// U1: the user and `@group` names the request gives, which the edge looks up in the user
    /// database before the core decides (`UsersTable.lacking`).
    public var userNames: [String] {
        func named(_ view: StatusView) -> [String] { if case .user(let name) = view { [name] } else { [] } }
        switch self {
        case .status(_, let view): return named(view)
        case .report(let r): return named(r.view)
        case .screen(let view): return named(view)
        case .start(let s): return s.users?.names ?? []
        case .scheduleAdd(let s): return s.users?.names ?? []
        case .limitAdd(let l): return l.users?.names ?? []
        default: return []
        }
    }
}

extension Request {
    /// Parses one request line (without its LF; a trailing CR is tolerated). Never traps:
    /// anything a client sends yields a request or a `CoreError` with a stable code.
    public static func parse(_ line: String) throws(CoreError) -> Request {
        var text = Substring(line)
        if text.last == "\r" { text = text.dropLast() }
        guard text.utf8.count <= maxLineBytes else {
            throw CoreError(.lineTooLong, "a request is at most \(maxLineBytes) bytes")
        }
        let word: Substring
        let rest: Substring
        if let space = text.firstIndex(of: " ") {
            word = text[..<space]
            rest = text[text.index(after: space)...].trimmingSpaces()
        } else {
            word = text
            rest = ""
        }
        guard let command = Command(rawValue: String(word)) else {
            let word = String(word)
            if word.isEmpty { throw CoreError(.usage, "empty request; send a command such as 'hello' or 'status'") }
            let shown = String(word.unicodeScalars.prefix(40).map { $0.properties.isWhitespace || $0.value < 0x20 ? "?" : Character($0) })
            let words = Command.allCases.map(\.rawValue)
            let hint = Suggest.closest(to: word, among: words).map { " (did you mean '\($0)'?)" } ?? ""
            throw CoreError(.unknownCommand, "unknown command '\(shown)'\(hint); commands: \(words.joined(separator: ", "))")
        }
        var args = Arguments(command: command, object: JSONObject())
        if !rest.isEmpty {
            guard case .object(let object) = try JSON.parse(String(rest)) else {
                throw CoreError(.usage, "\(command): the arguments must be a JSON object")
            }
            args.object = object
        }
        let request = try args.build()
        try args.finish()
        try request.validate()
        return request
    }

    /// The request's own rules (Validation.swift), checked once its arguments are read.
    func validate() throws(CoreError) {
        switch self {
        case .start(let s): try s.validate()
        case .scheduleAdd(let s): try s.validate()
        case .limitAdd(let l): try l.validate()
        case .stop(let name), .scheduleRemove(let name), .limitRemove(let name), .cancel(let name): try Names.validateReference(name, what: "name")
        case .hello, .status, .scheduleList, .selections, .selectionShow, .failures, .failuresClear, .limitList, .stats, .report, .screen, .watch, .reload,
             .requests:
            break
        case .more(let m): try m.validate()
        case .approve(let id, let seconds): try Request.validateApproval(id: id, seconds: seconds)
        case .deny(let id, let reason): try Request.validateDenial(id: id, reason: reason)
        case .foreground(let app): try Request.validateForeground(app)
        case .web(let site): try Request.validateWeb(site)
        }
    }

    /// The request as a line (without LF), for clients.
    public var line: String {
        let args = arguments
        return args.isEmpty ? command.rawValue : "\(command.rawValue) \(JSON.object(args).serialized())"
    }

    var arguments: JSONObject {
        var o = JSONObject()
        switch self {
        case .hello, .scheduleList, .selections, .failures, .failuresClear, .limitList, .stats, .watch, .reload, .requests:
            break
        case .more(let m): o = m.arguments
        case .approve(let id, let seconds): o = Request.approvalArguments(id: id, seconds: seconds)
        case .deny(let id, let reason): o = Request.denialArguments(id: id, reason: reason)
        case .report(let r): o = r.arguments
        case .screen(let view): o = view.arguments
        case .foreground(let app): if let app { o["app"] = .string(app) }
        case .web(let site): if let site { o["site"] = .string(site) }
        case .status(let all, let view):
            o = view.arguments
            if all { o["all"] = .bool(true) }
        case .start(let s):
            o["selections"] = .array(s.selections.map { .string($0) })
            if let seconds = s.seconds { o["seconds"] = .int(Int64(seconds)) }
            if let until = s.until { o["until"] = .string(LocalClock.utc.iso8601(until)) }
            if s.lock { o["lock"] = .bool(true) }
            if let name = s.name { o["name"] = .string(name) }
            if let p = s.moreTime { o["moreTime"] = p.json }
            if let u = s.users { o["users"] = u.json }
        case .stop(let name), .scheduleRemove(let name), .selectionShow(let name), .limitRemove(let name), .cancel(let name):
            o["name"] = .string(name)
        case .scheduleAdd(let s):
            o["name"] = .string(s.name)
            o["window"] = .string("\(s.start)-\(s.end)")
            o["days"] = .string(s.days.description)
            if let action = s.session { o["session"] = .string(action.rawValue) } else { o["selections"] = .array(s.selections.map { .string($0) }) }
            if let p = s.moreTime { o["moreTime"] = p.json }
            if let u = s.users { o["users"] = u.json }
        case .limitAdd(let l):
            o["name"] = .string(l.name)
            o["seconds"] = .int(Int64(l.seconds))
            o["days"] = .string(l.days.description)
            if let warn = l.warnSeconds { o["warn"] = .int(Int64(warn)) }
            if let action = l.session { o["session"] = .string(action.rawValue) } else { o["selections"] = .array(l.selections.map { .string($0) }) }
            if let p = l.moreTime { o["moreTime"] = p.json }
            if let u = l.users { o["users"] = u.json }
        }
        return o
    }
}

/// Typed, strict access to a request's argument object: wrong types and unknown keys are
/// `usage` errors that name the argument.
struct Arguments {
    let command: Command
    var object: JSONObject
    var used: Set<String> = []

    mutating func build() throws(CoreError) -> Request {
        switch command {
        case .hello: return .hello
        case .status:
            guard let v = optional("all") else { return .status(all: false, view: try statusView()) }
            guard case .bool(let all) = v else { throw wrongType("all", "true or false") }
            return .status(all: all, view: try statusView())
        case .scheduleList: return .scheduleList
        case .selections: return .selections
        case .failures: return .failures
        case .failuresClear: return .failuresClear
        case .limitList: return .limitList
        case .stats: return .stats
        case .report: return .report(try report())
        case .screen: return .screen(view: try statusView())
        case .foreground: return .foreground(app: try optionalString("app"))
        case .web: return .web(site: try optionalString("site"))
        case .watch: return .watch
        case .reload: return .reload
        case .stop: return .stop(name: try string("name"))
        case .scheduleRemove: return .scheduleRemove(name: try string("name"))
        case .selectionShow: return .selectionShow(name: try string("name"))
        case .limitRemove: return .limitRemove(name: try string("name"))
        case .more: return .more(try more())
        case .requests: return .requests
        case .approve: return try approval()
        case .deny: return .deny(id: try string("id"), reason: try optionalString("reason"))
        case .cancel: return .cancel(name: try string("name"))
        case .start: return .start(try start())
        case .scheduleAdd: return .scheduleAdd(try schedule())
        case .limitAdd:
            let name = try string("name")
            let session = try sessionAction()
            var limit = Limit(name: name, selections: session == nil || optional("selections") != nil ? try selections() : [], seconds: try int("seconds"))
            limit.session = session
            if let v = optional("days") {
                guard case .string(let text) = v else { throw wrongType("days", "a string such as mon-fri") }
                limit.days = try WeekdaySet.parse(text)
            }
            if let v = optional("warn") { limit.warnSeconds = try intValue("warn", v) }
            limit.moreTime = try moreTimePolicy()
            limit.users = try users()
            return .limitAdd(limit)
        }
    }

    mutating func start() throws(CoreError) -> Request.StartArguments {
        var s = Request.StartArguments(selections: try selections())
        if let v = optional("seconds") { s.seconds = try intValue("seconds", v) }
        if let v = optional("until") {
            guard case .string(let text) = v else { throw wrongType("until", "an ISO 8601 date-time with offset") }
            s.until = try TimeText.parseISO8601WithOffset(text)
        }
        guard (s.seconds == nil) != (s.until == nil) else {
            throw CoreError(.usage, "start: give exactly one of 'seconds' and 'until'")
        }
        if let v = optional("lock") {
            guard case .bool(let b) = v else { throw wrongType("lock", "true or false") }
            s.lock = b
        }
        if let v = optional("name") {
            guard case .string(let n) = v else { throw wrongType("name", "a string") }
            s.name = n
        }
        s.moreTime = try moreTimePolicy()
        s.users = try users()
        return s
    }

    mutating func schedule() throws(CoreError) -> Schedule {
        let name = try string("name")
        let window = try string("window")
        guard let (start, end) = try WallTime.window(window) else {
            throw CoreError(.invalidTime, "schedule-add: 'window' must be HH:MM-HH:MM, not '\(window)'")
        }
        var days = WeekdaySet.all
        if let v = optional("days") {
            guard case .string(let text) = v else { throw wrongType("days", "a string such as mon-fri") }
            days = try WeekdaySet.parse(text)
        }
        let session = try sessionAction()
        var schedule = Schedule(name: name, selections: session == nil || optional("selections") != nil ? try selections() : [],
                                days: days, start: start, end: end)
        schedule.session = session
        schedule.moreTime = try moreTimePolicy()
        schedule.users = try users()
        return schedule
    }


    /// Screen time: `"session": "lock"` (or logout, suspend, poweroff), for a limit or a
    /// schedule that acts on sessions and has no selections.
    mutating func sessionAction() throws(CoreError) -> SessionAction? {
        guard let v = optional("session") else { return nil }
        guard case .string(let text) = v, let action = SessionAction(rawValue: text) else {
            throw wrongType("session", "one of \(SessionAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return action
    }

    mutating func selections() throws(CoreError) -> [String] {
        guard let value = take("selections") else { throw missing("selections") }
        guard case .array(let items) = value, !items.isEmpty, items.count <= 256 else {
            throw wrongType("selections", "a non-empty array of at most 256 names")
        }
        var out: [String] = []
        for item in items {
            guard case .string(let s) = item, !s.isEmpty, s.utf8.count <= 253 else {
                throw wrongType("selections", "an array of selection names or domains")
            }
            out.append(s)
        }
        return out
    }

    mutating func string(_ key: String) throws(CoreError) -> String {
        guard let value = take(key) else { throw missing(key) }
        guard case .string(let s) = value else { throw wrongType(key, "a string") }
        return s
    }

    mutating func int(_ key: String) throws(CoreError) -> Int {
        guard let value = take(key) else { throw missing(key) }
        return try intValue(key, value)
    }

    func intValue(_ key: String, _ value: JSON) throws(CoreError) -> Int {
        guard case .int(let i) = value, let n = Int(exactly: i) else { throw wrongType(key, "a whole number") }
        return n
    }

    /// An optional argument's value; JSON null counts as absent.
    mutating func optional(_ key: String) -> JSON? {
        guard let value = take(key), value != .null else { return nil }
        return value
    }

    mutating func take(_ key: String) -> JSON? {
        used.insert(key)
        return object[key]
    }

    func finish() throws(CoreError) {
        if let unknown = object.keys.first(where: { !used.contains($0) }) {
            let shown = String(unknown.unicodeScalars.prefix(40).map { $0.value < 0x20 ? "?" : Character($0) })
            throw CoreError(.usage, "\(command): unknown argument '\(shown)'")
        }
    }

    func missing(_ key: String) -> CoreError { CoreError(.usage, "\(command): missing argument '\(key)'") }
    func wrongType(_ key: String, _ expected: String) -> CoreError {
        CoreError(.usage, "\(command): '\(key)' must be \(expected)")
    }
}
