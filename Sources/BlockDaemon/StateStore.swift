import BlockCore
import Foundation

/// Everything blockd must not forget across restarts (DESIGN §7).
public struct DaemonState: Codable, Equatable, Sendable {
    public static let currentVersion = 1

    public var version = DaemonState.currentVersion
    /// Activities clients registered (configured schedules come from schedules.d instead).
    public var activities: [StoredActivity] = []
    /// T4: refusals and enforcement errors, newest last, at most `FailureRecord.limit`.
    public var failures: [FailureRecord] = []
    /// S5: shield hits per local day (`2026-11-29`) per selection.
    public var shieldHits: [String: [String: Int]] = [:]
    /// T8: when the daemon last reconciled; what was missed since is caught up at start.
    public var lastReconcile: Date?
    /// The selections enforcement was last converged to (E4: it stays while blockd is down).
    public var applied: [String] = []
    /// §9: usage per limit per local day.
    public var usage = UsageLedger()
    /// DESIGN §7: the last configuration that loaded, so that a broken file at start never lifts
    /// a block (nil: none loaded yet).
    public var lastGoodConfig: StoredConfig?
    /// What each blocked selection was enforced with: an active activity keeps these targets
    /// until it ends, whatever the configuration says meanwhile (DESIGN §7).
    public var targets: [String: Selection] = [:]
    /// M3: more-time grants, requests, delayed loosenings and the day's allowances (T8).
    public var moreTime = MoreTimeBook()

    public init() {}

    enum CodingKeys: String, CodingKey {
        case version, activities, failures, shieldHits, lastReconcile, applied, usage, lastGoodConfig, targets, moreTime
    }

    /// Keys added in later versions may be missing from an older file: they start empty.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        activities = try c.decode([StoredActivity].self, forKey: .activities)
        // T4: the list is bounded on load too, so a file written by hand or by an older blockd
        // cannot make every `status` answer unbounded.
        failures = FailureRecord.bounded(try c.decodeIfPresent([FailureRecord].self, forKey: .failures) ?? [])
        shieldHits = try c.decodeIfPresent([String: [String: Int]].self, forKey: .shieldHits) ?? [:]
        lastReconcile = try c.decodeIfPresent(Date.self, forKey: .lastReconcile)
        applied = try c.decodeIfPresent([String].self, forKey: .applied) ?? []
        usage = try c.decodeIfPresent(UsageLedger.self, forKey: .usage) ?? UsageLedger()
        lastGoodConfig = try c.decodeIfPresent(StoredConfig.self, forKey: .lastGoodConfig)
        targets = try c.decodeIfPresent([String: Selection].self, forKey: .targets) ?? [:]
        moreTime = try c.decodeIfPresent(MoreTimeBook.self, forKey: .moreTime) ?? MoreTimeBook()
    }

    public mutating func record(_ failure: FailureRecord) {
        failures = FailureRecord.bounded(failures + [failure])
    }
}

public enum StoredActivity: Codable, Equatable, Sendable {
    case block(Block)
    case schedule(Schedule)
    case limit(Limit)

    public init(_ activity: Activity) {
        switch activity {
        case .block(let b): self = .block(b)
        case .schedule(let s): self = .schedule(s)
        case .limit(var l):
            l.state = nil
            self = .limit(l)
        }
    }

    public var activity: Activity {
        switch self {
        case .block(let b): .block(b)
        case .schedule(let s): .schedule(s)
        case .limit(let l): .limit(l)
        }
    }
}

public struct FailureRecord: Codable, Equatable, Sendable {
    public static let limit = 100
    /// A longer message is cut (with an ellipsis) so that the bounded list stays small.
    public static let messageLimit = 2000
    public var time: Date
    public var code: String
    public var message: String
    public var uid: UInt32?
    public var activity: String?

    public init(time: Date, code: String, message: String, uid: UInt32? = nil, activity: String? = nil) {
        self.time = time
        self.code = code
        self.message = message
        self.uid = uid
        self.activity = activity
    }

    /// The newest `limit` records, each message at most `messageLimit` characters.
    static func bounded(_ records: [FailureRecord]) -> [FailureRecord] {
        records.suffix(limit).map { record in
            guard record.message.count > messageLimit else { return record }
            var cut = record
            cut.message = String(record.message.prefix(messageLimit)) + "…"
            return cut
        }
    }
}

/// The state file: one JSON document, written atomically. A file that cannot be parsed is
/// moved aside (never deleted) and the daemon starts empty rather than refusing to start.
public struct StateStore: Sendable {
    public typealias Writer = @Sendable (Data, String) throws(AtomicFile.Failure) -> Void
    public let directory: String
    public let path: String
    /// How the bytes reach the disk; tests inject failures here (full disk, read-only).
    let writer: Writer

    public init(directory: String, writer: @escaping Writer = { data, path throws(AtomicFile.Failure) in
        try AtomicFile.write(data, to: path, mode: 0o600)
    }) {
        self.directory = directory
        self.path = directory + "/state.json"
        self.writer = writer
    }

    public enum LoadResult: Sendable {
        case fresh
        case loaded(DaemonState)
        /// The old file was moved to `movedTo`; `problem` says why.
        case corrupt(problem: String, movedTo: String?)
    }

    public func load(now: Date) -> LoadResult {
        guard FileManager.default.fileExists(atPath: path) else { return .fresh }
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
        let aside = "\(path).corrupt-\(Int(now.timeIntervalSince1970))"
        let moved = rename(path, aside) == 0
        return .corrupt(problem: problem, movedTo: moved ? aside : nil)
    }

    public func save(_ state: DaemonState) throws(AtomicFile.Failure) {
        let data: Data
        do { data = try StateStore.encoder.encode(state) } catch {
            throw .system("cannot encode the state", EINVAL)
        }
        try writer(data + Data("\n".utf8), path)
    }

    /// "OK means on disk" (DESIGN §7): why a change was not made, and what to do about it.
    public func notSaved(_ failure: AtomicFile.Failure) -> CoreError {
        CoreError(.notSaved, "blockd cannot save its state file \(path) (\(failure)); \(advice(failure)), then try again")
    }

    func advice(_ failure: AtomicFile.Failure) -> String {
        let code: Int32 = switch failure { case .system(_, let errno): errno }
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
