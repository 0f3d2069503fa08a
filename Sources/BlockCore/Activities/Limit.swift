import FoundationEssentials

/// A daily usage limit (§9): once the apps of its selections have run for `seconds`
/// on a local day (one of `days`), its selections are blocked until that day ends. Usage is
/// the wall time during which at least one of those processes runs (`UsageLedger`).
public struct Limit: Hashable, Sendable, Codable {
    public var name: String
    public var selections: [String]
    public var seconds: Int
    public var days: WeekdaySet
    /// Warn this long before the allowance runs out (nil: no warning).
    public var warnSeconds: Int?
    public var origin: Origin
    /// M1: `MoreTime=`, `Delay=`, `MoreTimePerDay=`, `RequestTimeout=` (nil: the defaults).
    public var moreTime: MoreTimePolicy?
    /// Where the limit stands now, computed from the ledger by `refreshed(...)`; not stored.
    public var state: LimitState?
    /// Who it applies to, and whose running time it counts (Scope.swift; nil: everyone's).
    public var users: Scope?
    /// A screen-time limit (nil: one of apps and sites): it counts each person's time at the
    /// screen (ScreenTime.swift), has no selections, and once the allowance is used up does this
    /// to their sessions, again whenever they come back to one the same day.
    public var session: SessionAction?

    enum CodingKeys: String, CodingKey { case name, selections, seconds, days, warnSeconds, origin, moreTime, users, session }

    public init(name: String, selections: [String], seconds: Int, days: WeekdaySet = .all, warnSeconds: Int? = nil,
                origin: Origin = .client(uid: 0)) {
        self.name = name
        self.selections = selections
        self.seconds = seconds
        self.days = days
        self.warnSeconds = warnSeconds
        self.origin = origin
    }

    /// The warnings before the allowance runs out, largest first, each with the suffix its
    /// "warned" mark has in the ledger: `--warn`'s one (under the person's own key, as it always
    /// was), else 5 minutes and 1 minute before (B3: like Screen Time), and 10 minutes before
    /// too for a screen-time limit; those shorter than the allowance.
    public var warnings: [(seconds: Int, mark: String)] {
        if let warnSeconds { return [(warnSeconds, "")] }
        return (session != nil ? Limit.screenWarnings : Limit.defaultWarnings).filter { $0.seconds < seconds }
    }
    public static let defaultWarnings: [(seconds: Int, mark: String)] = [(300, "#5m"), (60, "#1m")]
    /// A screen-time limit warns 10 minutes before too: time to save one's work.
    public static let screenWarnings: [(seconds: Int, mark: String)] = [(600, "#10m"), (300, "#5m"), (60, "#1m")]

    /// `1h daily`, `30m mon-fri`.
    public var rule: String { "\(DurationText.format(seconds)) \(days)" }

    /// The limit as of `now`, for each person it counted today (§9: each person has their own
    /// allowance, whoever the limit is for): how much they used and, when their allowance is or
    /// will be used up today, the window during which the limit blocks them — from that instant
    /// to local midnight (T7: the day ends at the next local 00:00, however long the day is).
    /// `names` gives the people's names for the reasons (U2). A ledger entry under the limit's
    /// bare name, from a blockd that kept one pool per limit, is that day's pool: it counts for
    /// everyone the limit is for, and once used up blocks them all, as it did.
    /// `people`: the ledger's people of the day by limit (`UsageLedger.people(on:)`), when the
    /// caller refreshes many limits at once (nil: looked up for this one).
    public func refreshed(ledger: UsageLedger, at now: Date, clock: LocalClock,
                          names: (UInt32) -> String = { "#\($0)" }, people: [String: Set<UInt32>]? = nil) -> Limit {
        var l = self
        let today = clock.civil(of: now).date
        let dayEnd = clock.instant(today.adding(days: 1), secondsOfDay: 0)
        let limited = days.contains(today.weekday)
        let pool = ledger.poolFigures(name, on: today, at: now, clock: clock)
        func person(_ key: String?) -> (LimitState.Person, recheck: Date?) {
            var used = pool.used, extra = pool.extra
            var running = pool.running, reached = pool.exhausted
            if let key {
                used += ledger.used(key, on: today, at: now, clock: clock)
                extra += ledger.extra(key, on: today)
                running = running || ledger.isRunning(key)
                reached = reached ?? ledger.exhaustedAt(key, on: today)
            }
            // M3: more time on a limit is allowance for the day, used up by running like the rest.
            let allowance = Double(seconds) + extra
            var p = LimitState.Person(used: used, remaining: max(allowance - used, 0), running: running)
            guard limited else {
                // Not a limited day: look again at midnight if an app keeps running into one.
                return (p, running ? dayEnd : nil)
            }
            var recheck: Date?
            if let reached {
                p.window = Window(start: reached, end: dayEnd)
            } else if used >= allowance {
                p.window = Window(start: now, end: dayEnd)
            } else if running {
                let reach = now.addingTimeInterval(allowance - used)
                if reach < dayEnd {
                    p.window = Window(start: reach, end: dayEnd)
                    // The largest warning not given yet today (a later refresh finds the next).
                    let warnedKey = key ?? name
                    if let warn = warnings.first(where: { !ledger.hasWarned(warnedKey + $0.mark, on: today) }) {
                        let at = reach.addingTimeInterval(-Double(warn.seconds))
                        (p.warnAt, p.warnMark) = (at, warn.mark)
                        recheck = max(at, now)  // one already due (less time left than it) is given at once
                    }
                } else {
                    recheck = dayEnd  // usage goes on into tomorrow's allowance
                }
            }
            return (p, recheck)
        }
        var state = LimitState(day: today, used: 0, remaining: Double(seconds), running: false)
        var rechecks: [Date] = []
        if pool.any {
            let (p, recheck) = person(nil)
            state.pool = p
            rechecks += [recheck].compactMap { $0 }
        }
        for uid in (people.map { $0[name] ?? [] } ?? ledger.people(on: today)[name] ?? []) where users.map({ $0.contains(uid) }) ?? true {
            let (p, recheck) = person(UsageLedger.key(name, uid))
            state.people[uid] = p
            state.names[uid] = names(uid)
            rechecks += [recheck].compactMap { $0 }
        }
        state.recheckAt = rechecks.min()
        state.showNearest()
        l.state = state
        return l
    }

    /// The limit as `viewer` sees it (U2, A1): their own figures, and no one else's (nil: the
    /// machine's view, every person's, the nearest shown). Someone the limit counted nothing
    /// for today sees the whole allowance (less the day's pool, if an older blockd kept one).
    /// `everyone` (an administrator's own view): their own figures, with every person's listed.
    public func seen(by viewer: UInt32?, everyone: Bool = false) -> Limit {
        guard var state else { return self }
        guard let viewer else {
            state.listsPeople = true
            var l = self
            l.state = state
            return l
        }
        let all = (state.people, state.names)
        state.people = state.people.filter { $0.key == viewer }
        state.names = state.names.filter { $0.key == viewer }
        state.showNearest()
        if state.people.isEmpty && state.pool == nil {
            (state.used, state.remaining, state.running, state.window, state.warnAt) = (0, Double(seconds), false, nil, nil)
        }
        if everyone { (state.people, state.names, state.listsPeople) = (all.0, all.1, true) }
        var l = self
        l.state = state
        return l
    }

    /// Who the limit blocks at `t`: everyone it is for while the day's pool is used up (an
    /// older blockd's), else the people whose own allowance is (nil scope: the whole machine).
    /// A state made without people blocks its whole scope while its window holds.
    public func blockedScope(at t: Date) -> Scope? {
        guard let state else { return users }
        if let pool = state.pool, pool.window?.contains(t) == true { return users }
        if state.people.isEmpty && state.pool == nil { return users }
        let uids = state.people.filter { $0.value.window?.contains(t) == true }.keys.sorted()
        return Scope(names: uids.map { state.names[$0] ?? "#\($0)" }, uids: uids)
    }
}

public struct LimitState: Hashable, Sendable {
    /// One person's day under the limit (or the day's pool from an older blockd).
    public struct Person: Hashable, Sendable {
        public var used: TimeInterval
        public var remaining: TimeInterval
        public var running: Bool
        /// When the limit blocks them: from the instant their allowance is used up to local midnight.
        public var window: Window?
        /// When to warn them (`--warn`, else 5 and 1 minutes before), if an app or a site of
        /// theirs is counting toward the limit.
        public var warnAt: Date?
        /// Which warning `warnAt` is (`Limit.warnings`' mark).
        public var warnMark = ""

        public init(used: TimeInterval, remaining: TimeInterval, running: Bool) {
            (self.used, self.remaining, self.running) = (used, remaining, running)
        }
    }

    public var day: CivilDate
    /// The figures shown: on one person's view theirs, on the machine's the person nearest the
    /// limit (the most used). `window` is when the limit blocks anyone: from the first person's
    /// reach to midnight.
    public var used: TimeInterval
    public var remaining: TimeInterval
    public var running: Bool
    public var window: Window?
    public var warnAt: Date?
    /// An instant at which the limit must be looked at again (a warning, a day rollover).
    public var recheckAt: Date?
    /// §9: each person the limit counted today, by uid, with the names used in reasons.
    public var people: [UInt32: Person] = [:]
    public var names: [UInt32: String] = [:]
    /// The day's single pool, from a blockd before per-person limits (nil: none).
    public var pool: Person?
    /// Whether answers list every person's figures (`people` in `--json`): the machine's view
    /// and an administrator's, never a member's.
    public var listsPeople = false

    public init(day: CivilDate, used: TimeInterval, remaining: TimeInterval, running: Bool) {
        self.day = day
        self.used = used
        self.remaining = remaining
        self.running = running
    }

    /// Every instant at which someone's block or warning starts or ends.
    public var instants: [Date] {
        (Array(people.values) + [pool].compactMap { $0 }).flatMap { [$0.window?.start, $0.window?.end].compactMap { $0 } }
            + [window?.start, window?.end, recheckAt].compactMap { $0 }
    }

    /// Sets the shown figures from the people (and the pool): the most used, the earliest
    /// window. Without either, what was set stays.
    mutating func showNearest() {
        let all = Array(people.values) + [pool].compactMap { $0 }
        guard let nearest = all.max(by: { $0.used < $1.used }) else { return }
        (used, remaining, running) = (nearest.used, nearest.remaining, all.contains(where: \.running))
        let starts = all.compactMap { $0.window?.start }
        window = starts.min().flatMap { start in all.compactMap(\.window).first.map { Window(start: start, end: $0.end) } }
        warnAt = all.compactMap(\.warnAt).min()
    }
}

/// Usage per limit and person per local day (§9), pure: fed "running" / "not running" edges
/// with their instants, each under a person's key (`games@1001`, `key`). Intervals are split at local midnights (T7), so usage belongs to the day
/// it happened on. Persisted, so a restart neither loses nor double-counts: what ran before
/// the last checkpoint is counted, time the daemon could not observe is not.
public struct UsageLedger: Codable, Equatable, Sendable {
    /// Seconds used, by local day (`2026-11-29`), by limit name; closed intervals only.
    public var used: [String: [String: Double]] = [:]
    /// Limits with an app running now, and since when (counted up to the last checkpoint).
    public var running: [String: Date] = [:]
    /// When each limit's allowance was used up, by day.
    public var exhausted: [String: [String: Date]] = [:]
    /// Warnings already given, by day (never twice in a day, even across restarts).
    public var warned: [String: [String]] = [:]
    /// M3: more time given as allowance, seconds by day by limit (optional: older state files
    /// have none).
    public var more: [String: [String: Double]]?

    public init() {}

    /// §9: the key of `uid`'s use of `limit` (`games@1001`: `@` is in no activity's name). A
    /// key without `@` is a whole limit's pool, as a blockd before per-person limits kept it.
    public static func key(_ limit: String, _ uid: UInt32) -> String { "\(limit)@\(uid)" }

    /// By limit, the people with any figure on `day` or running it now: one pass over the
    /// day's keys, whatever the number of limits.
    public func people(on day: CivilDate) -> [String: Set<UInt32>] {
        var out: [String: Set<UInt32>] = [:]
        func take(_ keys: some Sequence<String>) {
            for key in keys {
                guard let at = key.lastIndex(of: "@"), let uid = UInt32(key[key.index(after: at)...]) else { continue }
                out[String(key[..<at]), default: []].insert(uid)
            }
        }
        let d = day.description
        take(running.keys)
        if let keys = used[d]?.keys { take(keys) }
        if let keys = exhausted[d]?.keys { take(keys) }
        if let keys = more?[d]?.keys { take(keys) }
        return out
    }

    /// The day's pool of `limit` (its bare name: an older blockd's), as a person's figures start.
    func poolFigures(_ limit: String, on day: CivilDate, at now: Date, clock: LocalClock)
        -> (used: Double, extra: Double, running: Bool, exhausted: Date?, any: Bool) {
        let d = day.description
        let any = used[d]?[limit] != nil || exhausted[d]?[limit] != nil || more?[d]?[limit] != nil || running[limit] != nil
        guard any else { return (0, 0, false, nil, false) }
        return (self.used(limit, on: day, at: now, clock: clock), extra(limit, on: day), isRunning(limit), exhaustedAt(limit, on: day), true)
    }

    public func isRunning(_ limit: String) -> Bool { running[limit] != nil }

    /// T6: the wall clock was stepped by `step`: what runs keeps the time it had counted.
    public mutating func shift(by step: TimeInterval) {
        running = running.mapValues { $0.addingTimeInterval(step) }
    }

    public mutating func setRunning(_ limit: String, _ isRunning: Bool, at t: Date, clock: LocalClock) {
        if isRunning {
            if running[limit] == nil { running[limit] = t }
        } else if let since = running.removeValue(forKey: limit) {
            add(limit, from: since, to: t, clock: clock)
        }
    }

    /// Folds running time up to `now` into the days it fell on.
    public mutating func checkpoint(at now: Date, clock: LocalClock) {
        for (limit, since) in running where now > since {
            add(limit, from: since, to: now, clock: clock)
            running[limit] = now
        }
    }

    /// After a restart: nothing is known to be running until it is seen again.
    public mutating func forgetRunning() { running = [:] }

    public func used(_ limit: String, on day: CivilDate, at now: Date, clock: LocalClock) -> Double {
        var total = used[day.description]?[limit] ?? 0
        if let since = running[limit] { total += clock.seconds(from: since, to: now, on: day) }
        return total
    }

    public func exhaustedAt(_ limit: String, on day: CivilDate) -> Date? { exhausted[day.description]?[limit] }

    public mutating func markExhausted(_ limit: String, on day: CivilDate, at t: Date) {
        if exhausted[day.description]?[limit] == nil { exhausted[day.description, default: [:]][limit] = t }
    }

    public func extra(_ limit: String, on day: CivilDate) -> Double { more?[day.description]?[limit] ?? 0 }

    /// M3: `seconds` more allowance today; the limit lifts until they are used up too, and is
    /// then reached (and logged) again.
    public mutating func addAllowance(_ limit: String, seconds: Double, on day: CivilDate) {
        more = more ?? [:]
        more![day.description, default: [:]][limit, default: 0] += seconds
        exhausted[day.description]?[limit] = nil
    }

    public func hasWarned(_ limit: String, on day: CivilDate) -> Bool { warned[day.description]?.contains(limit) ?? false }
    public mutating func markWarned(_ limit: String, on day: CivilDate) { warned[day.description, default: []].append(limit) }

    /// Drops days before `day` minus a week (the ledger stays small).
    public mutating func prune(keepingFrom day: CivilDate) {
        let cutoff = day.adding(days: -7).description
        used = used.filter { $0.key >= cutoff }
        exhausted = exhausted.filter { $0.key >= cutoff }
        warned = warned.filter { $0.key >= cutoff }
        more = more?.filter { $0.key >= cutoff }
    }

    mutating func add(_ limit: String, from a: Date, to b: Date, clock: LocalClock) {
        for (day, seconds) in clock.days(from: a, to: b) { used[day.description, default: [:]][limit, default: 0] += seconds }
    }
}
