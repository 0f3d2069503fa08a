import FoundationEssentials

/// Everything blockd must not forget across restarts (§7).
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
    /// R1: where the time went, per local day and user (bounded by `ReportDays=`).
    public var history = UsageHistory()
    /// §7: the last configuration that loaded, so that a broken file at start never lifts
    /// a block (nil: none loaded yet).
    public var lastGoodConfig: StoredConfig?
    /// What each blocked selection was enforced with: an active activity keeps these targets
    /// until it ends, whatever the configuration says meanwhile (§7).
    public var targets: [String: Selection] = [:]
    /// M3: more-time grants, requests, delayed loosenings and the day's allowances (T8).
    public var moreTime = MoreTimeBook()
    /// The snapshot's generation: state-log records of an older one are already in it.
    public var generation = 0
    /// The sequence number of the last state-log record this state includes.
    public var seq = 0

    public init() {}

    /// The state without the targets kept per selection and the report's open intervals, to
    /// keep beside the core's without sharing those dictionaries: a copy that shares one makes
    /// the next change to it copy it whole (the undo logs, UndoLog.swift, say what changed
    /// instead).
    public var withoutLogged: DaemonState {
        var s = self
        s.targets = [:]
        (s.history.open, s.history.openUndo) = ([:], UndoLog())
        return s
    }

    enum CodingKeys: String, CodingKey {
        case version, activities, failures, shieldHits, lastReconcile, applied, usage, history, lastGoodConfig, targets, moreTime, generation, seq
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
        history = try c.decodeIfPresent(UsageHistory.self, forKey: .history) ?? UsageHistory()
        lastGoodConfig = try c.decodeIfPresent(StoredConfig.self, forKey: .lastGoodConfig)
        targets = try c.decodeIfPresent([String: Selection].self, forKey: .targets) ?? [:]
        moreTime = try c.decodeIfPresent(MoreTimeBook.self, forKey: .moreTime) ?? MoreTimeBook()
        generation = try c.decodeIfPresent(Int.self, forKey: .generation) ?? 0
        seq = try c.decodeIfPresent(Int.self, forKey: .seq) ?? 0
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
    public static func bounded(_ records: [FailureRecord]) -> [FailureRecord] {
        records.suffix(limit).map { record in
            guard record.message.count > messageLimit else { return record }
            var cut = record
            cut.message = String(record.message.prefix(messageLimit)) + "…"
            return cut
        }
    }
}
