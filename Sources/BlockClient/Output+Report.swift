import BlockCore

/// R2: how `blockc report` groups its charts: by selection (the time in each selection's apps,
/// its limit drawn, then the top apps), by app (a chart per app) or by user (a chart per
/// person, for the whole machine's view).
public enum ReportGrouping: String, CaseIterable, Equatable, Sendable {
    case selection, app, user
}

/// R2: `blockc report` for people: the time in apps as a bar per day (ReportChart) with the
/// limit drawn where one exists and the average against the period before; the top apps; the
/// time each selection was blocked; then the blocks and more time.
extension Output {
    public func report(_ o: JSONObject, by grouping: ReportGrouping = .selection) -> String {
        let days = (o["days"]?.array ?? []).compactMap(\.object)
        guard let first = days.first, let last = days.last else { return "No days in the report." }
        let whose = o["user"]?.int.map { uid in "for \(person(Int(uid)))" } ?? "for the whole machine"
        let period = first["date"] == last["date"] ? label(first) : "\(label(first)) to \(label(last))"
        var lines = [heading("Report, \(period) \(whose)")]
        let previous = o["previous"]?.object
        let context = ChartContext(days: days, previousDays: Output.dayCount(previous), period: periodName(o, days: days.count))
        var usage: [String] = []
        switch grouping {
        case .selection: usage = bySelection(days, previous: previous, context)
        case .app:
            for app in names("apps", in: days) { usage += chart(Output.clean(app), values: days.map { $0["apps"]?[app]?.int }, context) }
        case .user:
            for uid in names("users", in: days) {
                usage += chart(person(Int(uid) ?? -1), values: days.map { $0["users"]?[uid]?.int }, context)
            }
        }
        lines += ["", heading("Time in apps")] + (usage.isEmpty ? ["No counted app ran."] : usage)
        if grouping == .selection { lines += topApps(days) }
        lines += ["", heading("Blocked time")]
        let blocked = names("blocked", in: days)
        if blocked.isEmpty { lines.append("Nothing was blocked.") }
        for name in blocked {
            lines += chart(Output.clean(AllowOnly.display(name)), values: days.map { $0["blocked"]?[name]?.int }, context,
                           previous: previous?["blocked"]?.object.map { Double($0[name]?.int ?? 0) })
        }
        var counts: [String: Int] = [:]
        for day in days { for (k, v) in day["counts"]?.object ?? [:] { counts[k, default: 0] += Int(v.int ?? 0) } }
        lines.append("")
        lines.append("Blocks started: \(counts["started"] ?? 0), stopped early: \(counts["stoppedEarly"] ?? 0).")
        lines.append("More time asked: \(counts["asked"] ?? 0), granted: \(counts["granted"] ?? 0), denied: \(counts["denied"] ?? 0).")
        var hits: [String: Int] = [:]
        for day in days { for (name, n) in day["shieldHits"]?.object ?? [:] { hits[name, default: 0] += Int(n.int ?? 0) } }
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
    private func bySelection(_ days: [JSONObject], previous: JSONObject?, _ context: ChartContext) -> [String] {
        var lines: [String] = []
        let limits = names("limits", in: days)
        var drawn: Set<String> = []
        for name in names("used", in: days) {
            let limit = limits.first { limit in days.contains { Output.limitSelections($0, limit) == [name] } }
            if let limit { drawn.insert(limit) }
            let title = AllowOnly.display(name) + (limit.map { $0 == name ? "" : " (limit \($0))" } ?? "")
            lines += chart(Output.clean(title), values: days.map { $0["used"]?[name]?.int }, context,
                           previous: previous?["used"]?.object.map { Double($0[name]?.int ?? 0) },
                           limit: limit.flatMap { Output.allowance(days, $0) })
        }
        for limit in limits where !drawn.contains(limit) {
            lines += chart(Output.clean("limit \(limit)"), values: days.map { $0["limits"]?[limit]?["used"]?.int }, context,
                           limit: Output.allowance(days, limit))
        }
        return lines
    }

    /// The apps that ran most over the period, biggest first, each with its total and a bar
    /// scaled to the first.
    private func topApps(_ days: [JSONObject], count: Int = 5) -> [String] {
        var totals: [String: Double] = [:]
        for day in days { for (app, s) in day["apps"]?.object ?? [:] { totals[app, default: 0] += Double(s.int ?? 0) } }
        let top = totals.filter { $0.value > 0 }.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(count)
        guard !top.isEmpty else { return [] }
        let rows = top.map { ReportChart.Row(Output.clean(Output.appName($0.key)), $0.value) }
        var focus: [String: Double] = [:]
        for day in days { for (app, s) in day["foreground"]?.object ?? [:] { focus[app, default: 0] += Double(s.int ?? 0) } }
        let focused = top.compactMap { app in focus[app.key].flatMap { $0 >= 30 ? "\(Output.clean(Output.appName(app.key))) \(ReportChart.figure($0))" : nil } }
        return ["", heading("Top apps")] + ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            + (focused.isEmpty ? [] : ["  In focus: " + focused.joined(separator: ", ") + "."])
    }

    /// What every chart of one report shares.
    struct ChartContext {
        var days: [JSONObject]
        var previousDays: Int?
        var period: String
    }

    /// One chart: `title`, a bar per day of `values` (seconds), `limit` drawn, and the daily
    /// average (against `previous`, the seconds of the period before, when known).
    private func chart(_ title: String, values: [Int?], _ c: ChartContext, previous: Double? = nil, limit: Double? = nil) -> [String] {
        let rows = zip(c.days, values).map { ReportChart.Row(label($0.0), Double($0.1 ?? 0)) }
        let total = rows.reduce(0) { $0 + $1.seconds }
        return [title] + ReportChart.lines(rows, limit: limit, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            + ["  " + ReportChart.summary(total: total, days: rows.count, previous: previous, previousDays: c.previousDays, period: c.period)]
    }

    /// R2: `report --csv`, RFC 4180: a header, then one row per figure of each day, `kind`
    /// `blocked`, `used` (a selection's apps), `app`, `foreground` (an app's time in focus), `user`
    /// (a person's time in apps), `shieldHits` (how many, per selection), `limit`
    /// (its used seconds) or `allowance` (seconds), or `count` (how many); names with a comma
    /// or a quote are quoted (an allow-only selection's name has commas).
    public func reportCSV(_ o: JSONObject) -> String {
        var rows = ["date,kind,name,value"]
        for day in (o["days"]?.array ?? []).compactMap(\.object) {
            let date = text(day["date"])
            for (kind, key) in [("blocked", "blocked"), ("used", "used"), ("app", "apps"), ("foreground", "foreground"), ("user", "users"),
                                ("count", "counts"), ("shieldHits", "shieldHits")] {
                for (name, value) in (day[key]?.object ?? [:]).sorted(by: { $0.key < $1.key }) {
                    rows.append("\(date),\(kind),\(Output.csvField(Output.clean(name))),\(value.int ?? 0)")
                }
            }
            for (name, limit) in (day["limits"]?.object ?? [:]).sorted(by: { $0.key < $1.key }) {
                for kind in ["used", "allowance"] {
                    guard let value = limit[kind]?.int else { continue }
                    rows.append("\(date),\(kind == "used" ? "limit" : kind),\(Output.csvField(Output.clean(name))),\(value)")
                }
            }
        }
        return rows.joined(separator: "\n")
    }

    static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.flatMap { $0 == "\"" ? "\"\"" : String($0) } + "\""
    }

    /// The names under `key` on any of the days, sorted.
    private func names(_ key: String, in days: [JSONObject]) -> [String] {
        Set(days.flatMap { $0[key]?.object?.keys ?? [] }).sorted()
    }

    static func limitSelections(_ day: JSONObject, _ limit: String) -> [String]? {
        day["limits"]?[limit]?["selections"]?.array?.compactMap(\.string)
    }

    /// The allowance most of the days have (more time granted makes some days longer).
    static func allowance(_ days: [JSONObject], _ limit: String) -> Double? {
        let all = days.compactMap { $0["limits"]?[limit]?["allowance"]?.int }
        var seen: [Int: Int] = [:]
        for a in all { seen[a, default: 0] += 1 }
        return seen.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }.map { Double($0.key) }
    }

    /// The number of days of `previous` (`from` to `to`), when the answer has them.
    static func dayCount(_ previous: JSONObject?) -> Int? {
        guard let from = previous?["from"]?.string, let to = previous?["to"]?.string,
              let a = try? CivilDate.parse(from), let b = try? CivilDate.parse(to), b >= a else { return nil }
        return b.dayNumber - a.dayNumber + 1
    }

    /// `firefox` for `/usr/lib/firefox-esr/firefox`.
    static func appName(_ app: String) -> String { app.split(separator: "/").last.map(String.init) ?? app }

    /// What "the … before" says: the calendar week or month the answer covers, else its days.
    private func periodName(_ o: JSONObject, days: Int) -> String {
        if let period = o["period"]?.string, period == "week" || period == "month" { return period }
        return days == 7 ? "week" : days == 1 ? "day" : "\(days) days"
    }

    /// `Mon 23`.
    private func label(_ day: JSONObject) -> String {
        let date = text(day["date"])
        return "\(text(day["weekday"]).capitalized) \(date.suffix(2))"
    }
}
