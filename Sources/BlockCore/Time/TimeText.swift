import FoundationEssentials

/// TIME as people type it (§6): a time of day, `22:00` (also `7:00`) or on the 12-hour clock
/// `10pm`, `10:30pm`, `7am` (`10 pm` too), the next one strictly after now in local time (T3:
/// `00:05` at 23:58 is seven minutes away); the same with a day before or after it, `today`,
/// `tomorrow` or a weekday (`tomorrow 07:00`, `sat 9am`, `7am tomorrow`), that day's (a
/// weekday's next one still ahead, today's included); or an ISO 8601 date-time
/// (`2026-11-29T22:00`, with optional seconds and milliseconds, `22:00:05.250`, and an optional
/// `Z`/`±HH:MM` offset; without an offset it is local wall time).
///
/// A wall time on a given day keeps T7's rule for schedules: in a DST gap it is the first
/// instant after the gap, and on a fall-back night the first of its two occurrences still
/// ahead of now.
public enum TimeText {
    /// What every refusal of a TIME lists.
    static let forms = "write HH:MM (22:00), 10pm or 10:30pm, with today, tomorrow or a weekday for another day "
        + "(tomorrow 07:00, sat 9am), or an ISO 8601 date-time (2026-11-29T22:00)"

    public static func parse(_ text: String, now: Date, clock: LocalClock) throws(CoreError) -> Date {
        if startsWithDate(text) { return try parseISO8601(text, clock: clock, hint: forms) }
        switch reading(text, repairing: true) {
        case .refused(let why, let fix):
            let hint = switch fix {
            case .meant(let form): "did you mean '\(form)'?"
            case .instead(let forms): "write \(forms)"
            case .examples: forms
            }
            throw CoreError(.invalidTime, "'\(text)' is not a time: \(why); \(hint)")
        case .at(let day, let time):
            return try resolve(day, time, text: text, now: now, clock: clock)
        }
    }

    /// How many of the command-line words after `--until VALUE` belong to the same TIME, as
    /// people type it without quotes: `--until tomorrow 07:00`, `--until 10 pm`,
    /// `--until 7am tomorrow`, `--until 2026-11-29 22:00`. A day needs a time and a bare hour
    /// its am or pm, so the word taken cannot have been meant as a selection; a day after a
    /// time is the one other word taken. A mistyped day takes its time too (`tomorow 07:00`),
    /// so that the refusal can name what was meant.
    public static func wordsContinuing(_ value: String, in following: [String]) -> Int {
        var words = value.split(whereSeparator: \.isWhitespace).map(String.init)
        var taken = 0
        while taken < following.count, let last = words.last {
            let next = following[taken]
            let hasDay = words.contains { day(of: $0) != nil }, hasTime = words.contains(where: isTimeWord)
            let continues = (isMeridiem(next) && isHour(last))
                || (day(of: next) != nil && hasTime && !hasDay && !startsWithDate(value))
                || (isTimeWord(next) && !hasTime && (hasDay || (words.count == 1 && (isDateOnly(last) || isNearDay(last)))))
            guard continues else { break }
            words.append(next)
            taken += 1
        }
        return taken
    }

    /// The day a TIME names, if it names one.
    enum Day: Equatable {
        case today, tomorrow
        case weekday(Weekday)
    }

    enum Reading {
        case at(Day?, WallTime)
        /// Why not, and what to write instead (`.examples`: the forms).
        case refused(String, fix: DurationText.Fix)
    }

    static func reading(_ text: String, repairing: Bool) -> Reading {
        var words: [String] = []
        for w in text.split(whereSeparator: \.isWhitespace).map(String.init) {
            // `10 pm` is `10pm`.
            if let last = words.last, isMeridiem(w), isHour(last) { words[words.count - 1] += w } else { words.append(w) }
        }
        guard !words.isEmpty else { return .refused("it is empty", fix: .examples) }
        var day: Day?, time: WallTime?
        var dayWord = ""
        for (i, w) in words.enumerated() {
            if let d = self.day(of: w) {
                guard day == nil else { return .refused("it names two days", fix: .examples) }
                (day, dayWord) = (d, w)
            } else if w.first.map({ ("0"..."9").contains($0) }) == true {
                guard time == nil else { return .refused("it names two times of day", fix: .examples) }
                switch timeOfDay(w) {
                case .wall(let t): time = t
                case .refused(let why, let fix):
                    guard case .meant(let form) = fix else { return .refused(why, fix: fix) }
                    return .refused(why, fix: .meant(replacing(words, i, with: form)))
                }
            } else {
                return unknownWord(w, at: i, in: words, repairing: repairing)
            }
        }
        guard let time else { return .refused("'\(dayWord)' needs a time of day", fix: .instead("one after it, as in \(dayWord) 07:00")) }
        return .at(day, time)
    }

    /// One word read as a time of day, or why not (`.meant` holds the word to write in its place).
    enum ClockReading {
        case wall(WallTime)
        case refused(String, fix: DurationText.Fix)
    }

    /// `22:00`, `7:00`, `10pm`, `10:30pm`, `7am` (also `a.m.`, `p.m.`), or why not.
    static func timeOfDay(_ word: String) -> ClockReading {
        let w = word.lowercased()
        guard let (clock, pm) = splitMeridiem(w) else {
            if w == "24:00" { return .refused("the day ends at 23:59", fix: .meant("00:00")) }
            if let h = Int(w), w.count <= 2, (0...23).contains(h) {
                let why = "'\(word)' has no minutes"
                guard (1...12).contains(h) else { return .refused(why, fix: .meant("\(pad(h, 2)):00")) }
                return .refused(why, fix: .instead("\(pad(h, 2)):00, \(h)am or \(h)pm"))
            }
            do throws(CoreError) { return .wall(try WallTime.parse(w)) } catch {
                if let meant = meantClock(w) { return .refused("'\(word)' is not a time of day", fix: .meant(meant)) }
                return .refused("'\(word)' is not a time of day (00:00 to 23:59)", fix: .examples)
            }
        }
        let parts = clock.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), (1...2).contains(parts[0].count), parts.count == 1 || parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy { ("0"..."9").contains($0) } }),
              let h = Int(parts[0]), let m = parts.count == 2 ? Int(parts[1]) : 0, m <= 59 else {
            return .refused("'\(word)' is not a time of day", fix: .examples)
        }
        guard (1...12).contains(h) else {
            let why = "the 12-hour clock goes from 1 to 12"
            return .refused(why, fix: h <= 23 ? .meant("\(pad(h, 2)):\(pad(m, 2))") : .examples)
        }
        return .wall(WallTime(hour: h % 12 + (pm ? 12 : 0), minute: m))
    }

    /// The HH:MM a time written another way means: `2200`, `730` (no colon), `22h`, `22h30`,
    /// `22.30`; nil for anything else, or for a time that is not on the clock.
    static func meantClock(_ w: String) -> String? {
        let digits: (Substring) -> Bool = { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
        var hour: Substring, minute: Substring
        if let sep = w.firstIndex(where: { $0 == "h" || $0 == "." }) {
            (hour, minute) = (w[..<sep], w[w.index(after: sep)...])
            if minute.isEmpty && w[sep] == "h" { minute = "00" }
        } else if digits(Substring(w)), (3...4).contains(w.count) {
            (hour, minute) = (w.dropLast(2), w.suffix(2))
        } else {
            return nil
        }
        guard digits(hour), digits(minute), hour.count <= 2, minute.count == 2,
              let h = Int(hour), let m = Int(minute), h <= 23, m <= 59 else { return nil }
        return "\(pad(h, 2)):\(pad(m, 2))"
    }

    /// `10pm` → (`10`, true); nil without am or pm.
    static func splitMeridiem(_ w: String) -> (String, pm: Bool)? {
        for (suffix, pm) in [("am", false), ("pm", true), ("a.m.", false), ("p.m.", true)] where w.hasSuffix(suffix) {
            return (String(w.dropLast(suffix.count)), pm)
        }
        return nil
    }

    static func isMeridiem(_ w: String) -> Bool { ["am", "pm", "a.m.", "p.m."].contains(w.lowercased()) }

    /// `10` or `10:30`, waiting for its am or pm.
    static func isHour(_ w: String) -> Bool {
        let parts = w.split(separator: ":", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count) && (1...2).contains(parts[0].count) && (parts.count == 1 || parts[1].count == 2)
            && parts.allSatisfy { $0.allSatisfy { ("0"..."9").contains($0) } }
    }

    /// A word that is a time of day or meant as one (`22:00`, `7am`, `7`).
    static func isTimeWord(_ w: String) -> Bool {
        let clock = splitMeridiem(w.lowercased())?.0 ?? w
        return !clock.isEmpty && clock.first.map({ ("0"..."9").contains($0) }) == true
            && clock.allSatisfy { ("0"..."9").contains($0) || $0 == ":" || $0 == "." }
    }

    static func day(of word: String) -> Day? {
        switch word.lowercased() {
        case "today": .today
        case "tomorrow": .tomorrow
        default: Weekday.parse(word).map(Day.weekday)
        }
    }

    static let dayWords = ["today", "tomorrow"] + Weekday.longNames + Weekday.names

    /// A word meant as a day (`tomorow`): taken with the time after it, so that the refusal
    /// can say what to write.
    static func isNearDay(_ w: String) -> Bool {
        w.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) } && Suggest.closest(to: w, among: dayWords) != nil
    }

    /// A word that is neither a day nor a time: a day it is a typo of, or a word without which
    /// the rest reads (`at`, `until`). Noon and midnight are said as times.
    static func unknownWord(_ w: String, at i: Int, in words: [String], repairing: Bool) -> Reading {
        switch w.lowercased() {
        case "noon": return .refused("say noon as 12:00", fix: .meant(replacing(words, i, with: "12:00")))
        case "midnight": return .refused("say midnight as 00:00 (the next one after now)", fix: .meant(replacing(words, i, with: "00:00")))
        default: break
        }
        let why = "'\(w)' is neither a day nor a time of day"
        guard repairing else { return .refused(why, fix: .examples) }
        var candidates: [String] = []
        if let near = Suggest.closest(to: w, among: dayWords) { candidates.append(replacing(words, i, with: near)) }
        candidates.append(replacing(words, i, with: nil))
        for fixed in candidates where !fixed.isEmpty {
            if case .at = reading(fixed, repairing: false) { return .refused(why, fix: .meant(fixed)) }
        }
        return .refused(why, fix: .examples)
    }

    static func replacing(_ words: [String], _ i: Int, with word: String?) -> String {
        var w = words
        if let word { w[i] = word } else { w.remove(at: i) }
        return w.joined(separator: " ")
    }

    /// The instant a day and a time of day name, after `now`.
    static func resolve(_ day: Day?, _ time: WallTime, text: String, now: Date, clock: LocalClock) throws(CoreError) -> Date {
        let today = clock.civil(of: now).date
        let dates: [CivilDate] = switch day {
        // Today (either occurrence on a fall-back night), tomorrow, or the day after.
        case nil: (0...2).map { today.adding(days: $0) }
        case .today?: [today]
        case .tomorrow?: [today.adding(days: 1)]
        // Today's if still ahead, else next week's.
        case .weekday(let w)?: (0...7).map { today.adding(days: $0) }.filter { $0.weekday == w }
        }
        for date in dates {
            for s in clock.occurrences(date, secondsOfDay: time.secondsOfDay) {
                let candidate = Date(timeIntervalSince1970: TimeInterval(s))
                if candidate > now { return candidate }
            }
        }
        if day == .today {
            let words = text.split(whereSeparator: \.isWhitespace).map { Self.day(of: String($0)) == .today ? "tomorrow" : String($0) }
            let shown = WallTime(hour: clock.civil(of: now).secondsOfDay / 3600, minute: clock.civil(of: now).secondsOfDay % 3600 / 60)
            throw CoreError(.invalidTime, "'\(text)' has passed (it is \(shown) now); write '\(words.joined(separator: " "))', or \(time) alone for the next \(time)")
        }
        throw CoreError(.internal, "no occurrence of \(text) found after now")
    }

    /// Whether the text begins with an ISO 8601 date (`2026-`): it is read as ISO 8601.
    static func startsWithDate(_ text: String) -> Bool {
        let b = Array(text.utf8.prefix(5))
        return b.count == 5 && b[0..<4].allSatisfy { $0 >= 48 && $0 <= 57 } && b[4] == 45
    }

    /// `2026-11-29` alone, waiting for its time.
    static func isDateOnly(_ w: String) -> Bool { w.utf8.count == 10 && startsWithDate(w) }

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
        try parseISO8601(text, clock: clock, hint: "write an ISO 8601 date-time such as 2026-11-29T22:00 or 2026-11-29T22:00:00+09:00")
    }

    /// `hint` ends the refusal of a text that is not ISO 8601: the forms its caller accepts.
    static func parseISO8601(_ text: String, clock: LocalClock, hint: String) throws(CoreError) -> Date {
        func fail() -> CoreError { CoreError(.invalidTime, "'\(text)' is not a time: \(hint)") }
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
