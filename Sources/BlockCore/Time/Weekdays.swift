public enum Weekday: Int, CaseIterable, Sendable, Codable, CustomStringConvertible {
    case mon = 0, tue, wed, thu, fri, sat, sun

    public var description: String { Weekday.names[rawValue] }

    static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let longNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    public static func parse(_ text: String) -> Weekday? {
        let t = text.lowercased()
        if let i = names.firstIndex(of: t) ?? longNames.firstIndex(of: t) { return Weekday(rawValue: i) }
        return nil
    }
}

/// A set of weekdays. For a schedule it applies to the day a window *starts* (T3).
public struct WeekdaySet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7f }

    public init(_ day: Weekday) { self.init(rawValue: 1 << UInt8(day.rawValue)) }
    public init(_ days: [Weekday]) { self.init(rawValue: days.reduce(0) { $0 | 1 << UInt8($1.rawValue) }) }

    public static let all = WeekdaySet(rawValue: 0x7f)
    public static let weekdays = WeekdaySet([.mon, .tue, .wed, .thu, .fri])
    public static let weekend = WeekdaySet([.sat, .sun])

    public func contains(_ day: Weekday) -> Bool { contains(WeekdaySet(day)) }

    public var days: [Weekday] { Weekday.allCases.filter { contains($0) } }

    /// `mon,wed,fri`, `mon-fri`, `fri-mon` (a range may wrap past Sunday), `mon-wed,sat`,
    /// and the words `daily`, `weekdays`, `weekends`.
    public static func parse(_ text: String) throws(CoreError) -> WeekdaySet {
        let bad = { (why: String) -> CoreError in
            CoreError(.invalidDays, "'\(text)' is not a set of days: \(why); write e.g. mon,wed or mon-fri")
        }
        switch text.lowercased() {
        case "daily", "all", "every-day": return .all
        case "weekdays": return .weekdays
        case "weekends", "weekend": return .weekend
        default: break
        }
        var set = WeekdaySet()
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        for raw in items {
            let item = raw.trimmingSpaces()
            if item.isEmpty { throw bad("an empty item") }
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard ends.count <= 2 else { throw bad("'\(item)' has more than one '-'") }
            guard let first = Weekday.parse(String(ends[0])) else { throw bad("'\(ends[0])' is not a day") }
            guard ends.count == 2 else { set.insert(WeekdaySet(first)); continue }
            guard let last = Weekday.parse(String(ends[1])) else { throw bad("'\(ends[1])' is not a day") }
            var d = first.rawValue
            while true {
                set.insert(WeekdaySet(Weekday(rawValue: d)!))
                if d == last.rawValue { break }
                d = (d + 1) % 7
            }
        }
        return set
    }

    /// Canonical text: `daily`, or days and runs of three or more as ranges (`mon-fri,sun`).
    public var description: String {
        if self == .all { return "daily" }
        var parts: [String] = []
        var i = 0
        while i < 7 {
            guard contains(Weekday(rawValue: i)!) else { i += 1; continue }
            var j = i
            while j + 1 < 7 && contains(Weekday(rawValue: j + 1)!) { j += 1 }
            if j - i >= 2 {
                parts.append("\(Weekday.names[i])-\(Weekday.names[j])")
            } else {
                for k in i...j { parts.append(Weekday.names[k]) }
            }
            i = j + 1
        }
        return parts.joined(separator: ",")
    }
}

extension WeekdaySet: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try WeekdaySet.parse(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}

extension String {
    func trimmingSpaces() -> String { String(self[...].trimmingSpaces()) }
}
