import FoundationEssentials

/// R1: where the time went, per local day and per user: how long each app named in any
/// selection ran, how long each selection was blocked, launches denied, more time asked and
/// answered, blocks started and stopped early. Pure, fed edges with their instants, like the
/// limits' `UsageLedger`: an open interval is folded into the days it fell on (split at local
/// midnights, T7, however long the day) at each `checkpoint`, so nothing is written per second
/// and a restart neither loses what was checkpointed nor counts time nobody observed.
///
/// Users are uids as text (`"1001"`); `everyone` stands for a block for the whole machine.
public struct UsageHistory: Codable, Equatable, Sendable {
    /// The JSON schema of the ledger and of `blockc report --json` (R2).
    public static let schema = 1
    /// `ReportDays=`'s default: five weeks, so a week and the one before it are always whole.
    public static let defaultDays = 35
    public static let everyone = "all"

    /// What one day holds, each by user then by name.
    public struct Day: Codable, Equatable, Sendable {
        /// Seconds an app ran (at least one process of it), by user, by app.
        public var running: [String: [String: Double]] = [:]
        /// Seconds a selection was blocked, by user (`everyone` for the whole machine).
        public var blocked: [String: [String: Double]] = [:]
        /// Launches denied, by user, by selection.
        public var denied: [String: [String: Int]] = [:]
        /// Counts by user: `asked`, `granted`, `denied` (more time), `started`, `stoppedEarly`.
        public var counts: [String: [String: Int]] = [:]

        public init() {}

        public var isEmpty: Bool { running.isEmpty && blocked.isEmpty && denied.isEmpty && counts.isEmpty }
    }

    /// The kinds of count a day keeps.
    public enum Count: String, CaseIterable, Sendable {
        case asked, granted, denied, started, stoppedEarly
    }

    /// What runs or is blocked now, with since when (counted up to the last checkpoint).
    public struct Open: Hashable, Codable, Sendable {
        public enum Kind: String, Codable, Sendable { case running, blocked }
        public var kind: Kind
        public var user: String
        public var name: String

        public init(_ kind: Kind, user: String, name: String) {
            (self.kind, self.user, self.name) = (kind, user, name)
        }
    }

    public var schema = UsageHistory.schema
    /// By local day (`2026-11-29`).
    public private(set) var days: [String: Day] = [:]
    /// Open intervals with their start, as an array (JSON has no struct keys).
    public private(set) var open: [OpenSince] = []

    public struct OpenSince: Equatable, Codable, Sendable {
        public var what: Open
        public var since: Date
    }

    public init() {}

    // MARK: Edges

    /// `what` started (true) or stopped at `t`. Starting what is open, or stopping what is
    /// not, changes nothing.
    public mutating func set(_ what: Open, _ on: Bool, at t: Date, clock: LocalClock) {
        let index = open.firstIndex { $0.what == what }
        if on {
            if index == nil { open.append(OpenSince(what: what, since: t)) }
        } else if let index {
            add(open.remove(at: index), to: t, clock: clock)
        }
    }

    /// Makes exactly `now` open (what is not in it stops, what is new starts), for the monitor
    /// that reports a whole set at a time.
    public mutating func setOpen(_ now: Set<Open>, kind: Open.Kind, at t: Date, clock: LocalClock) {
        for o in open where o.what.kind == kind && !now.contains(o.what) { set(o.what, false, at: t, clock: clock) }
        for what in now.sorted(by: { ($0.user, $0.name) < ($1.user, $1.name) }) { set(what, true, at: t, clock: clock) }
    }

    /// One more of `count` for `user` on the day of `t`.
    public mutating func count(_ count: Count, user: String, at t: Date, clock: LocalClock) {
        days[clock.civil(of: t).date.description, default: Day()].counts[user, default: [:]][count.rawValue, default: 0] += 1
    }

    /// A launch of an app of `selection` denied for `user`.
    public mutating func denied(_ selection: String, user: String, at t: Date, clock: LocalClock) {
        days[clock.civil(of: t).date.description, default: Day()].denied[user, default: [:]][selection, default: 0] += 1
    }

    /// Folds the open intervals up to `now` into their days.
    public mutating func checkpoint(at now: Date, clock: LocalClock) {
        for i in open.indices where now > open[i].since {
            add(open[i], to: now, clock: clock)
            open[i].since = now
        }
    }

    /// After a restart: nothing is known to run or be blocked until it is seen again (what the
    /// daemon did not observe is not counted).
    public mutating func forgetOpen() { open = [] }

    /// R1's bound: drops the days before the last `keep` (today included).
    public mutating func prune(keeping keep: Int, today: CivilDate) {
        let cutoff = today.adding(days: -(max(keep, 1) - 1)).description
        days = days.filter { $0.key >= cutoff }
    }

    // MARK: Reading

    public func day(_ date: CivilDate) -> Day { days[date.description] ?? Day() }

    /// Seconds of `kind` on `date` for `user`, by name, up to `now` (open intervals included).
    /// For one user a machine-wide block counts as theirs. For the whole machine (nil) running
    /// time adds up over users, and blocked time is the machine-wide blocks' alone (per-user
    /// blocks of one selection may overlap, and their sum would be no one's time).
    public func seconds(_ kind: Open.Kind, on date: CivilDate, user: String?, at now: Date, clock: LocalClock) -> [String: Double] {
        let stored = kind == .running ? day(date).running : day(date).blocked
        var out: [String: Double] = [:]
        for (who, names) in stored where UsageHistory.counts(who, for: user, kind: kind) {
            for (name, s) in names { out[name, default: 0] += s }
        }
        let start = clock.instant(date, secondsOfDay: 0), end = clock.instant(date.adding(days: 1), secondsOfDay: 0)
        for o in open where o.what.kind == kind && UsageHistory.counts(o.what.user, for: user, kind: kind) {
            let from = max(o.since, start), to = min(now, end)
            if to > from { out[o.what.name, default: 0] += to.timeIntervalSince(from) }
        }
        return out
    }

    static func counts(_ stored: String, for user: String?, kind: Open.Kind) -> Bool {
        guard let user else { return kind == .running || stored == everyone }
        return stored == user || (kind == .blocked && stored == everyone)
    }

    mutating func add(_ o: OpenSince, to b: Date, clock: LocalClock) {
        var start = o.since
        while start < b {
            let date = clock.civil(of: start).date
            let end = min(b, clock.instant(date.adding(days: 1), secondsOfDay: 0))
            let seconds = end.timeIntervalSince(start)
            switch o.what.kind {
            case .running: days[date.description, default: Day()].running[o.what.user, default: [:]][o.what.name, default: 0] += seconds
            case .blocked: days[date.description, default: Day()].blocked[o.what.user, default: [:]][o.what.name, default: 0] += seconds
            }
            start = end
        }
    }
}
