import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The state on disk (§7): the snapshot `state.json`, one JSON document written
/// atomically, and the state log `state.log` of the changes since (`StateLog`). A snapshot that
/// cannot be parsed is moved aside (never deleted) and the daemon starts empty rather than
/// refusing to start; a damaged log tail is cut, kept aside, and reported.
public struct StateStore: Sendable {
    public typealias Writer = @Sendable (Data, String) throws(DaemonError) -> Void

    /// How the bytes reach the disk; tests inject failures here (full disk, read-only).
    public struct IO: Sendable {
        /// Replaces the snapshot atomically (temp, fsync, rename, fsync of the directory).
        public var replace: Writer
        /// Appends to the open log (write(2), all of it or a failure).
        public var append: @Sendable (Int32, Data) throws(DaemonError) -> Void
        /// Makes what was appended durable (fdatasync).
        public var sync: @Sendable (Int32) throws(DaemonError) -> Void

        public init(replace: @escaping Writer, append: @escaping @Sendable (Int32, Data) throws(DaemonError) -> Void,
                    sync: @escaping @Sendable (Int32) throws(DaemonError) -> Void) {
            (self.replace, self.append, self.sync) = (replace, append, sync)
        }

        public static let real = IO(
            replace: { data, path throws(DaemonError) in try AtomicFile.write(data, to: path, mode: 0o600) },
            append: { fd, data throws(DaemonError) in try AtomicFile.writeAll(fd, data, path: "the state log") },
            sync: { fd throws(DaemonError) in
                if fdatasync(fd) != 0 { throw .system("cannot sync the state log", errno) }
            })
    }

    public let directory: String
    public let path: String
    public let logPath: String
    let io: IO

    public init(directory: String, io: IO = .real) {
        self.directory = directory
        self.path = directory + "/state.json"
        self.logPath = directory + "/state.log"
        self.io = io
    }

    public enum LoadResult: Sendable {
        case fresh
        case loaded(DaemonState)
        /// The old file was moved to `movedTo`; `problem` says why.
        case corrupt(problem: String, movedTo: String?)
    }

    /// The snapshot with the log replayed onto it (a damaged file is dealt with as by `open`).
    public func load(now: Date) -> LoadResult { open(now: now, repair: true).result }

    /// The snapshot with the log replayed onto it. With `repair` (the daemon at start) a damaged
    /// log tail is cut from the file and kept beside it, and a log that follows a snapshot that
    /// was moved aside is moved aside too; `problems` says what was done, for the failure list.
    public func open(now: Date, repair: Bool) -> (result: LoadResult, problems: [String]) {
        let snapshot = loadSnapshot(now: now, repair: repair)
        let stamp = Int(now.timeIntervalSince1970)
        guard case .loaded(let state) = snapshot else {
            if case .corrupt = snapshot, repair, FileManager.default.fileExists(atPath: logPath) {
                rename(logPath, "\(logPath).corrupt-\(stamp)")
            }
            return (snapshot, [])
        }
        guard let bytes = FileManager.default.contents(atPath: logPath).map(Array.init) else { return (.loaded(state), []) }
        let replay = StateLog.replay(bytes, onto: state)
        guard let cut = replay.cut else { return (.loaded(replay.state), []) }
        guard repair else { return (.loaded(replay.state), []) }
        let aside = "\(logPath).cut-\(stamp)"
        let kept = (try? AtomicFile.write(Data(bytes[cut.offset...]), to: aside, mode: 0o600)) != nil
        let truncated = kept && truncate(logPath, off_t(cut.offset)) == 0
        return (.loaded(replay.state), [StateStore.describe(cut, log: logPath, aside: kept ? aside : nil, truncated: truncated, applied: replay.applied)])
    }

    /// What a cut dropped, in words, for the failure list (T4).
    static func describe(_ cut: StateLog.Cut, log: String, aside: String?, truncated: Bool, applied: Int) -> String {
        let kept = aside.map { "kept in \($0)" } ?? "could not be kept aside"
        let how = truncated ? "cut from the log" : "skipped (the log could not be truncated; the next snapshot replaces it)"
        if cut.damage == .incomplete {
            return "the state log \(log) ended in an incomplete record of \(cut.bytes) bytes (blockd or the machine stopped while writing it); it was \(how) and \(kept). A change is answered OK only once its record is whole on disk, so it was never acknowledged"
        }
        return "the state log \(log) is damaged at byte \(cut.offset): \(cut.damage). The \(cut.lines) record\(cut.lines == 1 ? "" : "s") from there (\(cut.bytes) bytes) were \(how) and \(kept); blockd started from the snapshot and the \(applied) record\(applied == 1 ? "" : "s") before the damage. Changes in the cut part are lost: check the disk ('dmesg', 'smartctl -a') and make them again"
    }

    private func loadSnapshot(now: Date, repair: Bool) -> LoadResult {
        guard FileManager.default.fileExists(atPath: path) else {
            // A log without a snapshot follows a snapshot that is gone: replay it onto nothing.
            return FileManager.default.fileExists(atPath: logPath) ? .loaded(DaemonState()) : .fresh
        }
        let problem: String
        if let data = FileManager.default.contents(atPath: path) {
            do {
                let state = try StateStore.decoder.decode(DaemonState.self, from: data)
                if state.version <= DaemonState.currentVersion { return .loaded(state) }
                problem = "it was written by a newer blockd (state version \(state.version))"
            } catch {
                problem = "it is not a valid state file (\(StateStore.describe(error)))"
            }
        } else {
            problem = "it cannot be read"
        }
        guard repair else { return .corrupt(problem: problem, movedTo: nil) }
        let aside = "\(path).corrupt-\(Int(now.timeIntervalSince1970))"
        let moved = rename(path, aside) == 0
        return .corrupt(problem: problem, movedTo: moved ? aside : nil)
    }

    /// Writes `state` as a new snapshot (its generation plus one, so that the old log's
    /// records are skipped) and empties the log: `blockd --release` and tests.
    public func save(_ state: DaemonState) throws(DaemonError) {
        var s = state
        s.generation += 1
        try io.replace(try encode(s), path)
        truncate(logPath, 0)
    }

    func encode(_ state: DaemonState) throws(DaemonError) -> Data {
        do { return try StateStore.encoder.encode(state) + Data("\n".utf8) } catch {
            throw .system("cannot encode the state", EINVAL)
        }
    }
    /// "OK means on disk" (§7): why a change was not made, and what to do about it.
    public func notSaved(_ failure: DaemonError) -> CoreError {
        CoreError(.notSaved, "blockd cannot save its state file \(path) (\(failure)); \(advice(failure)), then try again")
    }

    func advice(_ failure: DaemonError) -> String {
        let code = failure.errno ?? 0
        return switch code {
        case ENOSPC, EDQUOT: "free space on the file system of the state directory \(directory)"
        case EROFS: "make the state directory \(directory) writable (its file system is mounted read-only)"
        case EACCES, EPERM: "make the state directory \(directory) writable for blockd"
        default: "check the state directory \(directory) and its file system"
        }
    }

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        e.dateEncodingStrategy = .secondsSince1970
        return e
    }()

    static let decoder: JSONDecoder = {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .secondsSince1970
        return d
    }()

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let c): c.debugDescription
        case DecodingError.keyNotFound(let key, _): "missing '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            "bad value at \(c.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }
}
