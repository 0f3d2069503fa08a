import FoundationEssentials

/// R1: where the time went, per local day and per user: how long each app named in any
/// selection ran, how long each selection was blocked, more time asked and answered, blocks
/// started and stopped early (launches denied are the shield's own per-day, per-user count).
/// Pure, fed edges with their instants, like the limits' `UsageLedger`: an open interval is
/// folded into the days it fell on (split at local midnights, T7, however long the day) when it
/// closes or at a `checkpoint`, so nothing is written per second, and a restart neither loses
/// what was folded nor counts an app's time nobody observed.
///
/// Users are uids as text (`"1001"`); `everyone` stands for a block for the whole machine.
public struct UsageHistory: Codable, Equatable, Sendable {
    /// The JSON schema of the ledger and of `blockc report --json` (R2).
    public static let schema = 1
    /// `ReportDays=`'s default: five weeks, so a week and the one before it are always whole.
    public static let defaultDays = 35
    public static let everyone = "all"
    /// Under `used`: the time at least one counted app ran at all (`*` is no selection name).
    public static let anyApp = "*"

    /// What one day holds, each by user then by name.
    public struct Day: Codable, Equatable, Sendable {
        /// Seconds an app ran (at least one process of it), by user, by app.
        public var running: [String: [String: Double]] = [:]
        /// Seconds a selection was blocked, by user (`everyone` for the whole machine).
        public var blocked: [String: [String: Double]] = [:]
        /// Seconds at least one app of a selection ran, by user, by selection (`anyApp`: of
        /// any selection): the union of its apps' time, not their sum.
        public var used: [String: [String: Double]] = [:]
        /// Counts by user: `asked`, `granted`, `denied` (more time), `started`, `stoppedEarly`.
        public var counts: [String: [String: Int]] = [:]
        /// §9: each limit's used seconds that day, as the limits' ledger folded them (it keeps
        /// a week; this keeps them as long as the report's days).
        public var limits: [String: Double] = [:]
        /// Seconds an app had the focus while it ran, by user, by app (UsageHistory+Foreground.swift).
        public var foreground: [String: [String: Double]] = [:]
        /// B2: seconds a site was in the focused window's visible tab while its user was
        /// active, by user, by site (UsageHistory+Web.swift).
        public var web: [String: [String: Double]] = [:]
        /// Seconds a person was at the screen: some local login session of theirs active,
        /// unlocked and not idle for long (ScreenTime.swift), by user (`screen`): sessions at
        /// once count once.
        public var screen: [String: [String: Double]] = [:]

        public init() {}

        /// Every field may be missing: a state file from before it existed has none.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            running = try c.decodeIfPresent([String: [String: Double]].self, forKey: .running) ?? [:]
            blocked = try c.decodeIfPresent([String: [String: Double]].self, forKey: .blocked) ?? [:]
            used = try c.decodeIfPresent([String: [String: Double]].self, forKey: .used) ?? [:]
            counts = try c.decodeIfPresent([String: [String: Int]].self, forKey: .counts) ?? [:]
            limits = try c.decodeIfPresent([String: Double].self, forKey: .limits) ?? [:]
            foreground = try c.decodeIfPresent([String: [String: Double]].self, forKey: .foreground) ?? [:]
            web = try c.decodeIfPresent([String: [String: Double]].self, forKey: .web) ?? [:]
            screen = try c.decodeIfPresent([String: [String: Double]].self, forKey: .screen) ?? [:]
        }

        enum CodingKeys: String, CodingKey { case running, blocked, used, counts, limits, foreground, web, screen }

        /// `web` only when there is some (B2): a day from before it is written as it was, so
        /// an older blockd's state log is written again to the same bytes (T8).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(running, forKey: .running)
            try c.encode(blocked, forKey: .blocked)
            try c.encode(used, forKey: .used)
            try c.encode(counts, forKey: .counts)
            try c.encode(limits, forKey: .limits)
            try c.encode(foreground, forKey: .foreground)
            if !web.isEmpty { try c.encode(web, forKey: .web) }
            if !screen.isEmpty { try c.encode(screen, forKey: .screen) }
        }

        public var isEmpty: Bool {
            running.isEmpty && blocked.isEmpty && used.isEmpty && counts.isEmpty && limits.isEmpty && foreground.isEmpty && web.isEmpty && screen.isEmpty
        }

        /// The figures of an interval kind.
        subscript(kind: Open.Kind) -> [String: [String: Double]] {
            get {
                switch kind {
                case .running: running
                case .blocked: blocked
                case .used: used
                case .foreground: foreground
                case .web: web
                case .screen: screen
                }
            }
            set {
                switch kind {
                case .running: running = newValue
                case .blocked: blocked = newValue
                case .used: used = newValue
                case .foreground: foreground = newValue
                case .web: web = newValue
                case .screen: screen = newValue
                }
            }
        }

        /// The users whose figures differ from `old`, each with all of theirs (a state-log
        /// record of a change carries no more; users are never removed from a day).
        public func changed(since old: Day) -> Day {
            var d = Day()
            d.running = running.filter { old.running[$0.key] != $0.value }
            d.blocked = blocked.filter { old.blocked[$0.key] != $0.value }
            d.used = used.filter { old.used[$0.key] != $0.value }
            d.counts = counts.filter { old.counts[$0.key] != $0.value }
            d.limits = limits == old.limits ? [:] : limits
            d.foreground = foreground.filter { old.foreground[$0.key] != $0.value }
            d.web = web.filter { old.web[$0.key] != $0.value }
            d.screen = screen.filter { old.screen[$0.key] != $0.value }
            return d
        }

        /// `changed(since:)` applied: each user's figures replaced by the change's.
        public mutating func merge(_ change: Day) {
            running.merge(change.running) { $1 }
            blocked.merge(change.blocked) { $1 }
            used.merge(change.used) { $1 }
            counts.merge(change.counts) { $1 }
            if !change.limits.isEmpty { limits = change.limits }
            foreground.merge(change.foreground) { $1 }
            web.merge(change.web) { $1 }
            screen.merge(change.screen) { $1 }
        }
    }

    /// The kinds of count a day keeps.
    public enum Count: String, CaseIterable, Sendable {
        case asked, granted, denied, started, stoppedEarly
    }

    /// Something that runs or is blocked now.
    public struct Open: Hashable, Sendable {
        public enum Kind: String, Codable, Sendable { case running, blocked, used, foreground, web, screen }
        public var kind: Kind
        public var user: String
        public var name: String

        public init(_ kind: Kind, user: String, name: String) {
            (self.kind, self.user, self.name) = (kind, user, name)
        }

        /// `blocked 1001 games`: kinds and users have no spaces, so a name (an app's path) may.
        public var key: String { "\(kind.rawValue) \(user) \(name)" }

        public init?(key: String) {
            let parts = key.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let kind = Kind(rawValue: String(parts[0])) else { return nil }
            self.init(kind, user: String(parts[1]), name: String(parts[2]))
        }
    }

    public var schema = UsageHistory.schema
    /// By local day (`2026-11-29`).
    public var days: [String: Day] = [:]
    /// What runs or is blocked now (`Open.key`), with since when it is counted (its start, or
    /// the last checkpoint).
    public var open: [String: Date] = [:]
    /// Every change the ledger's own edges made to `open`, undoable (UndoLog.swift): what the
    /// core's mark puts back and the save writes. Neither saved nor compared.
    public internal(set) var openUndo = UndoLog<Date>()
    /// The keys of `open` this ledger's own edges changed since `resetTouched()` (nil: not
    /// known), so that a save looks at those alone. Neither saved nor compared.
    public private(set) var touched: Set<String>?

    enum CodingKeys: String, CodingKey { case schema, days, open }

    public init() {}

    public static func == (a: UsageHistory, b: UsageHistory) -> Bool { a.schema == b.schema && a.days == b.days && a.open == b.open }

    /// From here on, `touched` notes each change of `open` again.
    public mutating func resetTouched() { touched = [] }

    /// `touched` is not known (the ledger was put back or replaced).
    public mutating func forgetTouched() { touched = nil }

    // MARK: Edges

    /// `what` started (true) or stopped at `t`. Starting what is open, or stopping what is
    /// not, changes nothing.
    public mutating func set(_ what: Open, _ on: Bool, at t: Date, clock: LocalClock) {
        if on {
            if open[what.key] == nil {
                put(what.key, t)
            }
        } else if let since = open[what.key] {
            put(what.key, nil)
            add(what, from: since, to: t, clock: clock)
            if what.kind == .running { set(Open(.foreground, user: what.user, name: what.name), false, at: t, clock: clock) }  // R1: foreground ≤ running
        }
    }

    /// A selection blocked for `before` and now for `after` (user names as in `Open`;
    /// `everyone` for the whole machine): what ended is folded, what began is opened.
    public mutating func blocked(_ selection: String, from before: Set<String>, to after: Set<String>, at t: Date, clock: LocalClock) {
        for user in before.subtracting(after) { set(Open(.blocked, user: user, name: selection), false, at: t, clock: clock) }
        for user in after.subtracting(before) { set(Open(.blocked, user: user, name: selection), true, at: t, clock: clock) }
    }

    /// Makes exactly `now` open of `kind` (what is not in it stops, what is new starts), for a
    /// monitor that reports a whole set at a time.
    public mutating func setOpen(_ now: Set<Open>, kind: Open.Kind, at t: Date, clock: LocalClock) {
        let keys = Set(now.map(\.key))
        for key in open.keys where !keys.contains(key) {
            if let what = Open(key: key), what.kind == kind { set(what, false, at: t, clock: clock) }
        }
        for what in now { set(what, true, at: t, clock: clock) }
    }

    /// One more of `count` for `user` on the day of `t`.
    public mutating func count(_ count: Count, user: String, at t: Date, clock: LocalClock) {
        days[clock.civil(of: t).date.description, default: Day()].counts[user, default: [:]][count.rawValue, default: 0] += 1
    }

    /// Folds the open intervals of `kind` up to `now` into their days.
    public mutating func checkpoint(_ kinds: Set<Open.Kind>, at now: Date, clock: LocalClock) {
        for (key, since) in open where now > since {
            guard let what = Open(key: key), kinds.contains(what.kind) else { continue }
            add(what, from: since, to: now, clock: clock)
            put(key, now)
        }
    }

    /// §9: keeps the limits' used seconds of each day the limits' ledger folded (it keeps a
    /// week) for as long as the report's days; a day changes only when its figures did. R2:
    /// `inForce`, the limits there are on `today`, are noted on that day (a 0 under the
    /// limit's own name, where nothing was used), so that a report draws a limit only from
    /// the first day it was in force (`limitsSince`), not on the days before it was added.
    public mutating func keepLimits(_ usage: UsageLedger, inForce: [String] = [], today: CivilDate? = nil) {
        let today = today?.description
        var dates = Set(usage.used.keys)
        if let today, !inForce.isEmpty { dates.insert(today) }
        for day in dates {
            var kept = usage.used[day] ?? [:]
            for (key, seconds) in days[day]?.limits ?? [:] where seconds == 0 && kept[key] == nil { kept[key] = 0 }  // the notes
            if day == today { for name in inForce where kept[name] == nil { kept[name] = 0 } }
            if (days[day]?.limits ?? [:]) != kept { days[day, default: Day()].limits = kept }
        }
    }

    /// R2: for each limit this ledger has a day of (its use, or its note that it was in force),
    /// the first such day.
    public func limitsSince() -> [String: String] {
        var out: [String: String] = [:]
        for (day, d) in days {
            for key in d.limits.keys {
                let name = key.firstIndex(of: "@").map { String(key[..<$0]) } ?? key
                if out[name].map({ day < $0 }) ?? true { out[name] = day }
            }
        }
        return out
    }

    /// After a restart: no app is known to run until it is seen again (time nobody observed is
    /// not counted). Blocked intervals stay open: what was blocked stayed blocked while blockd
    /// was down (the hosts file and the rest keep it, E4), until the first reconcile says.
    public mutating func forgetRunning() {
        for key in open.keys where Open(key: key)?.kind != .blocked { put(key, nil) }  // R1: foreground too, with running
        touched = nil
    }

    /// T6: the wall clock was stepped by `step`: every open interval's start moves with it, so
    /// what is running keeps the time it had, and the step is counted as no one's time.
    public mutating func shift(by step: TimeInterval) {
        for (key, since) in open { put(key, since.addingTimeInterval(step)) }
    }

    /// Sets (or with nil closes) the open interval of `key`: noted for the save, and undoable.
    mutating func put(_ key: String, _ since: Date?) {
        openUndo.record(key, before: open[key])
        open[key] = since
        touched?.insert(key)
    }

    /// R1's bound: drops the days before the last `keep` (today included).
    public mutating func prune(keeping keep: Int, today: CivilDate) {
        let cutoff = today.adding(days: -(max(keep, 1) - 1)).description
        guard days.keys.contains(where: { $0 < cutoff }) else { return }  // called at every change: no copy for nothing
        days = days.filter { $0.key >= cutoff }
    }

    // MARK: Reading

    public func day(_ date: CivilDate) -> Day { days[date.description] ?? Day() }

    /// Seconds of `kind` on `date` for `user`, by name, up to `now` (open intervals included).
    /// For one user a machine-wide block counts as theirs. For the whole machine (nil) running
    /// time adds up over users, and blocked time is the machine-wide blocks' alone (per-user
    /// blocks of one selection may overlap, and their sum would be no one's time).
    public func seconds(_ kind: Open.Kind, on date: CivilDate, user: String?, at now: Date, clock: LocalClock) -> [String: Double] {
        let stored = day(date)[kind]
        var out: [String: Double] = [:]
        for (who, names) in stored where UsageHistory.counts(who, for: user, kind: kind) {
            for (name, s) in names { out[name, default: 0] += s }
        }
        for (key, since) in open {
            guard let o = Open(key: key), o.kind == kind, UsageHistory.counts(o.user, for: user, kind: kind) else { continue }
            let s = clock.seconds(from: since, to: now, on: date)
            if s > 0 { out[o.name, default: 0] += s }
        }
        return out
    }

    static func counts(_ stored: String, for user: String?, kind: Open.Kind) -> Bool {
        guard let user else { return kind != .blocked || stored == everyone }
        return stored == user || (kind == .blocked && stored == everyone)
    }

    mutating func add(_ o: Open, from a: Date, to b: Date, clock: LocalClock) {
        for (date, seconds) in clock.days(from: a, to: b) {
            days[date.description, default: Day()][o.kind][o.user, default: [:]][o.name, default: 0] += seconds
        }
    }
}
