import BlockCore
import CSystemd
import Dispatch
import FoundationEssentials
import Glibc

/// Where log entries go: passed in, never global.
public protocol LogSink: Sendable {
    func log(_ entry: JournalEntry)
}

extension LogSink {
    public func info(_ message: String) { log(JournalEntry(message, priority: .info)) }
    public func notice(_ message: String) { log(JournalEntry(message, priority: .notice)) }
    public func warning(_ message: String) { log(JournalEntry(message, priority: .warning)) }
    public func error(_ message: String) { log(JournalEntry(message, priority: .error)) }
}

/// Plain lines on stderr, with the `<N>` priority prefix that journald understands
/// (sd-daemon(3)) only when stderr is a journal stream: a person reading a terminal, a pipe
/// or a file (`make install`, `make try`, `blockd --release`) never sees `<6>`.
public struct StderrSink: LogSink {
    let prefixPriority: Bool

    public init(prefixPriority: Bool = StderrSink.isJournalStream()) { self.prefixPriority = prefixPriority }

    /// Whether descriptor `fd` is the stream systemd connected to the journal: `JOURNAL_STREAM`
    /// holds its `device:inode` (systemd.exec(5)), compared with the descriptor's own, since a
    /// child that redirected stderr inherits the variable but not the stream.
    public static func isJournalStream(_ fd: Int32 = 2, environment value: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }) -> Bool {
        guard let value else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }

    public func log(_ entry: JournalEntry) {
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

    public func log(_ entry: JournalEntry) {
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

/// The sink for `--log-target` (§7): the journal when it is there, else stderr.
public func makeLogSink(_ target: BlockdOptions.LogTarget) -> any LogSink {
    switch target {
    case .journal: JournalSink()
    case .console: StderrSink()
    case .auto: JournalSink.isAvailable ? JournalSink() : StderrSink()
    }
}
