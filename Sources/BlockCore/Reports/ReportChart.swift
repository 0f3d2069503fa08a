import FoundationEssentials

/// R2: the terminal view of a report, pure: per-day bars in Unicode eighth blocks scaled to the
/// width the terminal gives, the limit drawn where one exists, the daily average and the change
/// against the previous period, like `vnstat -d` or GNOME's wellbeing panel. Colour is the
/// caller's (none when not a terminal); `ascii` draws with `#` for a terminal without UTF-8.
public enum ReportChart {
    /// One bar: a label (`Mon 23`), its seconds, and the label of its figure.
    public struct Row: Equatable, Sendable {
        public var label: String
        public var seconds: Double
        public init(_ label: String, _ seconds: Double) { (self.label, self.seconds) = (label, seconds) }
    }

    /// Eighths of a cell, U+258F (one eighth) to U+2588 (full).
    static let eighths: [Character] = ["▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"]

    /// A bar of `value` on a scale where `scale` fills `width` cells, to the nearest eighth of a
    /// cell; a value above nothing shows at least one eighth, so a minute is never drawn as none.
    public static func bar(_ value: Double, scale: Double, width: Int, ascii: Bool = false) -> String {
        guard value > 0, scale > 0, width > 0 else { return "" }
        let units = max(1, min(width * 8, Int((value / scale * Double(width * 8)).rounded())))
        if ascii { return String(repeating: "#", count: max(1, (units + 4) / 8)) }
        var out = String(repeating: "█", count: units / 8)
        if units % 8 > 0 { out.append(eighths[units % 8 - 1]) }
        return out
    }

    /// The rows as lines of at most `columns` characters: label, bar, figure; with `limit`, a
    /// `│` in every row at the limit's column (over the bar where the bar goes past it) and a
    /// last line naming it (`└ limit 1 h`, or `limit 1 h ┘` where the name would not fit after). The scale is the largest of the longest bar, the limit and `minimumScale`.
    /// A label too long for the columns (a site's name may be 253 characters) is cut to leave
    /// the bar `minimumWidth` cells, ending in `…` (`~` without UTF-8). Seconds below nothing,
    /// which no daemon sends but a lenient reader may get, are nothing, and a limit of nothing
    /// or less is not drawn: a bar is never negative nor wider than its cells.
    /// The least a chart's full width stands for: 15 minutes, so that a day of 20 seconds is a
    /// sliver, never a full-width bar labelled "<1 min".
    public static let minimumScale: Double = 15 * 60

    public static func lines(_ rows: [Row], limit: Double? = nil, columns: Int, ascii: Bool = false) -> [String] {
        let rows = rows.map { Row($0.label, max(0, $0.seconds)) }
        let limit = limit.flatMap { $0 > 0 ? $0 : nil }
        let figures = rows.map { figure($0.seconds) }
        let figureWidth = figures.map(\.count).max() ?? 0
        let labelWidth = min(rows.map(\.label.count).max() ?? 0, max(1, columns - figureWidth - 3 - minimumWidth))
        let width = max(minimumWidth, columns - labelWidth - figureWidth - 3)
        let scale = max(rows.map(\.seconds).max() ?? 0, limit ?? 0, minimumScale)
        let mark: Int? = limit.flatMap { scale > 0 ? min(width - 1, Int(($0 / scale * Double(width)).rounded(.down))) : nil }
        var out: [String] = []
        for (row, text) in zip(rows, figures) {
            var cells = Array(bar(row.seconds, scale: scale, width: width, ascii: ascii))
            cells += Array(repeating: " ", count: width - cells.count)
            if let mark { cells[mark] = ascii ? "|" : "│" }
            out.append(pad(cut(row.label, labelWidth, ascii: ascii), labelWidth) + " " + String(cells) + " " + pad(text, figureWidth, left: true))
        }
        if let limit, let mark {
            // Under the line, named to its right; to its left where that would pass the columns
            // (a limit near the right edge, with short figures).
            let name = "limit \(figure(limit))", at = labelWidth + 1 + mark
            if at + 2 + name.count <= columns {
                out.append(String(repeating: " ", count: at) + (ascii ? "^" : "└") + " " + name)
            } else {
                out.append(String(repeating: " ", count: max(0, at - name.count - 1)) + name + " " + (ascii ? "^" : "┘"))
            }
        }
        return out
    }

    /// The fewest cells a bar is given, however long the labels.
    static let minimumWidth = 10

    /// `label` in at most `width` characters: cut, with `…` (`~`) as its last.
    static func cut(_ label: String, _ width: Int, ascii: Bool) -> String {
        guard label.count > width else { return label }
        return String(label.prefix(max(0, width - 1))) + (ascii ? "~" : "…")
    }

    /// `1 h 25 min`, `40 min`, `0 min`, to the nearest minute; some time that rounds to none
    /// reads `<1 min`, so a bar that shows is never labelled nothing.
    public static func figure(_ seconds: Double) -> String {
        let seconds = max(0, seconds)
        let minutes = Int((seconds / 60).rounded())
        if minutes == 0, seconds > 0 { return "<1 min" }
        if minutes < 60 { return "\(minutes) min" }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    /// The summary under a chart: the daily average over `days` days, and against the previous
    /// period's average when there is one (`previous`, nil: no data for it; over
    /// `previousDays`, when not as many days).
    public static func summary(total: Double, days: Int, previous: Double?, previousDays: Int? = nil, period: String) -> String {
        let average = total / Double(max(days, 1))
        var out = "Average \(figure(average)) a day"
        if let previous {
            let before = previous / Double(max(previousDays ?? days, 1))
            let change = average - before
            if abs(change) < 30 {
                out += ", about the same as the \(period) before"
            } else {
                out += ", \(figure(abs(change))) \(change < 0 ? "less" : "more") than the \(period) before"
            }
        }
        return out + "."
    }

    /// The days from `first` to `last` as a heading says them: `Mon 23 Nov to Sun 29 Nov 2026`,
    /// `Sun 29 Nov 2026` for one day, the first day's year too when the two years differ.
    public static func period(_ first: CivilDate, _ last: CivilDate) -> String {
        if first == last { return dayText(first) + " \(first.year)" }
        let start = dayText(first) + (first.year == last.year ? "" : " \(first.year)")
        return "\(start) to \(dayText(last)) \(last.year)"
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Mon 23 Nov`.
    public static func dayText(_ d: CivilDate) -> String {
        "\(d.weekday.description.prefix(1).uppercased())\(d.weekday.description.dropFirst()) \(d.day) \(months[d.month - 1])"
    }

    static func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - s.count))
        return left ? fill + s : s + fill
    }
}
