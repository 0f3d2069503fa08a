import FoundationEssentials

/// Converts between instants and local civil time in one time zone, with the DST rules of
/// T7: a wall time that falls in a gap resolves to the first valid instant after the gap
/// (02:30 on a spring-forward night is 03:00), and an ambiguous one (fall back) resolves to
/// its first occurrence. The zone is a parameter; nothing here reads the clock.
public struct LocalClock: Sendable {
    public let zone: Zone

    public init(_ zone: Zone) { self.zone = zone }

    /// Coordinated Universal Time, for instants on the wire.
    public static let utc = LocalClock(.utc)

    /// A civil date and the seconds past its local midnight.
    public struct Civil: Equatable, Sendable {
        public var date: CivilDate
        public var secondsOfDay: Int
    }

    public func offset(at epochSeconds: Int) -> Int {
        zone.offset(at: epochSeconds)
    }

    public func civil(of instant: Date) -> Civil {
        let s = Int(instant.timeIntervalSince1970.rounded(.down))
        let local = s + offset(at: s)
        let days = floorDiv(local, 86_400)
        return Civil(date: CivilDate(dayNumber: days), secondsOfDay: local - days * 86_400)
    }

    /// The instant at which the wall clock shows `secondsOfDay` on `date` (see the type's
    /// comment for gaps and overlaps).
    public func instant(_ date: CivilDate, secondsOfDay: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(epochSeconds(date, secondsOfDay: secondsOfDay)))
    }

    /// T7: the interval from `a` to `b` split at local midnights, each part with its day (a
    /// 23- or 25-hour day holds as many seconds as it has). Empty when `b` is not after `a`.
    public func days(from a: Date, to b: Date) -> [(date: CivilDate, seconds: Double)] {
        var out: [(date: CivilDate, seconds: Double)] = []
        var start = a
        while start < b {
            let date = civil(of: start).date
            let end = min(b, instant(date.adding(days: 1), secondsOfDay: 0))
            out.append((date, end.timeIntervalSince(start)))
            start = end
        }
        return out
    }

    /// T7: how many seconds of the interval from `a` to `b` fall on the local day `date`.
    public func seconds(from a: Date, to b: Date, on date: CivilDate) -> Double {
        let from = max(a, instant(date, secondsOfDay: 0)), to = min(b, instant(date.adding(days: 1), secondsOfDay: 0))
        return to > from ? to.timeIntervalSince(from) : 0
    }

    public func instant(_ date: CivilDate, _ time: WallTime) -> Date {
        instant(date, secondsOfDay: time.secondsOfDay)
    }

    public func epochSeconds(_ date: CivilDate, secondsOfDay: Int) -> Int {
        occurrences(date, secondsOfDay: secondsOfDay)[0]
    }

    /// Every instant at which the wall clock shows `secondsOfDay` on `date`, earliest first:
    /// two in a fall-back overlap, and in a gap the one instant the clock jumps past it.
    public func occurrences(_ date: CivilDate, secondsOfDay: Int) -> [Int] {
        let naive = date.dayNumber * 86_400 + secondsOfDay
        // Offsets in force around the wall time; real zones change offset at most once a day.
        let candidates = Set([offset(at: naive - 86_400), offset(at: naive), offset(at: naive + 86_400)])
        let valid = Set(candidates.map { naive - $0 }.filter { naive - offset(at: $0) == $0 })
        if !valid.isEmpty { return valid.sorted() }
        // In a gap: binary-search the transition, the first instant whose wall time is past it.
        var lo = naive - candidates.max()!  // wall time before the gap
        var hi = naive - candidates.min()!  // wall time after the gap
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2
            if mid + offset(at: mid) >= naive { hi = mid } else { lo = mid }
        }
        return [hi]
    }

    /// `instant` with its whole date, for text read long after it was written ("loaded Sat 5
    /// Dec 2026 14:05:00").
    public func dated(_ instant: Date) -> String { spoken(instant, from: .distantPast) }

    /// An instant as people read it in the journal and in `watch`, to the nearest second:
    /// `13:05:00` on the day of `now`, `Mon 30 Nov 07:00:00` on another day, with the year
    /// when it is another year's. The exact instant goes in the entry's fields (`iso8601`).
    public func spoken(_ instant: Date, from now: Date) -> String {
        let c = civil(of: Date(timeIntervalSince1970: instant.timeIntervalSince1970.rounded()))
        let sod = c.secondsOfDay
        let time = "\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2))"
        let today = civil(of: now).date
        guard c.date != today else { return time }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let year = c.date.year == today.year ? "" : " \(c.date.year)"
        return "\(c.date.weekday.description.capitalized) \(c.date.day) \(months[c.date.month - 1])\(year) \(time)"
    }

    /// `2026-11-29T13:05:00.250+09:00`: RFC 3339 with milliseconds and the zone's offset then,
    /// so that an instant on the wire or in `--json` is exact to the millisecond (a `--for 90s`
    /// block ends 90 s after its start, not at a rounded second). Rounded to the nearest
    /// millisecond once, so the seconds and the fraction always agree.
    public func iso8601(_ instant: Date) -> String {
        let ms = Int((instant.timeIntervalSince1970 * 1000).rounded())
        let s = floorDiv(ms, 1000)
        let off = offset(at: s)
        let c = civil(of: Date(timeIntervalSince1970: TimeInterval(s)))
        let sod = c.secondsOfDay
        let sign = off < 0 ? "-" : "+"
        let a = abs(off)
        return "\(c.date)T\(pad(sod / 3600, 2)):\(pad(sod / 60 % 60, 2)):\(pad(sod % 60, 2)).\(pad(ms - s * 1000, 3))"
            + "\(sign)\(pad(a / 3600, 2)):\(pad(a / 60 % 60, 2))"
    }
}
