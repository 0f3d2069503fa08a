import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Human output for `blockc` (§6): pure functions from the daemon's response objects
/// (the shapes built in Engine+Requests.swift and Shapes.swift) to text. The time, the zone
/// and whether to colour are parameters, so tests pin all three.
///
/// Every string that came from the daemon goes through `clean` before it is printed: names and
/// messages can carry text a user typed (an ad-hoc domain, a block name, a config file's
/// contents), and an escape sequence in them must not reach the terminal.
public struct Output: Sendable {
    public var now: Date
    public var clock: LocalClock
    public var color: Bool
    /// A uid's user name (per-user `watch` events carry uids): the system's user database
    /// unless a test gives its own.
    public var userName: @Sendable (Int) -> String? = Output.systemUserName
    /// R2: how wide a chart may be (`COLUMNS`, else 80), and whether to draw bars with `#`
    /// (a locale without UTF-8).
    public var columns = 80
    public var ascii = false

    public init(now: Date, clock: LocalClock, color: Bool) {
        self.now = now
        self.clock = clock
        self.color = color
    }

    // MARK: Untrusted text

    /// Removes C0/C1 control characters (ESC and CSI start every terminal escape) and the
    /// bidirectional overrides that can make text read differently than it is; tabs and line
    /// breaks become spaces so that one record stays on one line.
    public static func clean(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: out.append(" ")
            case 0x00..<0x20, 0x7F, 0x80...0x9F: continue
            case 0x202A...0x202E, 0x2066...0x2069: continue
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    /// A string member of a daemon object, cleaned; "" when absent or not a string.
    func text(_ value: JSON?) -> String { Output.clean(value?.string ?? "") }

    // MARK: Colour (only when the caller says so: a TTY and no NO_COLOR)

    enum Style: String {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", cyan = "36"
    }

    func paint(_ text: String, _ style: Style?) -> String {
        guard color, let style, !text.isEmpty else { return text }
        return "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m"
    }

    func heading(_ text: String) -> String { paint(text, .bold) }

    // MARK: Times (T3: a time that is not today always carries its date)

    /// An instant from the daemon (ISO 8601 with offset); nil when absent or unreadable.
    func instant(_ value: JSON?) -> Date? {
        guard let s = value?.string else { return nil }
        return try? TimeText.parseISO8601(s, clock: clock)
    }

    /// An instant the daemon wrote as text; nil when absent or unreadable.
    func instant(_ text: String?) -> Date? { instant(text.map(JSON.string)) }

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `13:35` today, `Mon 30 Nov 07:00` on another day, `Mon 30 Nov 2027 07:00` in another year.
    public func time(_ date: Date) -> String {
        let c = clock.civil(of: date)
        let hm = "\(twoDigits(c.secondsOfDay / 3600)):\(twoDigits(c.secondsOfDay / 60 % 60))"
        let today = clock.civil(of: now).date
        if c.date == today { return hm }
        let weekday = c.date.weekday.description.capitalized
        let year = c.date.year == today.year ? "" : " \(c.date.year)"
        return "\(weekday) \(c.date.day) \(Output.monthNames[c.date.month - 1])\(year) \(hm)"
    }

    /// `until 13:35 (29m left)`. One rounding rule for both numbers: times are shown to the
    /// minute, and the time left is what those minutes say (at 18:48:35, an end at 18:52:40 is
    /// "until 18:52 (4m left)", never "5m left"); under a minute it is in seconds, rounded up,
    /// so it never reads "0s left" while anything remains.
    public func until(_ date: Date) -> String {
        date > now ? "until \(time(date)) (\(Output.between(now, date)) left)" : "until \(time(date)) (ended)"
    }

    /// `at 22:00 (in 8h55m)`, for instants that begin something (the same rule as `until`).
    public func at(_ date: Date) -> String {
        date > now ? "at \(time(date)) (in \(Output.between(now, date)))" : "at \(time(date))"
    }

    /// The time from `now` to `later` as the two minute readings of the clock show it: whole
    /// minutes up to a day (`4m`, `8h55m`), seconds under a minute (`35s`, rounded up), and
    /// days and hours beyond a day (`2d3h`, rounded up, as the date is shown then too).
    static func between(_ now: Date, _ later: Date) -> String {
        let left = later.timeIntervalSince(now)
        guard left >= 60, left < 86_400 else { return DurationText.formatRemaining(left) }
        return DurationText.format(DurationText.minutesShown(from: now, to: later) * 60)
    }

    /// The `until` text of a JSON instant; a null end means no end is known (a limit that lasts
    /// until the day ends is still reported with its end; null is defensive).
    func until(_ value: JSON?) -> String {
        instant(value).map { until($0) } ?? "with no end set"
    }

    func until(_ text: String?) -> String { until(text.map(JSON.string)) }

    // MARK: Tables (§6: aligned)

    struct Cell {
        var text: String
        var style: Style?
        init(_ text: String, _ style: Style? = nil) {
            self.text = text
            self.style = style
        }
    }

    /// Pads every column to its widest cell. Widths are counted on the plain text, before
    /// colour is added, so that escapes never skew the alignment.
    func table(_ rows: [[Cell]], indent: String = "  ") -> [String] {
        var widths: [Int] = []
        for row in rows {
            for (i, cell) in row.enumerated() {
                if i == widths.count { widths.append(0) }
                widths[i] = max(widths[i], cell.text.count)
            }
        }
        return rows.map { row in
            // Trailing empty cells are not padded, so no line ends in spaces.
            guard let last = row.lastIndex(where: { !$0.text.isEmpty }) else { return "" }
            var line = indent
            // A column that is empty on every row (no schedule among blocks) takes no space.
            for i in 0...last where widths[i] > 0 {
                line += paint(row[i].text, row[i].style)
                if i < last { line += String(repeating: " ", count: widths[i] - row[i].text.count + 2) }
            }
            return line
        }
    }

    func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    private func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
