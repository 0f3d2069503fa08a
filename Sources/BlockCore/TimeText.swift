import Foundation

/// TIME as users write it (DESIGN §6): `HH:MM`, the next occurrence strictly after now in
/// local time (T3: `00:05` at 23:58 is seven minutes away), or an ISO 8601 date-time
/// (`2026-11-29T22:00`, with optional seconds and an optional `Z`/`±HH:MM` offset; without an
/// offset it is local wall time).
public enum TimeText {
    public static func parse(_ text: String, now: Date, clock: LocalClock) throws(CoreError) -> Date {
        if text.count <= 5, text.contains(":") {
            let time = try WallTime.parse(text)
            let today = clock.civil(of: now).date
            // Today (either occurrence on a fall-back night), tomorrow, or the day after.
            for days in 0...2 {
                for s in clock.occurrences(today.adding(days: days), secondsOfDay: time.secondsOfDay) {
                    let candidate = Date(timeIntervalSince1970: TimeInterval(s))
                    if candidate > now { return candidate }
                }
            }
            throw CoreError(.internal, "no occurrence of \(text) found after now")
        }
        return try parseISO8601(text, clock: clock)
    }

    /// ISO 8601 that must carry `Z` or an offset: the wire form, where "local" would mean the
    /// daemon's zone rather than the user's.
    public static func parseISO8601WithOffset(_ text: String) throws(CoreError) -> Date {
        let utc = LocalClock(TimeZone(identifier: "UTC")!)
        let date = try parseISO8601(text, clock: utc)
        guard let t = text.firstIndex(where: { $0 == "T" || $0 == "t" || $0 == " " }),
              text[t...].contains(where: { "Zz+-".contains($0) }) else {
            throw CoreError(.invalidTime, "'\(text)' has no UTC offset; send e.g. 2026-11-29T22:00:00+09:00 or 2026-11-29T13:00:00Z")
        }
        return date
    }

    public static func parseISO8601(_ text: String, clock: LocalClock) throws(CoreError) -> Date {
        func fail() -> CoreError {
            CoreError(.invalidTime, "'\(text)' is not a time: write HH:MM or an ISO 8601 date-time such as 2026-11-29T22:00 or 2026-11-29T22:00:00+09:00")
        }
        let chars = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int? {
            guard i + count <= chars.count else { return nil }
            var v = 0
            for k in i..<(i + count) {
                let c = chars[k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += count
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < chars.count, chars[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = number(4), expect(45), let mo = number(2), expect(45), let d = number(2) else { throw fail() }
        guard i < chars.count, chars[i] == 84 || chars[i] == 116 || chars[i] == 32 else { throw fail() }  // T, t, space
        i += 1
        guard let h = number(2), expect(58), let mi = number(2) else { throw fail() }
        var sec = 0
        var fraction = 0.0
        if expect(58) {
            guard let s = number(2) else { throw fail() }
            sec = s
            if expect(46) {  // RFC 3339 §5.6 time-secfrac
                var scale = 0.1
                let digitsStart = i
                while i < chars.count, chars[i] >= 48, chars[i] <= 57, i - digitsStart < 9 {
                    fraction += Double(chars[i] - 48) * scale
                    scale /= 10
                    i += 1
                }
                guard i > digitsStart else { throw fail() }
            }
        }
        let date = CivilDate(year: y, month: mo, day: d)
        guard date.isValid, h <= 23, mi <= 59, sec <= 59 else {
            throw CoreError(.invalidTime, "'\(text)' is not a valid date and time")
        }
        let sod = h * 3600 + mi * 60 + sec
        if i == chars.count {
            return clock.instant(date, secondsOfDay: sod).addingTimeInterval(fraction)
        }
        var offset = 0
        if chars[i] == 90 || chars[i] == 122 {  // Z, z
            i += 1
        } else if chars[i] == 43 || chars[i] == 45 {  // + -
            let sign = chars[i] == 45 ? -1 : 1
            i += 1
            guard let oh = number(2), oh <= 23 else { throw fail() }
            _ = expect(58)
            guard let om = number(2), om <= 59 else { throw fail() }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            throw fail()
        }
        guard i == chars.count else { throw fail() }
        return Date(timeIntervalSince1970: TimeInterval(date.dayNumber * 86_400 + sod - offset) + fraction)
    }
}
