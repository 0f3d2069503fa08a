/// A POSIX TZ rule (`CET-1CEST,M3.5.0,M10.5.0/3`), as in a TZif footer (RFC 8536 §3.3, with
/// its extensions: hours up to ±167 in transition times, and DST all year). It gives the offset
/// for instants after a zone file's last listed transition, which in Debian's files is every
/// instant from 2037 on, and from much earlier in files built "slim".
struct ZoneRule: Hashable, Sendable {
    /// Seconds east of UTC (POSIX writes them west, with the opposite sign).
    var standard: Int
    var daylight: Int?
    var start = RuleDate.month(3, week: 2, weekday: 0), startTime = 7200
    var end = RuleDate.month(11, week: 1, weekday: 0), endTime = 7200

    enum RuleDate: Hashable, Sendable {
        /// `Jn`: day 1–365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0–365, February 29 counted in leap years.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
        case month(Int, week: Int, weekday: Int)

        func dayNumber(in year: Int) -> Int {
            let jan1 = CivilDate(year: year, month: 1, day: 1).dayNumber
            switch self {
            case .julian(let n):
                let leap = CivilDate.daysIn(month: 2, year: year) == 29
                return jan1 + n - 1 + (leap && n >= 60 ? 1 : 0)
            case .zeroBased(let n):
                return jan1 + n
            case .month(let m, let w, let d):
                let first = CivilDate(year: year, month: m, day: 1).dayNumber
                // 1970-01-01 (day 0) was a Thursday, weekday 4.
                let firstWeekday = ((first % 7) + 7 + 4) % 7
                var day = first + (d - firstWeekday + 7) % 7 + (w - 1) * 7
                if day >= first + CivilDate.daysIn(month: m, year: year) { day -= 7 }
                return day
            }
        }
    }

    func offset(at t: Int) -> Int {
        guard let daylight else { return standard }
        let year = CivilDate(dayNumber: floorDiv(t + standard, 86_400)).year
        let begins = start.dayNumber(in: year) * 86_400 + startTime - standard
        let ends = end.dayNumber(in: year) * 86_400 + endTime - daylight
        let inDaylight = begins < ends ? (t >= begins && t < ends) : !(t >= ends && t < begins)
        return inDaylight ? daylight : standard
    }

    static func parse(_ text: String) throws(CoreError) -> ZoneRule {
        var s = Scanner(Array(text.utf8))
        try s.name()
        let standard = try -s.offset(maxHours: 24)
        var rule = ZoneRule(standard: standard, daylight: nil)
        guard !s.atEnd else { return rule }
        try s.name()
        if s.peek == UInt8(ascii: ",") || s.atEnd {
            rule.daylight = standard + 3600
        } else {
            rule.daylight = try -s.offset(maxHours: 24)
        }
        guard !s.atEnd else { return rule }
        try s.expect(",")
        (rule.start, rule.startTime) = try s.transition()
        try s.expect(",")
        (rule.end, rule.endTime) = try s.transition()
        guard s.atEnd else { throw .badZoneRule(text) }
        return rule
    }

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var invalid: CoreError { .badZoneRule(String(decoding: bytes, as: UTF8.self)) }

        var atEnd: Bool { i >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[i] }

        mutating func expect(_ c: Unicode.Scalar) throws(CoreError) {
            guard peek == UInt8(ascii: c) else { throw invalid }
            i += 1
        }

        /// `CET` (three or more letters) or `<+0330>` (quoted, letters, digits and signs).
        mutating func name() throws(CoreError) {
            let isLetter = { (c: UInt8) in (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
            let startIndex = i
            if peek == UInt8(ascii: "<") {
                i += 1
                while let c = peek, c != UInt8(ascii: ">") {
                    guard isLetter(c) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2D else { throw invalid }
                    i += 1
                }
                try expect(">")
                guard i - startIndex >= 5 else { throw invalid }
            } else {
                while let c = peek, isLetter(c) { i += 1 }
                guard i - startIndex >= 3 else { throw invalid }
            }
        }

        mutating func number(max: Int) throws(CoreError) -> Int {
            var value = 0, digits = 0
            while let c = peek, c >= 0x30, c <= 0x39 {
                value = value * 10 + Int(c - 0x30)
                digits += 1
                i += 1
                guard value <= max else { throw invalid }
            }
            guard digits > 0 else { throw invalid }
            return value
        }

        /// `[+-]hh[:mm[:ss]]` in seconds.
        mutating func offset(maxHours: Int) throws(CoreError) -> Int {
            var sign = 1
            if peek == UInt8(ascii: "+") { i += 1 } else if peek == UInt8(ascii: "-") { sign = -1; i += 1 }
            var seconds = try number(max: maxHours) * 3600
            if peek == UInt8(ascii: ":") {
                i += 1
                seconds += try number(max: 59) * 60
                if peek == UInt8(ascii: ":") {
                    i += 1
                    seconds += try number(max: 59)
                }
            }
            return sign * seconds
        }

        mutating func transition() throws(CoreError) -> (RuleDate, Int) {
            let date: RuleDate
            if peek == UInt8(ascii: "J") {
                i += 1
                let n = try number(max: 365)
                guard n >= 1 else { throw invalid }
                date = .julian(n)
            } else if peek == UInt8(ascii: "M") {
                i += 1
                let m = try number(max: 12)
                try expect(".")
                let w = try number(max: 5)
                try expect(".")
                let d = try number(max: 6)
                guard m >= 1, w >= 1 else { throw invalid }
                date = .month(m, week: w, weekday: d)
            } else {
                date = .zeroBased(try number(max: 365))
            }
            guard peek == UInt8(ascii: "/") else { return (date, 7200) }
            i += 1
            return (date, try offset(maxHours: 167))
        }
    }
}
