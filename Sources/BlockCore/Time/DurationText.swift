import FoundationEssentials

/// DURATION as users write it: `90s`, `25m`, `1h30m`, `2d` (§6).
///
/// T1: any whole number of seconds from 1 s to 366 days is accepted, exactly as written;
/// nothing is rounded up to a minimum window.
public enum DurationText {
    public static let minimum = 1
    public static let maximum = 366 * 86_400

    static let units: [(Character, Int)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

    /// Whole seconds. Units must appear at most once each, largest first (`1h30m`, not `30m1h`).
    public static func parse(_ text: String) throws(CoreError) -> Int {
        func fail(_ why: String) -> CoreError {
            CoreError(.invalidDuration, "'\(text)' is not a duration: \(why); write e.g. 90s, 25m, 1h30m or 2d")
        }
        let t = text.lowercased()
        guard !t.isEmpty else { throw fail("it is empty") }
        var total = 0
        var digits = ""
        var lastUnitIndex = -1
        for ch in t {
            if ch.isASCII && ch.isNumber {
                digits.append(ch)
                guard digits.count <= 9 else { throw fail("the number is too large") }
                continue
            }
            guard let unitIndex = units.firstIndex(where: { $0.0 == ch }) else {
                throw fail("'\(ch)' is not a unit (s, m, h, d)")
            }
            guard !digits.isEmpty else { throw fail("'\(ch)' has no number before it") }
            guard unitIndex > lastUnitIndex else { throw fail("units must go from largest to smallest, each once") }
            total += Int(digits)! * units[unitIndex].1
            lastUnitIndex = unitIndex
            digits = ""
        }
        guard digits.isEmpty else { throw fail("'\(digits)' has no unit; add one, e.g. \(digits)m or \(digits)s") }
        guard total >= minimum else { throw fail("it must be at least 1s") }
        guard total <= maximum else { throw fail("it must be at most 366d") }
        return total
    }

    /// The inverse of `parse` for whole seconds: 5400 → `1h30m`, 0 → `0s`.
    public static func format(_ seconds: Int) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds
        var out = ""
        for (unit, size) in units where rest >= size {
            out += "\(rest / size)\(unit)"
            rest %= size
        }
        return out
    }

    /// The minutes between two instants as their clock times show them, to the minute (18:48:35
    /// to 18:52:40 is 4): the one rounding rule for an end time and the time left beside it
    /// (blockc's `until`, the agent's notifications).
    public static func minutesShown(from now: Date, to later: Date) -> Int {
        Int((later.timeIntervalSince1970 / 60).rounded(.down)) - Int((now.timeIntervalSince1970 / 60).rounded(.down))
    }

    /// A coarse remaining time for people: at most two units, rounded up so that "1m left"
    /// is never shown when a minute and a half remains (`1h29m`, `2d3h`, `45s`).
    public static func formatRemaining(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(max(s, 0))s" }
        if s < 3600 { return "\((s + 59) / 60)m" }
        if s < 86_400 {
            let m = (s + 59) / 60
            return m % 60 == 0 ? "\(m / 60)h" : "\(m / 60)h\(m % 60)m"
        }
        let h = (s + 3599) / 3600
        return h % 24 == 0 ? "\(h / 24)d" : "\(h / 24)d\(h % 24)h"
    }
}
