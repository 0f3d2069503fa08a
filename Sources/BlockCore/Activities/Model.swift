import FoundationEssentials

/// A named set of targets (§1): websites and executables, plus what the shield
/// notification offers instead (`OpenURL=`) and per-selection text overrides (S6).
public struct Selection: Hashable, Sendable, Codable {
    public var name: String
    public var domains: [String]
    public var apps: [String]
    /// E8: URL prefixes (`youtube.com/shorts`, `URLPrefix.normalize` form), enforced through
    /// the browsers' managed policies only.
    public var paths: [String]
    public var openURL: String?
    /// Text overrides keyed by `TextKey` raw value, optionally with a language suffix
    /// (`ShieldBody`, `ShieldBody[ja]`); templates are checked at load time (S6).
    public var texts: [String: String]
    /// E3 hooks, run by the daemon with the selection's name and targets in the environment.
    public var execOnBlock: String?
    public var execOnUnblock: String?
    /// E5 `Firewall=yes`: new connections to the domains' addresses are refused for the whole
    /// block, not only for `ConnectGrace=`. Optional so that older state files still decode.
    public var firewall: Bool?
    /// Set by the engine on the targets it enforces, never configured: the uids this selection
    /// is blocked for now (nil: the whole machine; Scope.swift).
    public var users: [UInt32]?
    /// W2: set for an allow-only selection (`only:…`, AllowOnly.swift): everything is blocked
    /// but these. Resolved from the name by the catalog, never configured.
    public var allowed: [Selection]?
    /// W2: always-allowed hosts under a domain this selection blocks (`AlwaysAllowed.applied`),
    /// set by the engine on what it enforces: the NSS module and Chromium let them through.
    public var exceptions: [String]?

    public init(name: String, domains: [String] = [], apps: [String] = [], paths: [String] = [], openURL: String? = nil,
                texts: [String: String] = [:], execOnBlock: String? = nil, execOnUnblock: String? = nil, firewall: Bool? = nil) {
        self.name = name
        self.domains = domains
        self.apps = apps
        self.paths = paths
        self.openURL = openURL
        self.texts = texts
        self.execOnBlock = execOnBlock
        self.execOnUnblock = execOnUnblock
        self.firewall = firewall
    }
}

/// Where an activity came from: a client (and which uid, for §5's stop/remove rule) or a
/// declarative file under `schedules.d/` (config management owns it; clients cannot remove it).
public enum Origin: Hashable, Sendable, Codable {
    case client(uid: UInt32)
    case config(file: String)
}

/// A one-shot block: its selections are blocked from `start` until `end`, both absolute
/// instants (T2: no wall-time ambiguity; T6: the daemon maps them onto the boot clock).
public struct Block: Hashable, Sendable, Codable {
    public var name: String
    public var selections: [String]
    public var start: Date
    public var end: Date
    public var locked: Bool
    public var origin: Origin
    /// M1: `--more-time`, `--delay` (nil: the defaults; `locked` always means no).
    public var moreTime: MoreTimePolicy?
    /// Who it applies to (Scope.swift; nil: the whole machine).
    public var users: Scope?

    public init(name: String, selections: [String], start: Date, end: Date, locked: Bool = false,
                origin: Origin = .client(uid: 0)) {
        self.name = name
        self.selections = selections
        self.start = start
        self.end = end
        self.locked = locked
        self.origin = origin
    }

    public func isActive(at t: Date) -> Bool { start <= t && t < end }
}

/// A half-open interval of instants, `[start, end)`.
public struct Window: Hashable, Sendable {
    public var start: Date
    public var end: Date
    public init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }
    public func contains(_ t: Date) -> Bool { start <= t && t < end }
    public var duration: TimeInterval { end.timeIntervalSince(start) }
}

/// A repeating activity: every day in `days`, its selections are blocked from `start` to
/// `end` local wall time (T2, T3, T7; the math is in Schedule+Windows.swift).
public struct Schedule: Hashable, Sendable, Codable {
    public var name: String
    public var selections: [String]
    public var days: WeekdaySet
    public var start: WallTime
    public var end: WallTime
    public var origin: Origin
    /// M1: `MoreTime=`, `Delay=`, `MoreTimePerDay=`, `RequestTimeout=` (nil: the defaults).
    public var moreTime: MoreTimePolicy?
    /// Who it applies to (Scope.swift; nil: the whole machine).
    public var users: Scope?
    /// Allowed hours (nil: a schedule of apps and sites): during the window the people it is
    /// for are kept off the screen, their sessions locked or ended whenever they are at one
    /// (ScreenTime.swift). It has no selections.
    public var session: SessionAction?

    public init(name: String, selections: [String], days: WeekdaySet = .all, start: WallTime, end: WallTime,
                origin: Origin = .client(uid: 0)) {
        self.name = name
        self.selections = selections
        self.days = days
        self.start = start
        self.end = end
        self.origin = origin
    }

    /// `22:00-07:00 daily`, `09:00-15:00 mon-fri`.
    public var rule: String { "\(start)-\(end) \(days)" }
}

/// A block, a schedule or a daily usage limit: the unit that counts against the cap (T4).
public enum Activity: Hashable, Sendable {
    case block(Block)
    case schedule(Schedule)
    case limit(Limit)

    public enum Kind: String, Sendable, Codable, CaseIterable {
        case block, schedule, limit
    }

    public var name: String {
        switch self {
        case .block(let b): b.name
        case .schedule(let s): s.name
        case .limit(let l): l.name
        }
    }

    public var selections: [String] {
        switch self {
        case .block(let b): b.selections
        case .schedule(let s): s.selections
        case .limit(let l): l.selections
        }
    }

    public var kind: Kind {
        switch self {
        case .block: .block
        case .schedule: .schedule
        case .limit: .limit
        }
    }

    public var origin: Origin {
        switch self {
        case .block(let b): b.origin
        case .schedule(let s): s.origin
        case .limit(let l): l.origin
        }
    }

    public var locked: Bool {
        if case .block(let b) = self { return b.locked }
        return false
    }

    /// The interval of this activity that contains `t`, if it is active at `t`.
    public func activeWindow(at t: Date, clock: LocalClock) -> Window? {
        switch self {
        case .block(let b): b.isActive(at: t) ? Window(start: b.start, end: b.end) : nil
        case .schedule(let s): s.activeWindow(at: t, clock: clock)
        case .limit(let l): l.state?.window.flatMap { $0.contains(t) ? $0 : nil }
        }
    }

    /// The current interval if active at `t`, else the next one to start (nil: none ever again).
    public func currentOrNextWindow(at t: Date, clock: LocalClock) -> Window? {
        switch self {
        case .block(let b): b.end > t ? Window(start: b.start, end: b.end) : nil
        case .schedule(let s): s.activeWindow(at: t, clock: clock) ?? s.nextWindow(after: t, clock: clock)
        case .limit(let l): l.state?.window.flatMap { $0.end > t ? $0 : nil }
        }
    }

    /// The first instant after `t` at which this activity starts or ends.
    public func nextBoundary(after t: Date, clock: LocalClock) -> Date? {
        switch self {
        case .block(let b):
            if b.start > t { return b.start }
            return b.end > t ? b.end : nil
        case .schedule(let s):
            return s.nextBoundary(after: t, clock: clock)
        case .limit(let l):
            let candidates = (l.state?.instants ?? []).filter { $0 > t }  // §9: each person's block starts on its own
            return candidates.min()
        }
    }
}

/// Why a selection is blocked now (§1): the name of an activity that covers it.
public struct Reason: Hashable, Sendable {
    public var activity: String
    public var kind: Activity.Kind
    public var until: Date
    /// The activity's scope (nil: the whole machine; Scope.swift derives who is blocked).
    public var scope: Scope?
    public init(activity: String, kind: Activity.Kind, until: Date, scope: Scope? = nil) {
        self.activity = activity
        self.kind = kind
        self.until = until
        self.scope = scope
    }
}
