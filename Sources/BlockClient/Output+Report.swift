import BlockCore

/// R2: `blockc report` for people: for each selection blocked in the period, a bar per day
/// (ReportChart) and the average against the period before; the same for each app's running
/// time; then the blocks and more time.
extension Output {
    public func report(_ o: JSONObject) -> String {
        let days = (o["days"]?.array ?? []).compactMap(\.object)
        guard let first = days.first, let last = days.last else { return "No days in the report." }
        let whose = o["user"]?.int.map { uid in "for \(userName(Int(uid)) ?? "uid \(uid)")" } ?? "for the whole machine"
        var lines = [heading("Blocked time, \(label(first)) to \(label(last)) \(whose)")]
        let blocked = names("blocked", in: days), previous = o["previous"]?["blocked"]?.object
        if blocked.isEmpty { lines.append("Nothing was blocked.") }
        for name in blocked {
            lines.append("")
            lines += chart(AllowOnly.display(name), name, "blocked", days, previous: previous.map { Double($0[name]?.int ?? 0) })
        }
        let apps = names("apps", in: days)
        if !apps.isEmpty { lines += ["", heading("Time in apps")] }
        for app in apps { lines += chart(app, app, "apps", days, previous: nil) }
        var counts: [String: Int] = [:]
        for day in days { for (k, v) in day["counts"]?.object ?? [:] { counts[k, default: 0] += Int(v.int ?? 0) } }
        lines.append("")
        lines.append("Blocks started: \(counts["started"] ?? 0), stopped early: \(counts["stoppedEarly"] ?? 0).")
        lines.append("More time asked: \(counts["asked"] ?? 0), granted: \(counts["granted"] ?? 0), denied: \(counts["denied"] ?? 0).")
        return lines.joined(separator: "\n")
    }

    /// R2: `report --csv`, RFC 4180: a header, then one row per figure of each day, `kind`
    /// `blocked` or `app` (seconds) or `count` (how many); names with a comma or a quote are
    /// quoted (an allow-only selection's name has commas).
    public func reportCSV(_ o: JSONObject) -> String {
        var rows = ["date,kind,name,value"]
        for day in (o["days"]?.array ?? []).compactMap(\.object) {
            let date = text(day["date"])
            for (kind, key) in [("blocked", "blocked"), ("app", "apps"), ("count", "counts")] {
                for (name, value) in (day[key]?.object ?? [:]).sorted(by: { $0.key < $1.key }) {
                    rows.append("\(date),\(kind),\(Output.csvField(Output.clean(name))),\(value.int ?? 0)")
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

    /// One chart: `title`, a bar per day of `name`'s seconds under `key`, and the average
    /// (against `previous`, the seconds of as many days before, when known).
    private func chart(_ title: String, _ name: String, _ key: String, _ days: [JSONObject], previous: Double?) -> [String] {
        let rows = days.map { ReportChart.Row(label($0), Double($0[key]?[name]?.int ?? 0)) }
        let period = days.count == 7 ? "week" : "\(days.count) days"
        return [Output.clean(title)] + ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            + ["  " + ReportChart.summary(total: rows.reduce(0) { $0 + $1.seconds }, days: days.count, previous: previous, period: period)]
    }

    /// `Mon 23`.
    private func label(_ day: JSONObject) -> String {
        let date = text(day["date"])
        return "\(text(day["weekday"]).capitalized) \(date.suffix(2))"
    }
}
