import FoundationEssentials

/// R2: `report {"days":7,"to":"2026-11-29","user":"kid"}`: the usage ledger (R1) for some
/// days, for one user's view (the caller's by default) or the whole machine's (`allUsers`).
public struct ReportArguments: Equatable, Sendable {
    /// How many days, ending with `to`: 1 to 366 (the ledger keeps `ReportDays=`).
    public var days: Int
    /// The last day (nil: today, the daemon's).
    public var to: CivilDate?
    public var view: StatusView

    public init(days: Int = 7, to: CivilDate? = nil, view: StatusView = .caller) {
        (self.days, self.to, self.view) = (days, to, view)
    }

    public static let daysRange = 1...366

    var arguments: JSONObject {
        var o = view.arguments
        o["days"] = .int(Int64(days))
        if let to { o["to"] = .string(to.description) }
        return o
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
        if let v = optional("days") {
            args.days = try intValue("days", v)
            guard ReportArguments.daysRange.contains(args.days) else {
                throw CoreError(.usage, "report: days must be 1 to 366, not \(args.days)")
            }
        }
        if let v = optional("to") {
            guard case .string(let text) = v else { throw wrongType("to", "a date such as 2026-11-29") }
            args.to = try CivilDate.parse(text)
        }
        return args
    }
}

extension UsageHistory {
    /// R2's answer (schema 1): for each day from `from` to `to`, the seconds each selection was
    /// blocked, the seconds each app ran, and the counts, for `user` (a uid as text; nil: the whole machine, where counts
    /// add up over users), up to `now`; and the blocked seconds of as many days before, for
    /// the change against the period before (`previous`, absent when the ledger has none of it).
    public func report(from: CivilDate, to: CivilDate, user: String?, at now: Date, clock: LocalClock) -> JSONObject {
        var days: [JSON] = []
        var date = from
        while date <= to {
            var o: JSONObject = ["date": .string(date.description), "weekday": .string(date.weekday.description)]
            o["blocked"] = UsageHistory.secondsJSON(seconds(.blocked, on: date, user: user, at: now, clock: clock))
            o["apps"] = UsageHistory.secondsJSON(seconds(.running, on: date, user: user, at: now, clock: clock))
            var counts: [String: Int] = [:]
            for (who, c) in day(date).counts where user == nil || who == user {
                for (k, n) in c { counts[k, default: 0] += n }
            }
            o["counts"] = .object(JSONObject(uniqueKeysWithValues: counts.sorted { $0.key < $1.key }.map { ($0.key, JSON.int(Int64($0.value))) }))
            days.append(.object(o))
            date = date.adding(days: 1)
        }
        var out: JSONObject = ["schema": .int(Int64(UsageHistory.schema)), "from": .string(from.description), "to": .string(to.description)]
        if let user, let uid = Int64(user) { out["user"] = .int(uid) }
        out["days"] = .array(days)
        let span = to.dayNumber - from.dayNumber + 1
        let before = (from.adding(days: -span), from.adding(days: -1))
        if self.days.keys.contains(where: { $0 >= before.0.description && $0 <= before.1.description }) {
            var totals: [String: Double] = [:]
            var d = before.0
            while d <= before.1 {
                for (name, s) in seconds(.blocked, on: d, user: user, at: now, clock: clock) { totals[name, default: 0] += s }
                d = d.adding(days: 1)
            }
            out["previous"] = ["from": .string(before.0.description), "to": .string(before.1.description),
                               "blocked": UsageHistory.secondsJSON(totals)]
        }
        return out
    }

    static func secondsJSON(_ seconds: [String: Double]) -> JSON {
        .object(JSONObject(uniqueKeysWithValues: seconds.sorted { $0.key < $1.key }.map { ($0.key, JSON.int(Int64($0.value.rounded()))) }))
    }
}
