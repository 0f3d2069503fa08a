/// Proleptic Gregorian calendar arithmetic on plain integers, so that schedule math never
/// depends on Foundation's Calendar heuristics (which, for instance, resolve a DST-gap time
/// forward by the gap's length instead of to the first valid instant, against T7).
public struct CivilDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 (H. Hinnant's days_from_civil).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public init(dayNumber z0: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: m, day: d)
    }

    public var weekday: Weekday {
        let z = dayNumber
        // 1970-01-01 was a Thursday.
        let index = ((z % 7) + 7 + 4) % 7  // 0 = Sunday
        return Weekday.allCases[(index + 6) % 7]
    }

    public func adding(days: Int) -> CivilDate { CivilDate(dayNumber: dayNumber + days) }

    public var isValid: Bool {
        guard (1...12).contains(month), day >= 1 else { return false }
        return day <= CivilDate.daysIn(month: month, year: year)
    }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { a.dayNumber < b.dayNumber }

    public var description: String {
        "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }
}

/// A time of day on the wall clock, to the minute (`22:00`).
public struct WallTime: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    public var hour: Int
    public var minute: Int

    public init(hour: Int, minute: Int) {
        precondition((0...23).contains(hour) && (0...59).contains(minute), "WallTime out of range")
        self.hour = hour
        self.minute = minute
    }

    public var secondsOfDay: Int { hour * 3600 + minute * 60 }

    /// The one parser of a daily window, `22:00-07:00` (T2: equal ends mean 24 hours), for
    /// blockc's `--daily`, the protocol's `window` and blockd.conf's `Window=`. nil when the
    /// text is not two parts joined by '-': each caller says so in its own terms (a flag, an
    /// argument, a key and line). A bad time of day throws WallTime.parse's error.
    public static func window(_ text: String, trimmingINISpace: Bool = false) throws(CoreError) -> (start: WallTime, end: WallTime)? {
        let sides = text.split(separator: "-", omittingEmptySubsequences: false).map { trimmingINISpace ? String($0).trimmingINISpace() : String($0) }
        guard sides.count == 2 else { return nil }
        return (try parse(sides[0]), try parse(sides[1]))
    }

    /// Parses `HH:MM` (also `H:MM`), 00:00 to 23:59. `24:00` is refused: say `00:00`.
    public static func parse(_ text: String) throws(CoreError) -> WallTime {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h), (0...59).contains(m)
        else {
            throw CoreError(.invalidTime, "'\(text)' is not a time of day; write HH:MM from 00:00 to 23:59, e.g. 22:00")
        }
        return WallTime(hour: h, minute: m)
    }

    public static func < (a: WallTime, b: WallTime) -> Bool { a.secondsOfDay < b.secondsOfDay }

    public var description: String { "\(pad(hour, 2)):\(pad(minute, 2))" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try WallTime.parse(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(abs(value))
    let padded = digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    return value < 0 ? "-" + padded : padded
}

/// Floor division, for negative epoch seconds.
func floorDiv(_ a: Int, _ b: Int) -> Int {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}
