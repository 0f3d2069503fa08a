import FoundationEssentials

/// Everything blockd must not forget across restarts (§7).
public struct DaemonState: Codable, Equatable, Sendable {
    public static let currentVersion = 1

    public var version = DaemonState.currentVersion
    /// Activities clients registered (configured schedules come from schedules.d instead).
    public var activities: [StoredActivity] = []
    /// T4: failures (enforcement errors, a broken configuration, a state file that cannot be
    /// saved, ...), newest last, at most `FailureRecord.limit`; resolved ones stay listed until
    /// the bound or `failures --clear` drops them. Refusals are not kept here (the journal has them).
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

/// T4: one failure. `cause` and `resolved` are left out of the state file while nil, so a record
/// without them is written to the same bytes as an older blockd wrote it (T8), and an older
/// blockd reads a newer file (it sees a resolved failure as a current one).
public struct FailureRecord: Codable, Equatable, Sendable {
    public static let limit = 100
    /// A longer message is cut (with an ellipsis) so that the bounded list stays small.
    public static let messageLimit = 2000
    public var time: Date
    public var code: String
    public var message: String
    public var uid: UInt32?
    public var activity: String?
    /// T4: what the failure is about when it is a condition that can pass (`FailureCause`): a
    /// later success of the same thing resolves it. Nil: an event (a hook that failed, a
    /// repaired edit, a state log cut at start), listed until it is cleared.
    public var cause: String?
    /// When its cause was gone (nil: it is current). `status` shows current failures only.
    public var resolved: Date?

    public init(time: Date, code: String, message: String, uid: UInt32? = nil, activity: String? = nil, cause: String? = nil,
                resolved: Date? = nil) {
        self.time = time
        self.code = code
        self.message = message
        self.uid = uid
        self.activity = activity
        self.cause = cause
        self.resolved = resolved
    }

    public var isCurrent: Bool { resolved == nil }

    /// The newest `limit` records, each message at most `messageLimit` characters. Over the
    /// bound the oldest resolved records go first, so that history never pushes out a current
    /// failure.
    public static func bounded(_ records: [FailureRecord]) -> [FailureRecord] {
        var records = records
        if records.count > limit {
            var over = records.count - limit
            records.removeAll { r in
                guard over > 0, !r.isCurrent else { return false }
                over -= 1
                return true
            }
        }
        return records.suffix(limit).map { record in
            guard record.message.count > messageLimit else { return record }
            var cut = record
            cut.message = String(record.message.prefix(messageLimit)) + "…"
            return cut
        }
    }
}

/// T4: the conditions a failure can be about, each resolved by a later success of the same
/// thing (its word is kept in the state file).
public enum FailureCause: String, CaseIterable, Sendable {
    /// The configuration could not be loaded (at start or at a reload): resolved by a start or
    /// a reload that loads it.
    case config
    /// A configured schedule or limit is not in force (the cap, `Users=`): resolved by a start
    /// or reload that puts it in force, or that no longer declares it.
    case configActivity = "config-activity"
    /// An enforcer could not do its part (a file that cannot be written, the nftables table):
    /// resolved by an apply that no longer reports it.
    case enforcement
    /// A blocked selection has no targets to enforce: resolved once it is enforced, or no
    /// longer blocked.
    case target
    /// The state file could not be saved: resolved by the next save that works.
    case save
}
