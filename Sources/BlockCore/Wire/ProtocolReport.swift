import FoundationEssentials

/// R2: `report {"days":7,"to":"2026-11-29","user":"kid"}` or `report {"period":"week"}`: the
/// usage ledger (R1) for some days, for one user's view (the caller's by default) or the whole
/// machine's (`allUsers`).
public struct ReportArguments: Equatable, Sendable {
    /// The last `days` days up to `to`, or the calendar week (Monday to Sunday) or month that
    /// holds `to`.
    public enum Period: Equatable, Sendable {
        case days(Int)
        case week, month

        /// `days`, `week` or `month`, as the answer names it.
        public var name: ReportReply.Period {
            switch self {
            case .days: .days
            case .week: .week
            case .month: .month
            }
        }
    }

    public var period: Period
    /// The last day, or a day of the week or month (nil: today, the daemon's).
    public var to: CivilDate?
    public var view: StatusView

    public init(period: Period = .days(7), to: CivilDate? = nil, view: StatusView = .caller) {
        (self.period, self.to, self.view) = (period, to, view)
    }

    public static let daysRange = 1...366

    var arguments: JSONObject {
        var o = view.arguments
        switch period {
        case .days(let n): o["days"] = .int(Int64(n))
        case .week, .month: o["period"] = .string(period.name.rawValue)
        }
        if let to { o["to"] = .string(to.description) }
        return o
    }

    /// The days the report covers and the period it is compared with, as of `today`: N days
    /// against the N before; a week or month up to today (all of it when it is over) against
    /// as many days from the start of the week or month before.
    public func range(today: CivilDate) -> (from: CivilDate, to: CivilDate, previous: (from: CivilDate, to: CivilDate)) {
        let day = to ?? today
        switch period {
        case .days(let n):
            let from = day.adding(days: 1 - n)
            return (from, day, (from.adding(days: -n), from.adding(days: -1)))
        case .week:
            let monday = day.adding(days: -day.weekday.rawValue)
            let end = min(monday.adding(days: 6), max(today, monday))
            return (monday, end, (monday.adding(days: -7), end.adding(days: -7)))
        case .month:
            let first = CivilDate(year: day.year, month: day.month, day: 1)
            let end = min(CivilDate(year: day.year, month: day.month, day: CivilDate.daysIn(month: day.month, year: day.year)), max(today, first))
            let before = first.adding(days: -1)
            let previousFirst = CivilDate(year: before.year, month: before.month, day: 1)
            return (first, end, (previousFirst, min(before, previousFirst.adding(days: end.day - 1))))
        }
    }
}

extension CivilDate {
    /// `2026-11-29`, a real date, or a usage error saying what is accepted.
    public static func parse(_ text: String) throws(CoreError) -> CivilDate {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else {
            throw CoreError(.usage, "'\(text)' is not a date; write it as YYYY-MM-DD, such as 2026-11-29")
        }
        let date = CivilDate(year: y, month: m, day: d)
        guard date.isValid else { throw CoreError(.usage, "'\(text)' is not a day of the calendar; write it as YYYY-MM-DD, such as 2026-11-29") }
        return date
    }
}

extension Arguments {
    mutating func report() throws(CoreError) -> ReportArguments {
        var args = ReportArguments(view: try statusView())
        let days = optional("days")
        if let v = days {
            let days = try intValue("days", v)
            guard ReportArguments.daysRange.contains(days) else {
                throw CoreError(.usage, "report: days must be 1 to 366, not \(days)")
            }
            args.period = .days(days)
        }
        if let v = optional("period") {
            let named = v.string.flatMap(ReportReply.Period.init(rawValue:))
            switch named {
            case .week?: args.period = .week
            case .month?: args.period = .month
            case .days?, nil: throw wrongType("period", "\"week\" or \"month\"")
            }
            guard days == nil else { throw CoreError(.usage, "report: give days or period, not both") }
        }
        if let v = optional("to") {
            guard case .string(let text) = v else { throw wrongType("to", "a date such as 2026-11-29") }
            args.to = try CivilDate.parse(text)
        }
        return args
    }
}

extension UsageHistory {
    /// R2's answer (schema 1): for each day from `from` to `to`, for `user` (a uid as text;
    /// nil: the whole machine, where time in apps and counts add up over users), up to `now`:
    /// the seconds each selection was blocked (`blocked`), each app ran (`apps`) and had the
    /// focus (`foreground`, X11 sessions whose agent says), at least one
    /// app of each selection ran (`used`), and the counts; each of `limits` that applies to the
    /// view with its used seconds and, on a day it limits, its allowance (more time granted
    /// included while `usage` still has the day); on the machine's view each user's time in
    /// any counted app (`users`); the shield's hits per selection (`shieldHits`: launches denied,
    /// apps stopped, edits undone; `shieldHits` is the view's, by local day). `previous` holds the blocked and used seconds of as many days
    /// before, for the change against the period before (absent when the ledger has none).
    public func report(from: CivilDate, to: CivilDate, previous: (from: CivilDate, to: CivilDate)? = nil, period: ReportReply.Period = .days, user: String?,
                       at now: Date, clock: LocalClock, limits: [Limit] = [], usage: UsageLedger = UsageLedger(),
                       shieldHits: [String: [String: Int]] = [:]) -> ReportReply {
        var days: [ReportReply.Day] = []
        var date = from
        let since = limitsSince()
        while date <= to {
            var used = seconds(.used, on: date, user: user, at: now, clock: clock)
            used[UsageHistory.anyApp] = nil
            var counts: [String: Int] = [:]
            for (who, c) in day(date).counts where user == nil || who == user {
                for (k, n) in c { counts[k, default: 0] += n }
            }
            days.append(ReportReply.Day(date: date.description, weekday: date.weekday.description,
                                        blocked: UsageHistory.figures(seconds(.blocked, on: date, user: user, at: now, clock: clock)),
                                        used: UsageHistory.figures(used),
                                        apps: UsageHistory.figures(seconds(.running, on: date, user: user, at: now, clock: clock)),
                                        foreground: UsageHistory.figures(seconds(.foreground, on: date, user: user, at: now, clock: clock)),
                                        web: UsageHistory.figures(seconds(.web, on: date, user: user, at: now, clock: clock)),
                                        users: user == nil ? UsageHistory.figures(anyAppByUser(on: date, at: now, clock: clock)) : [:],
                                        counts: counts, shieldHits: shieldHits[date.description] ?? [:],
                                        limits: limitDays(limits, on: date, at: now, clock: clock, usage: usage, user: user, since: since),
                                        screen: UsageHistory.figures(screenByUser(on: date, at: now, clock: clock).filter { user == nil || $0.key == user })))
            date = date.adding(days: 1)
        }
        var reply = ReportReply(schema: UsageHistory.schema, from: from.description, to: to.description, period: .known(period),
                                user: user.flatMap { Int($0) }, days: days, previous: nil)
        let span = to.dayNumber - from.dayNumber + 1
        let before = previous.map { ($0.from, $0.to) } ?? (from.adding(days: -span), from.adding(days: -1))
        if self.days.keys.contains(where: { $0 >= before.0.description && $0 <= before.1.description }) {
            var totals: [Open.Kind: [String: Double]] = [:]
            var d = before.0
            while d <= before.1 {
                for kind in [Open.Kind.blocked, .used] {
                    for (name, s) in seconds(kind, on: d, user: user, at: now, clock: clock) where name != UsageHistory.anyApp {
                        totals[kind, default: [:]][name, default: 0] += s
                    }
                }
                d = d.adding(days: 1)
            }
            reply.previous = ReportReply.Previous(from: before.0.description, to: before.1.description,
                                                  blocked: UsageHistory.figures(totals[.blocked] ?? [:]),
                                                  used: UsageHistory.figures(totals[.used] ?? [:]))
        }
        return reply
    }

    /// Screen time: each person's seconds at the screen on `date`, the open interval included.
    func screenByUser(on date: CivilDate, at now: Date, clock: LocalClock) -> [String: Double] {
        var out: [String: Double] = [:]
        for (who, names) in day(date).screen { if let s = names[UsageHistory.screenName] { out[who, default: 0] += s } }
        for (key, since) in open {
            guard let o = Open(key: key), o.kind == .screen else { continue }
            let s = clock.seconds(from: since, to: now, on: date)
            if s > 0 { out[o.user, default: 0] += s }
        }
        return out
    }

    /// Each user's seconds in any counted app on `date`.
    func anyAppByUser(on date: CivilDate, at now: Date, clock: LocalClock) -> [String: Double] {
        var out: [String: Double] = [:]
        for (who, names) in day(date).used { if let s = names[UsageHistory.anyApp] { out[who, default: 0] += s } }
        for (key, since) in open {
            guard let o = Open(key: key), o.kind == .used, o.name == UsageHistory.anyApp else { continue }
            let s = clock.seconds(from: since, to: now, on: date)
            if s > 0 { out[o.user, default: 0] += s }
        }
        return out
    }

    /// Each limit used or in force on `date` (`{"games": {"used": 3600, "selections": ["games"],
    /// "allowance": 3600}}` on the wire); in force from the first day `since` has of it. The limits' ledger (a week, with the running part) has
    /// the day's figure while it keeps it; this ledger's copy is the figure after that.
    /// §9: each person has their own allowance, so a user's view shows their own use and
    /// allowance, and the machine's view the most any one person used (with an older blockd's
    /// pool for everyone added to each).
    func limitDays(_ limits: [Limit], on date: CivilDate, at now: Date, clock: LocalClock, usage: UsageLedger, user: String? = nil,
                   since: [String: String] = [:]) -> [String: ReportReply.LimitDay] {
        var out: [String: ReportReply.LimitDay] = [:]
        func used(_ key: String) -> Double { max(usage.used(key, on: date, at: now, clock: clock), day(date).limits[key] ?? 0) }
        let people = usage.people(on: date)
        for l in limits {
            let keys: [String]
            if let uid = user.flatMap(UInt32.init) {
                keys = [UsageLedger.key(l.name, uid)]
            } else {
                let prefix = l.name + "@"
                keys = Set(day(date).limits.keys.filter { $0.hasPrefix(prefix) })
                    .union((people[l.name] ?? []).map { UsageLedger.key(l.name, $0) }).sorted()
            }
            let nearest = keys.max(by: { used($0) < used($1) })
            let total = used(l.name) + (nearest.map(used) ?? 0)
            // A limit applies on its days from the first one it was in force (a ledger without
            // that note, from an older blockd, has it on every day).
            let applies = l.days.contains(date.weekday) && since[l.name].map { date.description >= $0 } ?? true
            guard applies || total > 0 else { continue }
            let extra = usage.extra(l.name, on: date) + (user == nil ? 0 : keys.first.map { usage.extra($0, on: date) } ?? 0)
            out[l.name] = ReportReply.LimitDay(used: Int(total.rounded()), allowance: applies ? Int((Double(l.seconds) + extra).rounded()) : nil,
                                               selections: l.selections, session: l.session?.rawValue)
        }
        return out
    }

    /// Seconds by name, rounded to whole seconds.
    static func figures(_ seconds: [String: Double]) -> ReportReply.Figures { seconds.mapValues { Int($0.rounded()) } }
}
