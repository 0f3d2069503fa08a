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
        var names = Set<String>()
        for day in days { names.formUnion(day["blocked"]?.object?.keys ?? []) }
        let previous = o["previous"]?["blocked"]?.object
        if names.isEmpty { lines.append("Nothing was blocked.") }
        for name in names.sorted() {
            let rows = days.map { ReportChart.Row(label($0), Double($0["blocked"]?[name]?.int ?? 0)) }
            lines.append("")
            lines.append(Output.clean(AllowOnly.display(name)))
            lines += ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            let total = rows.reduce(0) { $0 + $1.seconds }
            let before = previous.map { Double($0[name]?.int ?? 0) }
            lines.append("  " + ReportChart.summary(total: total, days: days.count, previous: before, period: days.count == 7 ? "week" : "\(days.count) days"))
        }
        var apps = Set<String>()
        for day in days { apps.formUnion(day["apps"]?.object?.keys ?? []) }
        if !apps.isEmpty {
            lines.append("")
            lines.append(heading("Time in apps"))
        }
        for app in apps.sorted() {
            let rows = days.map { ReportChart.Row(label($0), Double($0["apps"]?[app]?.int ?? 0)) }
            lines.append(Output.clean(app))
            lines += ReportChart.lines(rows, columns: columns - 2, ascii: ascii).map { "  " + $0 }
            lines.append("  " + ReportChart.summary(total: rows.reduce(0) { $0 + $1.seconds }, days: days.count, previous: nil, period: ""))
        }
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

    /// `Mon 23`.
    private func label(_ day: JSONObject) -> String {
        let date = text(day["date"])
        return "\(text(day["weekday"]).capitalized) \(date.suffix(2))"
    }
}
