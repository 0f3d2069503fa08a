import BlockCore

/// R2: how `blockc report` groups its charts: by selection (the time in each selection's apps
/// and sites, its limit drawn, then the top apps and the top sites), by app (a chart per app,
/// then the top sites) or by user (a chart per person's time in apps, for the whole machine's
/// view).
public enum ReportGrouping: String, CaseIterable, Equatable, Sendable {
    case selection, app, user
}

/// R2: `blockc report` for people: the time in apps and on sites as a bar per day (ReportChart)
/// with the limit drawn where one exists and the average against the period before; the top
/// apps and the top sites (B2); the time each selection was blocked; then the blocks and more
/// time.
extension Output {
    public func report(_ o: JSONObject, by grouping: ReportGrouping = .selection) -> String { report(ReportReply(o), by: grouping) }

    public func report(_ r: ReportReply, by grouping: ReportGrouping = .selection) -> String {
        let days = r.days
        guard let first = days.first, let last = days.last else { return "No days in the report." }
        let whose = r.user.map { uid in "for \(person(uid))" } ?? "for the whole machine"
        let period = Output.period(first, last)
        var lines = [heading("Report, \(period) \(whose)")]
        let previous = r.previous
        let context = ChartContext(days: days, previousDays: Output.dayCount(previous), period: periodName(r, days: days.count))
        lines += screenTime(r, context)
        var usage: [String] = []
        switch grouping {
        case .selection:
            // Screen-time limits are drawn on the screen-time chart, not among apps and sites.
            usage = bySelection(days, previous: previous, context, skipping: Set(Output.screenLimits(days)))
        case .app:
            for app in names(\.apps, in: days) { usage += chart(Output.clean(app), values: days.map { $0.apps[app] }, context) }
        case .user:
            for uid in names(\.users, in: days) {
                usage += chart(person(Int(uid) ?? -1), values: days.map { $0.users[uid] }, context)
            }
        }
        // A selection's time is its apps' and its sites' (B2); an app's or a person's is apps only.
        let (title, none) = grouping == .selection ? ("Time in apps and on sites", "No selection's apps or sites were used.")
                                                   : ("Time in apps", "No counted app ran.")
        lines += ["", heading(title)] + (usage.isEmpty ? [none] : usage)
        if grouping == .selection { lines += topApps(days) }
        if grouping != .user { lines += topSites(days) }
        lines += ["", heading("Blocked time")]
        let blocked = names(\.blocked, in: days)
        if blocked.isEmpty { lines.append("Nothing was blocked.") }
        var smallBlocked: [String] = []
        for name in blocked {
            let values = days.map { $0.blocked[name] }
            if Output.small(values) { smallBlocked.append(name); continue }
            lines += chart(Output.clean(AllowOnly.display(name)), values: values, context,
                           previous: previous?.blocked.map { Double($0[name] ?? 0) })
        }
        lines += small(smallBlocked, charted: smallBlocked.count < blocked.count) { name in days.map { $0.blocked[name] } }
        let count = { (count: UsageHistory.Count) in days.reduce(0) { $0 + $1.count(count) } }
        lines.append("")
        lines.append("Blocks started: \(count(.started)), stopped early: \(count(.stoppedEarly)).")
        lines.append("More time asked: \(count(.asked)), granted: \(count(.granted)), denied: \(count(.denied)).")
        var hits: [String: Int] = [:]
        for day in days { for (name, n) in day.shieldHits { hits[name, default: 0] += n } }
        let total = hits.values.reduce(0, +)
        if total > 0 {
            let each = hits.filter { $0.value > 0 }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                .map { "\(Output.clean(AllowOnly.display($0.key))) \($0.value)" }.joined(separator: ", ")
            lines.append("Shield: \(total) launch\(total == 1 ? "" : "es") denied, app\(total == 1 ? "" : "s") stopped or edit\(total == 1 ? "" : "s") undone (\(each)).")
        }
        return lines.joined(separator: "\n")
    }

    /// For each selection whose apps ran, its chart, with the line of the limit that covers it
    /// alone; then each other limit's own chart (its selections' time together).
    private func bySelection(_ days: [ReportReply.Day], previous: ReportReply.Previous?, _ context: ChartContext,
                             skipping screenLimits: Set<String> = []) -> [String] {
        var lines: [String] = []
        let limits = Set(days.flatMap(\.limits.keys)).subtracting(screenLimits).sorted()
        var drawn: Set<String> = []
        var smallUsed: [String] = []
        let used = names({ $0.used ?? [:] }, in: days)
        for name in used {
            let limit = limits.first { limit in days.contains { Output.limitSelections($0, limit) == [name] } }
            if limit == nil, Output.small(days.map { $0.used?[name] }) { smallUsed.append(name); continue }
            if let limit { drawn.insert(limit) }
            let title = AllowOnly.display(name) + (limit.map { $0 == name ? "" : " (limit \($0))" } ?? "")
            lines += chart(Output.clean(title), values: days.map { $0.used?[name] }, context,
                           previous: previous?.used.map { Double($0[name] ?? 0) },
                           limit: limit.flatMap { Output.allowance(days, $0) })
        }
        for limit in limits where !drawn.contains(limit) {
            lines += chart(Output.clean("limit \(limit)"), values: days.map { $0.limits[limit]?.used }, context,
                           limit: Output.allowance(days, limit))
        }
        return lines + small(smallUsed, charted: smallUsed.count < used.count || !limits.isEmpty) { name in days.map { $0.used?[name] } }
    }

    /// A chart's smallest scale (ReportChart's, 15 min): a selection whose busiest day is
    /// shorter, and that has no limit to draw, is a row of one table instead of a near-empty chart.
    static let chartMinimum = 900

    static func small(_ values: [Int?]) -> Bool { (values.compactMap { $0 }.max() ?? 0) < chartMinimum }

    /// The small selections as one table of totals over the period, biggest first (after the
    /// charts, under "Other selections" when there are some).
    private func small(_ names: [String], charted: Bool, values: (String) -> [Int?]) -> [String] {
        guard !names.isEmpty else { return [] }
        let rows = names.map { name in ReportChart.Row(Output.clean(AllowOnly.display(name)), Double(values(name).compactMap { $0 }.reduce(0, +))) }
            .sorted { $0.seconds != $1.seconds ? $0.seconds > $1.seconds : $0.label < $1.label }
        let head = (charted ? "Other selections, less than " : "Less than ") + "\(ReportChart.figure(Double(Output.chartMinimum))) on every day; totals:"
        return [head] + ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 }
    }

    /// How many apps, and how many sites, the top lists name.
    static let topCount = 5

    /// The apps that ran most over the period, biggest first, each with its total and a bar
    /// scaled to the first.
    private func topApps(_ days: [ReportReply.Day]) -> [String] {
        let top = Output.top(\.apps, in: days)
        guard !top.isEmpty else { return [] }
        let rows = top.map { ReportChart.Row(Output.clean(Output.appName($0.name)), $0.seconds) }
        var focus: [String: Double] = [:]
        for day in days { for (app, s) in day.foreground { focus[app, default: 0] += Double(s) } }
        let focused = top.compactMap { app in focus[app.name].flatMap { $0 >= 30 ? "\(Output.clean(Output.appName(app.name))) \(ReportChart.figure($0))" : nil } }
        return ["", heading("Top apps")] + ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            + (focused.isEmpty ? [] : ["  In focus: " + focused.joined(separator: ", ") + "."])
    }

    /// B2: the sites longest in the focused tab over the period, as the top apps; then how many
    /// more sites there were and their time together, so the list adds up.
    private func topSites(_ days: [ReportReply.Day]) -> [String] {
        let all = Output.top(\.web, in: days, count: nil)
        guard !all.isEmpty else { return [] }
        let top = all.prefix(Output.topCount), rest = all.dropFirst(Output.topCount)
        let rows = top.map { ReportChart.Row(Output.clean($0.name), $0.seconds) }
        let more = rest.isEmpty ? [] : ["  \(rest.count) more site\(rest.count == 1 ? "" : "s"): \(ReportChart.figure(rest.reduce(0) { $0 + $1.seconds }))."]
        return ["", heading("Top sites")] + ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 } + more
    }

    /// The names of `figures` with time over the period, biggest first (ties by name), the
    /// first `count` of them (nil: all).
    static func top(_ figures: KeyPath<ReportReply.Day, ReportReply.Figures>, in days: [ReportReply.Day],
                    count: Int? = topCount) -> [(name: String, seconds: Double)] {
        var totals: [String: Double] = [:]
        for day in days { for (name, s) in day[keyPath: figures] { totals[name, default: 0] += Double(s) } }
        let sorted = totals.filter { $0.value > 0 }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        return sorted.prefix(count ?? sorted.count).map { ($0.key, $0.value) }
    }

    /// What every chart of one report shares.
    struct ChartContext {
        var days: [ReportReply.Day]
        var previousDays: Int?
        var period: String
    }

    /// One chart: `title`, a bar per day of `values` (seconds), `limit` drawn, and the daily
    /// average (against `previous`, the seconds of the period before, when known).
    /// Screen time first, as Screen Time says it: a chart for the person (each person's on the
    /// machine's view); nothing from a daemon that does not count it.
    private func screenTime(_ r: ReportReply, _ c: ChartContext) -> [String] {
        guard r.days.contains(where: { $0.screen != nil }) else { return [] }
        let people = Set(r.days.flatMap { ($0.screen ?? [:]).filter { $0.value > 0 }.keys }).sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }
        guard !people.isEmpty else { return ["", heading("Screen time"), "None was counted (blockd reads logind's sessions)."] }
        var lines = ["", heading("Screen time")]
        // One's own view draws one's screen-time limit; the machine's draws none for a person.
        let limit = r.user == nil ? nil : Output.screenLimits(r.days).first
        for uid in people {
            let title = r.user != nil ? "At the screen" + (limit.map { " (limit \(Output.clean($0)))" } ?? "") : person(Int(uid) ?? -1)
            lines += chart(title, values: r.days.map { $0.screen?[uid] }, c, limit: limit.flatMap { Output.allowance(r.days, $0) })
        }
        return lines
    }

    private func chart(_ title: String, values: [Int?], _ c: ChartContext, previous: Double? = nil, limit: Double? = nil) -> [String] {
        let rows = zip(c.days, values).map { ReportChart.Row(Output.label($0.0), Double($0.1 ?? 0)) }
        let total = rows.reduce(0) { $0 + $1.seconds }
        return [title] + ReportChart.lines(rows, limit: limit, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            + ["  " + ReportChart.summary(total: total, days: rows.count, previous: previous, previousDays: c.previousDays, period: c.period)]
    }

    /// R2: `report --csv`, RFC 4180: a header, then one row per figure of each day, `kind`
    /// `blocked`, `used` (a selection's apps and sites), `app`, `foreground` (an app's time in
    /// focus), `web` (a site's time in the focused tab, B2), `user`
    /// (a person's time in apps), `screen` (a person's time at the screen, by uid), `shieldHits` (how many, per selection), `limit`
    /// (its used seconds) or `allowance` (seconds), or `count` (how many); names with a comma
    /// or a quote are quoted (an allow-only selection's name has commas).
    public func reportCSV(_ o: JSONObject) -> String { reportCSV(ReportReply(o)) }

    public func reportCSV(_ r: ReportReply) -> String {
        var rows = ["date,kind,name,value"]
        for day in r.days {
            let date = Output.clean(day.date)
            let figures: [(String, ReportReply.Figures)] = [("blocked", day.blocked), ("used", day.used ?? [:]), ("app", day.apps), ("foreground", day.foreground),
                                                            ("web", day.web), ("user", day.users), ("screen", day.screen ?? [:]), ("count", day.counts),
                                                            ("shieldHits", day.shieldHits)]
            for (kind, values) in figures {
                for (name, value) in values.sorted(by: { $0.key < $1.key }) {
                    rows.append("\(date),\(kind),\(Output.csvField(Output.clean(name))),\(value)")
                }
            }
            for (name, limit) in day.limits.sorted(by: { $0.key < $1.key }) {
                for (kind, value) in [("limit", limit.used), ("allowance", limit.allowance)] {
                    guard let value else { continue }
                    rows.append("\(date),\(kind),\(Output.csvField(Output.clean(name))),\(value)")
                }
            }
        }
        return rows.joined(separator: "\n")
    }

    static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.flatMap { $0 == "\"" ? "\"\"" : String($0) } + "\""
    }

    /// The names in `figures` on any of the days, sorted.
    private func names(_ figures: (ReportReply.Day) -> ReportReply.Figures, in days: [ReportReply.Day]) -> [String] {
        Set(days.flatMap { figures($0).keys }).sorted()
    }

    static func limitSelections(_ day: ReportReply.Day, _ limit: String) -> [String]? {
        day.limits[limit]?.selections
    }

    /// The allowance most of the days have (more time granted makes some days longer).
    /// The screen-time limits (with `session`) any of `days` has, by name.
    static func screenLimits(_ days: [ReportReply.Day]) -> [String] {
        Set(days.flatMap { $0.limits.filter { $0.value.session != nil }.keys }).sorted()
    }

    static func allowance(_ days: [ReportReply.Day], _ limit: String) -> Double? {
        let all = days.compactMap { $0.limits[limit]?.allowance }
        var seen: [Int: Int] = [:]
        for a in all { seen[a, default: 0] += 1 }
        return seen.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }.map { Double($0.key) }
    }

    /// The number of days of `previous` (`from` to `to`), when the answer has them.
    static func dayCount(_ previous: ReportReply.Previous?) -> Int? {
        guard let from = previous?.from, let to = previous?.to,
              let a = try? CivilDate.parse(from), let b = try? CivilDate.parse(to), b >= a else { return nil }
        return b.dayNumber - a.dayNumber + 1
    }

    /// `firefox` for `/usr/lib/firefox-esr/firefox`.
    static func appName(_ app: String) -> String { app.split(separator: "/").last.map(String.init) ?? app }

    /// What "the … before" says: the calendar week or month the answer covers, else its days.
    private func periodName(_ r: ReportReply, days: Int) -> String {
        switch r.period {
        case .known(.week)?: return "week"
        case .known(.month)?: return "month"
        case .known(.days)?, .unknown?, nil: return days == 7 ? "week" : days == 1 ? "day" : "\(days) days"
        }
    }

    /// The heading's days with their month and year (`Mon 23 Nov to Sun 29 Nov 2026`, as the
    /// HTML page's), so that a month, or a week or day asked for by date, says which it is;
    /// `Mon 23 to Sun 29` from an answer whose dates do not parse.
    static func period(_ first: ReportReply.Day, _ last: ReportReply.Day) -> String {
        if let a = try? CivilDate.parse(first.date), let b = try? CivilDate.parse(last.date), a <= b { return ReportChart.period(a, b) }
        return first.date == last.date ? label(first) : "\(label(first)) to \(label(last))"
    }

    /// `Mon 23`.
    private static func label(_ day: ReportReply.Day) -> String {
        "\(Output.clean(day.weekday).capitalized) \(Output.clean(day.date).suffix(2))"
    }
}
