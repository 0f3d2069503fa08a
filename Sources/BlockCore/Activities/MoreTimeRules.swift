import FoundationEssentials

/// What `blockc more` was answered (M1), decided by `MoreTimeBook.decide`.
public enum MoreTimeDecision: Equatable, Sendable {
    /// Granted by policy: lifted from `start` (after `Delay=`) to `end`.
    case grant(start: Date, end: Date, oneMoreMinute: Bool)
    /// `MoreTime=approval`: waits for an administrator until `expires`.
    case pending(expires: Date)
}

/// The more-time book of the day (M1-M3), pure: grants, requests, delayed loosenings, and how
/// much more time each activity gave per local day (T7). Persisted by the daemon (T8).
public struct MoreTimeBook: Codable, Equatable, Sendable {
    public var grants: [Grant] = []
    public var requests: [MoreTimeRequest] = []
    public var loosenings: [PendingLoosening] = []
    /// Seconds of more time given, by local day (`2026-11-29`), by activity name.
    public var given: [String: [String: Int]] = [:]
    /// "One more minute" already taken: a block's `name@start` (once per block), or a
    /// schedule's or limit's `name@day` (once per day).
    public var oneMoreMinute: Set<String> = []
    public var nextID = 1
    /// A1: the secret the ids are drawn with (`takeID`): two random words the daemon gives
    /// once (`Engine`, from the system's random source) and keeps with the book. Nil in a
    /// book without one (a state file from before it, a test's core): ids then count up.
    public var idKey: [UInt64]?

    public init() {}

    /// T4: grants and pending requests count toward `MaxActivities=` like activities.
    public var count: Int { grants.count + requests.count }

    /// A1: what refers to an activity that moved aside follows it.
    public mutating func rename(_ from: String, to: String) {
        func swap(_ names: inout [String]) { names = names.map { $0 == from ? to : $0 } }
        for i in grants.indices {
            swap(&grants[i].activities)
            if grants[i].limits != nil { swap(&grants[i].limits!) }
        }
        for i in requests.indices { swap(&requests[i].activities) }
        for i in loosenings.indices where loosenings[i].name == from { loosenings[i].name = to }
    }

    /// A1: each asker's grants and requests (they take slots of the asker's quota).
    public var countByUid: [UInt32: Int] {
        var out: [UInt32: Int] = [:]
        for g in grants { out[g.uid, default: 0] += 1 }
        for r in requests { out[r.uid, default: 0] += 1 }
        return out
    }

    public static let oneMinute = 60

    /// T6: the wall clock was stepped by `step` seconds; grants, requests and delayed
    /// loosenings keep their remaining elapsed time, as blocks do.
    public mutating func shift(by step: TimeInterval) {
        for i in grants.indices { grants[i].start += step; grants[i].end += step }
        for i in requests.indices { requests[i].asked += step; requests[i].expires += step }
        for i in loosenings.indices { loosenings[i].asked += step; loosenings[i].due += step }
    }

    /// M1: the answer to `more` for `blocked` (every reason that holds now), asked by `uid`.
    /// `seconds` nil means the rest of the local day. Refusals are errors that say why.
    public func decide(_ blocked: Policy.Blocked, seconds: Int?, activities: [Activity], now: Date,
                       clock: LocalClock) throws(CoreError) -> MoreTimeDecision {
        let blocking = blocked.reasons.compactMap { r in activities.first { $0.name == r.activity } }
        let policy = MoreTimePolicy.strictest(blocking.map(\.moreTime))
        if policy.mode == .no {
            let strict = blocking.filter { $0.moreTime.mode == .no }.map { "\($0.kind.rawValue) '\($0.name)'" }
            throw CoreError(.locked, "\(strict.joined(separator: ", ")) gives no more time to \(blocked.selection) (MoreTime=no or --lock); wait until it ends")
        }
        let dayEnd = MoreTimeBook.endOfDay(now, clock: clock)
        // More time ends with the local day (T7): a longer ask gets what is left of the day, as
        // an approval does, so that "15 more minutes" at 23:50 is ten and not a refusal.
        let end = seconds.map { min(now.addingTimeInterval(TimeInterval($0)), dayEnd) } ?? dayEnd
        if seconds == MoreTimeBook.oneMinute, blocking.allSatisfy({ !oneMoreMinute.contains(MoreTimeBook.minuteKey($0, now: now, clock: clock)) }) {
            return .grant(start: now, end: end, oneMoreMinute: true)
        }
        if policy.mode == .approval {
            let timeout = now.addingTimeInterval(TimeInterval(policy.requestTimeout))
            return .pending(expires: min(timeout, blocked.until ?? timeout))
        }
        let asked = Int(end.timeIntervalSince(now).rounded(.up))
        let day = clock.civil(of: now).date.description
        for activity in blocking {
            let left = activity.moreTime.perDay - (given[day]?[activity.name] ?? 0)
            guard asked <= left else {
                let have = left > 0 ? "only \(DurationText.format(left)) left" : "none left"
                throw CoreError(.permissionDenied, "\(activity.kind.rawValue) '\(activity.name)' gives \(DurationText.format(activity.moreTime.perDay)) of more time a day and has \(have) today (MoreTimePerDay=); ask for less or wait until tomorrow")
            }
        }
        // M2: a grant is a loosening, so it waits for `Delay=`; it still ends with the day.
        let start = now.addingTimeInterval(TimeInterval(policy.delay))
        guard start < dayEnd else {
            throw CoreError(.invalidTime, "more time would begin only after the end of the day (Delay= is \(DurationText.format(policy.delay))); ask tomorrow")
        }
        let grantEnd = seconds.map { min(start.addingTimeInterval(TimeInterval($0)), dayEnd) } ?? dayEnd
        return .grant(start: start, end: grantEnd, oneMoreMinute: false)
    }

    /// Takes note of a grant given by policy (the allowance it used, or its one more minute).
    public mutating func charge(_ grant: Grant, oneMoreMinute: Bool, activities: [Activity], now: Date, clock: LocalClock) {
        let blocking = (grant.activities + (grant.limits ?? [])).compactMap { name in activities.first { $0.name == name } }
        if oneMoreMinute {
            for a in blocking { self.oneMoreMinute.insert(MoreTimeBook.minuteKey(a, now: now, clock: clock)) }
            return
        }
        let day = clock.civil(of: now).date.description
        let seconds = Int(grant.window.duration.rounded(.up))
        for a in blocking { given[day, default: [:]][a.name, default: 0] += seconds }
    }

    /// A short id for a grant or request. A1: with `idKey`, ten base-32 characters of the
    /// keyed hash of a counter (`m` then 50 bits, such as `mq3v8k2x1fd`), so a member cannot
    /// guess another's request id from their own; ids in use are never given twice. Without
    /// a key, `m1`, `m2`, ...
    public mutating func takeID() -> String {
        guard let key = idKey, key.count == 2 else {
            defer { nextID += 1 }
            return "m\(nextID)"
        }
        let hash = SipHash24(k0: key[0], k1: key[1])
        let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)  // Crockford's base 32, lower case
        while true {
            var n = UInt64(nextID).littleEndian
            nextID += 1
            let tag = hash.hash(withUnsafeBytes(of: &n) { Array($0) })
            let id = "m" + String(decoding: (0..<10).map { alphabet[Int(tag >> (UInt64($0) * 5) & 31)] }, as: UTF8.self)
            if !grants.contains(where: { $0.id == id }) && !requests.contains(where: { $0.id == id }) { return id }
        }
    }

    /// T7: the next local midnight, however long the day is (23 or 25 hours across DST).
    public static func endOfDay(_ t: Date, clock: LocalClock) -> Date {
        clock.instant(clock.civil(of: t).date.adding(days: 1), secondsOfDay: 0)
    }

    static func minuteKey(_ activity: Activity, now: Date, clock: LocalClock) -> String {
        if case .block(let b) = activity { return "\(b.name)@\(Int(b.start.timeIntervalSince1970))" }
        return "\(activity.name)@\(clock.civil(of: now).date)"
    }

    /// M3, T9: the next instant after `t` at which a grant starts or ends, a request expires
    /// or a delayed loosening is due.
    public func nextBoundary(after t: Date) -> Date? {
        let instants = grants.flatMap { [$0.start, $0.end] } + requests.map(\.expires) + loosenings.map(\.due)
        return instants.filter { $0 > t }.min()
    }

    /// Drops days before `day` minus a week, so the book stays small.
    public mutating func prune(keepingFrom day: CivilDate) {
        let cutoff = day.adding(days: -7).description
        given = given.filter { $0.key >= cutoff }
        oneMoreMinute = oneMoreMinute.filter { key in
            guard let at = key.split(separator: "@").last, at.contains("-") else { return true }
            return String(at) >= cutoff
        }
    }
}
