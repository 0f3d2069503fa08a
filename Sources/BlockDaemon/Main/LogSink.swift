import BlockCore
import CSystemd
import Dispatch
import FoundationEssentials
import Glibc

/// One structured log entry (DESIGN §7): a sentence, a priority, the event type (which fixes
/// `MESSAGE_ID`) and the `BLOCKD_*` fields that apply.
public struct LogEntry: Equatable, Sendable {
    public enum Priority: Int, Sendable, Comparable {
        // syslog(3) levels, as journald stores them.
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
        public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    public var message: String
    public var priority: Priority
    public var event: LogEvent?
    /// The entry's `BLOCKD_*` fields, in order.
    public var fields: [(JournalField, String)]

    public init(_ message: String, priority: Priority = .info, event: LogEvent? = nil, fields: [(JournalField, String)] = []) {
        self.message = message
        self.priority = priority
        self.event = event
        self.fields = fields
    }

    public static func == (a: LogEntry, b: LogEntry) -> Bool {
        a.message == b.message && a.priority == b.priority && a.event == b.event
            && a.fields.map(\.0) == b.fields.map(\.0) && a.fields.map(\.1) == b.fields.map(\.1)
    }

    public func field(_ name: JournalField) -> String? { fields.first { $0.0 == name }?.1 }
}

/// Every journal field blockd writes besides `BLOCKD_EVENT`, without its `BLOCKD_` prefix: the
/// one list, which blockd(8), JOURNAL, documents field by field (DocsTests checks both ways).
public enum JournalField: String, Sendable, CaseIterable {
    /// The activity concerned; several are separated by spaces.
    case activity = "ACTIVITY"
    /// The selection locked or unlocked (a catch-up: the activity's selections).
    case selection = "SELECTION"
    /// The end instant of a block or window, ISO 8601 with offset.
    case end = "END"
    /// How many milliseconds after its instant an unlock or catch-up was applied (T8).
    case lateMS = "LATE_MS"
    /// A refusal's or failure's error code.
    case code = "CODE"
    /// Whose request was refused, or whose launch was denied (U3).
    case uid = "UID"
    /// Whom a lock or an unlock is about, when some users only (U2).
    case users = "USERS"
    /// Who is left out of a lock or an unlock for everyone (U2).
    case exceptUsers = "EXCEPT_USERS"
    /// A shield hit: what happened (`denied-launch`, `killed`, `tamper`), to which
    /// executable or file, the app's name and the process (S5).
    case hit = "HIT"
    case path = "PATH"
    case app = "APP"
    case pid = "PID"
    /// E5: the addresses cut or refused, how many sockets a cut destroyed, a name whose
    /// lookup failed, and how many lookups a change had to leave out.
    case addresses = "ADDRESSES"
    case socketsCut = "SOCKETS_CUT"
    case domain = "DOMAIN"
    case lookupsDropped = "LOOKUPS_DROPPED"
    /// M3: a more-time request's or grant's id, or the activity whose stop waits (M2).
    case moreID = "MORE_ID"
}

/// Event types with a fixed `MESSAGE_ID` each (for the journal catalog and `journalctl -x`).
public enum LogEvent: String, Sendable, CaseIterable {
    case lock, unlock, catchUp = "catch-up", refusal, failure, shieldHit = "shield-hit", tamper, start, stop, reload, limit, warning
    /// E5: open connections to a blocked site's addresses destroyed; blockd's nftables table changed.
    case socketsCut = "sockets-cut", firewall
    /// M1-M3: more time asked for, granted, denied, expired unanswered, ended; a loosening delayed.
    case moreAsked = "more-asked", moreGranted = "more-granted", moreDenied = "more-denied", moreExpired = "more-expired"
    case moreEnded = "more-ended", delayed

    public var messageID: String {
        switch self {
        case .lock: "37b6956f1cb94e74ae234a0ccdb20516"
        case .unlock: "c610b328ba4f4283b9060bf2d87a6807"
        case .catchUp: "9f1f7c6587cf4cafa4379ee8cbccc5a5"
        case .refusal: "8becf93322ed4c36973e24cbf8ab3df5"
        case .failure: "5c2aed322d2549aba9c5fa3fca03e81a"
        case .shieldHit: "54f5dad015a04a7398bb30f4279191fd"
        case .tamper: "dce655153911498d962a49fe98b1b804"
        case .start: "ef5affc0912a4f189c7d1336cf8373d5"
        case .stop: "89a8690429c84d7c845bc0a90ebeaf46"
        case .limit: "651b59d17d544d039bec21e5b08780b5"
        case .warning: "dc47a1f9301b43a2a0588f99cb78552e"
        case .reload: "dfe2596177a74f71b9230fdd7eea5771"
        case .socketsCut: "4b0f1e6c8a3d4f52b7e9c2d5a1f08e63"
        case .firewall: "a7c3e95d02b84e1f9d6c4b8e3f1a2d70"
        case .moreAsked: "3e1c0f5a7b2d4c8e9a6f1b0d2c4e6a81"
        case .moreGranted: "b84d2e6f1a3c4b5d8e7f9a0c1d2e3f42"
        case .moreDenied: "c2f7a9e1d3b54f6a8c0e2d4f6a8b0c13"
        case .moreExpired: "d9a1c3e5f7b94d2e6a8c0f1e3d5b7a94"
        case .moreEnded: "e5b7d9f1a3c24e6b8d0f2a4c6e8b0d25"
        case .delayed: "f1c3e5a7b9d04f2a6c8e0b2d4f6a8c36"
        }
    }
}

/// Where log entries go: passed in, never global.
public protocol LogSink: Sendable {
    func log(_ entry: LogEntry)
}

extension LogSink {
    public func info(_ message: String) { log(LogEntry(message, priority: .info)) }
    public func notice(_ message: String) { log(LogEntry(message, priority: .notice)) }
    public func warning(_ message: String) { log(LogEntry(message, priority: .warning)) }
    public func error(_ message: String) { log(LogEntry(message, priority: .error)) }
}

/// Plain lines on stderr, with the `<N>` priority prefix that journald and systemd
/// understand (sd-daemon(3)) when stderr is not a terminal.
public struct StderrSink: LogSink {
    let prefixPriority: Bool

    public init(prefixPriority: Bool = isatty(2) == 0) { self.prefixPriority = prefixPriority }

    public func log(_ entry: LogEntry) {
        var line = prefixPriority ? "<\(entry.priority.rawValue)>" : ""
        line += entry.message.replacing("\n", with: " ")
        if let event = entry.event {
            let extra = entry.fields.map { "\($0.0.rawValue.lowercased())=\($0.1)" }.joined(separator: " ")
            line += " [\(event.rawValue)\(extra.isEmpty ? "" : " " + extra)]"
        }
        StderrSink.write(line + "\n")
    }

    /// Writes all of `text` to standard error (a short write or EINTR is retried; an error
    /// such as a closed descriptor drops the rest, as there is nowhere left to say so).
    static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            bytes = bytes.dropFirst(n)
        }
    }
}

/// Structured entries through `sd_journal_sendv` (one iovec per field, so no data is ever
/// used as a printf format). Field names are upper case: journald drops lower-case ones.
public struct JournalSink: LogSink {
    public static let identifier = "blockd"

    public init() {}

    /// Whether journald's socket exists (sd_journal_sendv would otherwise fail silently).
    public static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")
    }

    public func log(_ entry: LogEntry) {
        var fields = [
            "MESSAGE=\(entry.message)",
            "PRIORITY=\(entry.priority.rawValue)",
            "SYSLOG_IDENTIFIER=\(JournalSink.identifier)",
        ]
        if let event = entry.event {
            fields.append("MESSAGE_ID=\(event.messageID)")
            fields.append("BLOCKD_EVENT=\(event.rawValue)")
        }
        for (field, value) in entry.fields {
            fields.append("BLOCKD_\(field.rawValue)=\(value)")
        }
        JournalSink.send(fields)
    }

    static func send(_ fields: [String]) {
        let buffers = fields.map { Array($0.utf8) }
        var pointers: [UnsafeMutablePointer<UInt8>] = []
        defer { pointers.forEach { $0.deallocate() } }
        var iov: [iovec] = []
        for bytes in buffers {
            let p = UnsafeMutablePointer<UInt8>.allocate(capacity: max(bytes.count, 1))
            p.initialize(from: bytes, count: bytes.count)
            pointers.append(p)
            iov.append(iovec(iov_base: UnsafeMutableRawPointer(p), iov_len: bytes.count))
        }
        _ = iov.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
    }
}

/// The sink for `--log-target` (DESIGN §7): the journal when it is there, else stderr.
public func makeLogSink(_ target: BlockdOptions.LogTarget) -> any LogSink {
    switch target {
    case .journal: JournalSink()
    case .console: StderrSink()
    case .auto: JournalSink.isAvailable ? JournalSink() : StderrSink()
    }
}
