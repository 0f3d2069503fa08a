import FoundationEssentials

extension ReportHTML {
    /// A day's seconds by name that the page reads: each selection's app and site time, blocked
    /// time, each app's time and time in focus, each site's time (B2), each person's time, and
    /// each person's screen time (by uid).
    enum Measure {
        case used, blocked, apps, foreground, web, users, screen

        /// The day's figures; none where the answer has none (`used` from an older daemon).
        func figures(of day: ReportReply.Day) -> ReportReply.Figures {
            switch self {
            case .used: day.used ?? [:]
            case .blocked: day.blocked
            case .apps: day.apps
            case .foreground: day.foreground
            case .web: day.web
            case .users: day.users
            case .screen: day.screen ?? [:]
            }
        }

        func seconds(_ name: String, on day: ReportReply.Day) -> Double {
            Double(figures(of: day)[name] ?? 0)
        }
    }

    /// The report answer (schema 1) as the page reads it: the fields of `ReportReply`, which
    /// reads a missing or wrong-typed figure as none.
    struct Report {
        var days: [ReportReply.Day]
        /// The viewed uid; nil: the whole machine.
        var user: Int?
        var previous: ReportReply.Previous?

        init(_ reply: ReportReply) {
            (days, user, previous) = (reply.days, reply.user, reply.previous)
        }

        /// The names `measure` has on any day, sorted.
        func names(_ measure: Measure) -> [String] {
            Set(days.flatMap { measure.figures(of: $0).keys }).sorted()
        }

        /// Whether the daemon reports each selection's app time (`used`); older answers do not.
        var hasUsed: Bool { days.contains { $0.used != nil } }

        func total(_ measure: Measure, _ name: String) -> Double {
            days.reduce(0) { $0 + measure.seconds(name, on: $1) }
        }

        /// The names `measure` has with time over the period, biggest first (ties by name).
        func ranked(_ measure: Measure) -> [(name: String, seconds: Double)] {
            let totals: [(name: String, seconds: Double)] = names(measure).map { ($0, total(measure, $0)) }
            return totals.filter { $0.seconds > 0 }.sorted { a, b in
                a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name
            }
        }

        func count(_ count: UsageHistory.Count) -> Int {
            days.reduce(0) { $0 + $1.count(count) }
        }

        /// The seconds of `name` in the period before (`previous.blocked`, `previous.used`); nil
        /// when the answer has no such figures for that period.
        func previous(_ figures: KeyPath<ReportReply.Previous, ReportReply.Figures?>, _ name: String) -> Double? {
            guard let before = previous?[keyPath: figures] else { return nil }
            return Double(before[name] ?? 0)
        }

        /// The limits that count `selection`'s time: for each, its allowance on each day (nil
        /// where it does not apply that day).
        func limits(for selection: String) -> [WeekChart.Limit] {
            limits { $0.selections?.contains(selection) == true }
        }

        /// The limits any day has that `matches`, each with its allowance by day.
        func limits(where matches: (ReportReply.LimitDay) -> Bool) -> [WeekChart.Limit] {
            let names = Set(days.flatMap { day in day.limits.filter { matches($0.value) }.map(\.key) }).sorted()
            return names.map { name in
                WeekChart.Limit(name: name, allowances: days.map { $0.limits[name]?.allowance.map(Double.init) })
            }
        }

        /// The screen-time limits (those with `session`), each with its allowance by day: drawn
        /// over one person's own screen-time chart.
        var screenLimits: [WeekChart.Limit] { limits { $0.session != nil } }

        /// `week` for 7 days, else `N days`: the period the averages compare against.
        var periodWord: String { days.count == 7 ? "week" : "\(days.count) days" }

        /// `Mon 23 Nov to Sun 29 Nov 2026` (`ReportChart.period`, as the text's heading says it).
        var periodText: String {
            guard let first = days.first, let last = days.last else { return "" }
            guard let a = Report.date(first), let b = Report.date(last) else { return "\(first.date) to \(last.date)" }
            return ReportChart.period(a, b)
        }

        static func date(_ day: ReportReply.Day) -> CivilDate? {
            try? CivilDate.parse(day.date)
        }
    }
}
