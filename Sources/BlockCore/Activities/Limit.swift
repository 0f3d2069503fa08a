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

    enum CodingKeys: String, CodingKey { case name, selections, seconds, days, warnSeconds, origin, moreTime, users }

    public init(name: String, selections: [String], seconds: Int, days: WeekdaySet = .all, warnSeconds: Int? = nil,
                origin: Origin = .client(uid: 0)) {
        self.name = name
        self.selections = selections
        self.seconds = seconds
        self.days = days
        self.warnSeconds = warnSeconds
        self.origin = origin
    }

    /// `1h daily`, `30m mon-fri`.
    public var rule: String { "\(DurationText.format(seconds)) \(days)" }

    /// The limit as of `now`: how much is used today and, when the allowance is or will be
    /// used up today, the window during which it blocks — from that instant to local midnight
    /// (T7: the day ends at the next local 00:00, however long the day is).
    public func refreshed(ledger: UsageLedger, at now: Date, clock: LocalClock) -> Limit {
        var l = self
        let today = clock.civil(of: now).date
        let dayEnd = clock.instant(today.adding(days: 1), secondsOfDay: 0)
        let used = ledger.used(name, on: today, at: now, clock: clock)
        let running = ledger.isRunning(name)
        // M3: more time on a limit is allowance for the day, used up by running like the rest.
        let allowance = Double(seconds) + ledger.extra(name, on: today)
        var state = LimitState(day: today, used: used, remaining: max(allowance - used, 0), running: running)
        guard days.contains(today.weekday) else {
            // Not a limited day: look again at midnight if an app keeps running into one.
            state.recheckAt = running ? dayEnd : nil
            l.state = state
            return l
        }
        if let reached = ledger.exhaustedAt(name, on: today) {
            state.window = Window(start: reached, end: dayEnd)
        } else if used >= allowance {
            state.window = Window(start: now, end: dayEnd)
        } else if running {
            let reach = now.addingTimeInterval(allowance - used)
            if reach < dayEnd {
                state.window = Window(start: reach, end: dayEnd)
                if let warn = warnSeconds {
                    let at = reach.addingTimeInterval(-Double(warn))
                    state.warnAt = at
                    if at > now { state.recheckAt = at }
                }
            } else {
                state.recheckAt = dayEnd  // usage goes on into tomorrow's allowance
            }
        }
        l.state = state
        return l
    }
}

public struct LimitState: Hashable, Sendable {
    public var day: CivilDate
    public var used: TimeInterval
    public var remaining: TimeInterval
    public var running: Bool
    /// When the limit blocks: from the instant the allowance is used up to local midnight.
    public var window: Window?
    /// When to warn (`--warn`), if an app is running toward the limit.
    public var warnAt: Date?
    /// An instant at which the limit must be looked at again (a warning, a day rollover).
    public var recheckAt: Date?

    public init(day: CivilDate, used: TimeInterval, remaining: TimeInterval, running: Bool) {
        self.day = day
        self.used = used
        self.remaining = remaining
        self.running = running
    }
}

/// Usage per limit per local day (§9), pure: fed "running" / "not running" edges with
/// their instants. Intervals are split at local midnights (T7), so usage belongs to the day
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

    public func isRunning(_ limit: String) -> Bool { running[limit] != nil }

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
