import FoundationEssentials

/// TIME as users write it (§6): `HH:MM`, the next occurrence strictly after now in
/// local time (T3: `00:05` at 23:58 is seven minutes away), or an ISO 8601 date-time
/// (`2026-11-29T22:00`, with optional seconds and milliseconds, `22:00:05.250`, and an optional
/// `Z`/`±HH:MM` offset; without an offset it is local wall time).
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
        let utc = LocalClock.utc
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
        var c = Cursor(Array(text.utf8))
        guard let y = c.number(4), c.expect(45), let mo = c.number(2), c.expect(45), let d = c.number(2) else { throw fail() }
        guard c.skip(where: { $0 == 84 || $0 == 116 || $0 == 32 }) else { throw fail() }  // T, t, space
        guard let h = c.number(2), c.expect(58), let mi = c.number(2) else { throw fail() }
        var sec = 0
        var fraction = 0.0
        if c.expect(58) {
            guard let s = c.number(2) else { throw fail() }
            sec = s
            if c.expect(46) {  // RFC 3339 §5.6 time-secfrac
                guard let f = c.fraction() else { throw fail() }
                fraction = f
            }
        }
        let date = CivilDate(year: y, month: mo, day: d)
        guard date.isValid, h <= 23, mi <= 59, sec <= 59 else {
            throw CoreError(.invalidTime, "'\(text)' is not a valid date and time")
        }
        let sod = h * 3600 + mi * 60 + sec
        if c.atEnd {
            return clock.instant(date, secondsOfDay: sod).addingTimeInterval(fraction)
        }
        var offset = 0
        if !c.skip(where: { $0 == 90 || $0 == 122 }) {  // not Z or z: +HH:MM, -HH:MM, +HHMM
            guard let signByte = c.next, signByte == 43 || signByte == 45, c.skip(where: { _ in true }) else { throw fail() }
            guard let oh = c.number(2), oh <= 23 else { throw fail() }
            _ = c.expect(58)
            guard let om = c.number(2), om <= 59 else { throw fail() }
            offset = (signByte == 45 ? -1 : 1) * (oh * 3600 + om * 60)
        }
        guard c.atEnd else { throw fail() }
        return Date(timeIntervalSince1970: TimeInterval(date.dayNumber * 86_400 + sod - offset) + fraction)
    }
}

/// A read position in ASCII bytes, for the hand-written ISO 8601 parser.
private struct Cursor {
    let chars: [UInt8]
    var i = 0
    init(_ chars: [UInt8]) { self.chars = chars }

    var atEnd: Bool { i == chars.count }
    var next: UInt8? { i < chars.count ? chars[i] : nil }

    /// `count` decimal digits as a number, or nil (and nothing consumed).
    mutating func number(_ count: Int) -> Int? {
        guard i + count <= chars.count else { return nil }
        var v = 0
        for k in i..<(i + count) {
            guard chars[k] >= 48 && chars[k] <= 57 else { return nil }
            v = v * 10 + Int(chars[k] - 48)
        }
        i += count
        return v
    }

    mutating func expect(_ c: UInt8) -> Bool { skip { $0 == c } }

    mutating func skip(where matches: (UInt8) -> Bool) -> Bool {
        guard let c = next, matches(c) else { return false }
        i += 1
        return true
    }

    /// Up to nine digits after a decimal point as a fraction of a second; nil without one.
    /// The digits are read as one whole number and divided once, so `.606` is the nearest
    /// double to 0.606 and a formatted instant reads back to the same millisecond.
    mutating func fraction() -> Double? {
        var digits = 0, scale = 1
        let start = i
        while let c = next, c >= 48, c <= 57, i - start < 9 {
            digits = digits * 10 + Int(c - 48)
            scale *= 10
            i += 1
        }
        return i > start ? Double(digits) / Double(scale) : nil
    }
}
