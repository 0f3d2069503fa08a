import FoundationEssentials

extension ReportHTML {
    /// The report answer (schema 1) as the page reads it: every field optional, a missing
    /// figure counts as none.
    struct Report {
        var days: [JSONObject]
        /// The viewed uid; nil: the whole machine.
        var user: Int?
        var previous: JSONObject?

        init(_ o: JSONObject) {
            days = (o["days"]?.array ?? []).compactMap(\.object)
            user = o["user"]?.int
            previous = o["previous"]?.object
        }

        /// The names under `key` on any day, sorted.
        func names(_ key: String) -> [String] {
            Set(days.flatMap { $0[key]?.object?.keys ?? [] }).sorted()
        }

        func hasKey(_ key: String) -> Bool { days.contains { $0[key]?.object != nil } }

        /// Whether the daemon reports each selection's app time (`used`); older answers do not.
        var hasUsed: Bool { hasKey("used") }

        func seconds(_ key: String, _ name: String, on day: JSONObject) -> Double {
            day[key]?[name]?.double ?? 0
        }

        func total(_ key: String, _ name: String) -> Double {
            days.reduce(0) { $0 + seconds(key, name, on: $1) }
        }

        /// The names under `key` with time over the period, biggest first (ties by name).
        func ranked(_ key: String) -> [(name: String, seconds: Double)] {
            let totals: [(name: String, seconds: Double)] = names(key).map { ($0, total(key, $0)) }
            return totals.filter { $0.seconds > 0 }.sorted { a, b in
                a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name
            }
        }

        func count(_ key: String) -> Int {
            days.reduce(0) { $0 + ($1["counts"]?[key]?.int ?? 0) }
        }

        /// The seconds of `name` under `key` in the period before (`previous.blocked`,
        /// `previous.used`); nil when the answer has no such figures for that period.
        func previous(_ key: String, _ name: String) -> Double? {
            guard let figures = previous?[key]?.object else { return nil }
            return figures[name]?.double ?? 0
        }

        /// The limits that count `selection`'s time: for each, its allowance on each day (nil
        /// where it does not apply that day).
        func limits(for selection: String) -> [WeekChart.Limit] {
            let names = Set(days.flatMap { day in
                (day["limits"]?.object ?? [:]).filter { entry in
                    entry.value["selections"]?.array?.contains(.string(selection)) == true
                }.map(\.key)
            }).sorted()
            return names.map { name in
                WeekChart.Limit(name: name, allowances: days.map { $0["limits"]?[name]?["allowance"]?.double })
            }
        }

        /// `week` for 7 days, else `N days`: the period the averages compare against.
        var periodWord: String { days.count == 7 ? "week" : "\(days.count) days" }

        /// `Mon 23 Nov to Sun 29 Nov 2026`.
        var periodText: String {
            guard let first = days.first, let last = days.last else { return "" }
            let (a, b) = (Report.date(first), Report.date(last))
            guard let a, let b else { return "\(first["date"]?.string ?? "") to \(last["date"]?.string ?? "")" }
            if a == b { return Report.dayText(a) + " \(a.year)" }
            let start = Report.dayText(a) + (a.year == b.year ? "" : " \(a.year)")
            return "\(start) to \(Report.dayText(b)) \(b.year)"
        }

        static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

        static func date(_ day: JSONObject) -> CivilDate? {
            day["date"]?.string.flatMap { try? CivilDate.parse($0) }
        }

        /// `Mon 23 Nov`.
        static func dayText(_ d: CivilDate) -> String {
            "\(d.weekday.description.prefix(1).uppercased())\(d.weekday.description.dropFirst()) \(d.day) \(months[d.month - 1])"
        }
    }
}
