import FoundationEssentials

/// DURATION as people type it (§6, T1): `90s`, `25m`, `1h30m`, `2d`, and the same with unit
/// words and spaces (`2 hours`, `90 min`, `2h 15m`, `2 hours 15 minutes`), a bare number after
/// hours or minutes counting the next unit down (`1h30` is 1h30m, `1m30` is 1m30s), and a
/// decimal on a duration of one unit when it makes whole seconds (`1.5h`, `0.5m`). blockc's
/// flags and arguments, the protocol and the configuration files all read durations here.
///
/// T1: any whole number of seconds from 1 s to 366 days is accepted, exactly as written;
/// nothing is rounded up to a minimum window. A refusal says why and, where the text is near
/// an accepted form, names that form built from what was typed.
public enum DurationText {
    public static let minimum = 1
    public static let maximum = 366 * 86_400

    static let units: [(Character, Int)] = [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

    /// Every word a unit may be written as, with its index in `units`. Plurals come first: a
    /// mistyped word is suggested back as the plural people mostly mean.
    static let unitWords: [(word: String, unit: Int)] = [
        ("days", 0), ("day", 0), ("d", 0),
        ("hours", 1), ("hour", 1), ("hrs", 1), ("hr", 1), ("h", 1),
        ("minutes", 2), ("minute", 2), ("mins", 2), ("min", 2), ("m", 2),
        ("seconds", 3), ("second", 3), ("secs", 3), ("sec", 3), ("s", 3),
    ]
    static let unitNames = ["days", "hours", "minutes", "seconds"]
    static let weekWords: Set<String> = ["w", "wk", "wks", "week", "weeks"]
    static let longerWords: Set<String> = ["mo", "mon", "month", "months", "y", "yr", "yrs", "year", "years"]
    static let shorterWords: Set<String> = ["ms", "msec", "msecs", "millisecond", "milliseconds"]

    /// Whether `word` is a unit as blockc's command line may find it in an argument of its own
    /// (`--for 2 hours`): `h`, `hours`, `min`... in any case.
    public static func isUnitWord(_ word: String) -> Bool { unit(of: word) != nil }

    static func unit(of word: some StringProtocol) -> Int? {
        let w = word.lowercased()
        return unitWords.first { $0.word == w }?.unit
    }

    /// Whole seconds. Units go largest first, each at most once (`1h30m`, not `30m1h`).
    public static func parse(_ text: String) throws(CoreError) -> Int {
        switch reading(text, repairing: true) {
        case .seconds(let s): return s
        case .refused(let why, let fix):
            let hint = switch fix {
            case .meant(let form): "did you mean '\(form)'?"
            case .instead(let forms): "write \(forms)"
            case .examples: "write e.g. 90s, 25m, 1h30m or 2d"
            }
            throw CoreError(.invalidDuration, "'\(text)' is not a duration: \(why); \(hint)")
        }
    }

    /// How many of the command-line words after `value` belong to the same duration, as people
    /// type it without quotes: a unit word after a bare number (`--for 2 hours`, `more reddit
    /// 10 minutes`), then more parts while the whole still reads as one duration (`2 hours 30
    /// minutes`, `1h 30m`). A bare number is never a duration by itself, so the word after it
    /// is taken when it is a unit or is meant as one (`2 hourz`, `2 weeks`: the refusal then
    /// says what to write); what could be meant as something else is left.
    public static func wordsContinuing(_ value: String, in following: [String]) -> Int {
        var joined = value, taken = 0
        func reads(_ text: String) -> Bool { if case .seconds = reading(text, repairing: false) { true } else { false } }
        while taken < following.count {
            let next = following[taken]
            let last = joined.split(whereSeparator: \.isWhitespace).last.map(String.init) ?? ""
            if isBareNumber(last), isUnitLike(next) {
                joined += " " + next
                taken += 1
            } else if next.first?.isASCIIDigit == true, reads(next), reads(joined), reads(joined + " " + next) {
                joined += " " + next  // `1h 30m`
                taken += 1
            } else if taken + 1 < following.count, isBareNumber(next), isUnitWord(following[taken + 1]),
                      reads(joined), reads(joined + " " + next + " " + following[taken + 1]) {
                joined += " " + next + " " + following[taken + 1]  // `2 hours 30 minutes`
                taken += 2
            } else {
                break
            }
        }
        return taken
    }

    /// A unit, or a word meant as one: weeks, months, milliseconds, or a typo of a unit word.
    static func isUnitLike(_ word: String) -> Bool {
        let w = word.lowercased()
        guard !w.isEmpty, w.allSatisfy(\.isASCIILetter) else { return false }
        return isUnitWord(w) || weekWords.contains(w) || longerWords.contains(w) || shorterWords.contains(w)
            || Suggest.closest(to: w, among: unitWords.map(\.word)) != nil
    }

    static func isBareNumber(_ word: String) -> Bool {
        !word.isEmpty && word.contains(where: \.isASCIIDigit) && word.allSatisfy { $0.isASCIIDigit || $0 == "." }
    }

    // MARK: Reading

    enum Reading {
        case seconds(Int)
        case refused(why: String, fix: Fix)
    }

    /// What a refusal tells the user to write instead.
    enum Fix {
        /// The accepted form nearest to what they typed.
        case meant(String)
        /// Forms built from what they typed, said in words ("90m for minutes or 90s for seconds").
        case instead(String)
        /// Nothing near: the usual examples.
        case examples
    }

    /// One piece of the text: a number (digits, perhaps with a point), a word (ASCII letters),
    /// or any other character; white space only separates.
    struct Piece {
        enum Kind: Equatable { case number, word, other }
        var kind: Kind
        var text: String
        var range: Range<String.Index>
    }

    static func pieces(_ text: String) -> [Piece] {
        var out: [Piece] = []
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if c.isWhitespace { i = text.index(after: i); continue }
            let kind: Piece.Kind = c.isASCIIDigit || c == "." ? .number : c.isASCIILetter ? .word : .other
            var j = text.index(after: i)
            if kind != .other {
                while j < text.endIndex, kind == .number ? (text[j].isASCIIDigit || text[j] == ".") : text[j].isASCIILetter {
                    j = text.index(after: j)
                }
            }
            out.append(Piece(kind: kind, text: String(text[i..<j]), range: i..<j))
            i = j
        }
        return out
    }

    /// A number as typed: its digits without the point, and how many came after it.
    struct Number {
        var mantissa: Int
        var decimals: Int
        var text: String
        var isWhole: Bool { decimals == 0 }

        init?(_ text: String) {
            let halves = text.split(separator: ".", omittingEmptySubsequences: false)
            guard halves.count <= 2, halves.contains(where: { !$0.isEmpty }) else { return nil }
            guard halves[0].count <= 9, halves.count == 1 || halves[1].count <= 9 else { return nil }
            self.text = text
            mantissa = Int(halves.joined()) ?? 0
            decimals = halves.count == 2 ? halves[1].count : 0
        }

        /// This many units of `size` seconds, in whole seconds rounded down and up (equal when
        /// the number makes whole seconds; `Int.max` when it is too large to count).
        func seconds(_ size: Int) -> (down: Int, up: Int) {
            let (product, overflow) = mantissa.multipliedReportingOverflow(by: size)
            if overflow { return (Int.max, Int.max) }
            var scale = 1
            for _ in 0..<decimals { scale *= 10 }
            return (product / scale, product / scale + (product % scale == 0 ? 0 : 1))
        }
    }

    /// The text read as a duration, or why not and what to write. `repairing` looks for the
    /// nearest accepted form of a text that is not one (reading the repaired text once, without
    /// repairing it further).
    static func reading(_ text: String, repairing: Bool) -> Reading {
        let pieces = pieces(text)
        guard !pieces.isEmpty else { return .refused(why: "it is empty", fix: .examples) }
        var parts: [(number: Number, unit: Int)] = []
        var trailing: Number?
        var i = 0
        while i < pieces.count {
            let p = pieces[i]
            switch p.kind {
            case .other:
                return refusedCharacter(p, at: i, in: text, pieces: pieces, repairing: repairing)
            case .word:
                if unit(of: p.text) != nil {
                    return .refused(why: "'\(p.text)' has no number before it", fix: .instead("a number before the unit, as in 5\(p.text.lowercased())"))
                }
                return refusedWord(p, at: i, in: text, pieces: pieces, repairing: repairing)
            case .number:
                guard let number = Number(p.text) else {
                    let whole = p.text.prefix { $0 != "." }.count
                    return .refused(why: whole > 9 ? "the number is too large" : "'\(p.text)' is not a number", fix: .examples)
                }
                guard i + 1 < pieces.count else {
                    trailing = number
                    i += 1
                    continue
                }
                let next = pieces[i + 1]
                switch next.kind {
                case .number: return noUnit(number, alone: false)
                case .other: return refusedCharacter(next, at: i + 1, in: text, pieces: pieces, repairing: repairing)
                case .word:
                    guard let u = unit(of: next.text) else { return refusedWord(next, at: i + 1, in: text, pieces: pieces, repairing: repairing) }
                    parts.append((number, u))
                    i += 2
                }
            }
        }
        if parts.isEmpty, let trailing { return noUnit(trailing, alone: true) }
        return total(parts, trailing: trailing, text: text)
    }

    /// The seconds of well-formed parts, or why they are not a duration (with the duration
    /// they add up to, where it is one).
    static func total(_ parts: [(number: Number, unit: Int)], trailing: Number?, text: String) -> Reading {
        var all = parts
        var why: String?
        if let trailing {
            let last = parts[parts.count - 1].unit
            guard last == 1 || last == 2 else {
                // After days a bare number could as well be hours as anything else: not guessed.
                let why = "'\(trailing.text)' after \(unitNames[last]) has no unit"
                guard last == 0, case .seconds = reading(text + "h", repairing: false) else { return .refused(why: why, fix: .examples) }
                return .refused(why: why, fix: .meant(spaced(text) + "h"))
            }
            all.append((trailing, last + 1))
            if !trailing.isWhole || trailing.mantissa >= 60 {
                why = "a bare number after \(unitNames[last]) counts whole \(unitNames[last + 1]), 0 to 59"
            }
        }
        if why == nil, all.count > 1, all.contains(where: { !$0.number.isWhole }) {
            why = "a decimal number goes only on a duration of one unit, such as 1.5h"
        }
        if why == nil, zip(all, all.dropFirst()).contains(where: { $0.unit >= $1.unit }) {
            why = "units go from largest to smallest, each once"
        }
        var down = 0, up = 0
        for part in all {
            let s = part.number.seconds(units[part.unit].1)
            guard s.up <= maximum * 10 else { return .refused(why: "the number is too large", fix: .examples) }
            down += s.down
            up += s.up
        }
        let seconds = down
        if let why {
            let near = down == up && (minimum...maximum).contains(seconds)
            return .refused(why: why, fix: near ? .meant(format(seconds)) : .examples)
        }
        if down != up {
            // T1: nothing is rounded, so a decimal that is no whole number of seconds is refused
            // with the whole numbers on either side of it.
            let near = Set([down, up]).sorted().filter { (minimum...maximum).contains($0) }.map(format)
            return .refused(why: "a duration is a whole number of seconds",
                            fix: near.isEmpty ? .instead("at least 1s") : .instead(near.joined(separator: " or ")))
        }
        guard seconds >= minimum else { return .refused(why: "it must be at least 1s", fix: .examples) }
        guard seconds <= maximum else { return .refused(why: "it must be at most 366d", fix: .instead("366d or less")) }
        return .seconds(seconds)
    }

    static func noUnit(_ number: Number, alone: Bool) -> Reading {
        let n = number.text
        guard alone else { return .refused(why: "'\(n)' has no unit", fix: .examples) }
        let forms = number.isWhole ? "\(n)m for minutes or \(n)s for seconds" : "\(n)h for hours or \(n)m for minutes"
        return .refused(why: "it has no unit", fix: .instead(forms))
    }

    /// A word that is not a unit: weeks counted in days, a unit word it is a typo of, or a word
    /// without which the rest reads (`for 2 hours`, `1 hour and 30 minutes`).
    static func refusedWord(_ p: Piece, at i: Int, in text: String, pieces: [Piece], repairing: Bool) -> Reading {
        let word = p.text.lowercased()
        if weekWords.contains(word) {
            let why = "weeks are not a unit; count them in days"
            guard repairing, i > 0, pieces[i - 1].kind == .number, let n = Number(pieces[i - 1].text), n.isWhole else {
                return .refused(why: why, fix: .instead("7d for a week"))
            }
            let days = replacing(text, pieces[i - 1].range.lowerBound..<p.range.upperBound, with: "\(n.mantissa * 7)d")
            switch reading(days, repairing: false) {
            case .seconds(let s): return .refused(why: why, fix: .meant(format(s)))
            case .refused(_, .meant(let form)): return .refused(why: why, fix: .meant(form))  // `1 week 2 days`
            case .refused: return .refused(why: why, fix: .instead("7d for a week"))
            }
        }
        if longerWords.contains(word) {
            return .refused(why: "months and years are not units; a duration is at most 366d", fix: .instead("days, e.g. 30d"))
        }
        if shorterWords.contains(word) {
            return .refused(why: "a duration is a whole number of seconds", fix: .instead("seconds, e.g. 1s"))
        }
        let why = "'\(p.text)' is not a unit (s, m, h or d, or a word such as minutes)"
        guard repairing else { return .refused(why: why, fix: .examples) }
        if var unit = Suggest.closest(to: word, among: unitWords.map(\.word)) {
            // `1 hourz` is "1 hour", not "1 hours".
            let one = i > 0 && pieces[i - 1].kind == .number && Number(pieces[i - 1].text)?.text == "1"
            if one, unit.hasSuffix("s"), unitWords.contains(where: { $0.word == String(unit.dropLast()) }) { unit.removeLast() }
            let fixed = replacing(text, p.range, with: unit)
            if case .seconds = reading(fixed, repairing: false) { return .refused(why: why, fix: .meant(fixed)) }
        }
        let without = spaced(replacing(text, p.range, with: " "))
        if case .seconds = reading(without, repairing: false) { return .refused(why: why, fix: .meant(without)) }
        return .refused(why: why, fix: .examples)
    }

    /// A character no duration has: `1:30` (which of two is meant), a sign, a decimal comma, or
    /// one without which the rest reads (`1h+30m`).
    static func refusedCharacter(_ p: Piece, at i: Int, in text: String, pieces: [Piece], repairing: Bool) -> Reading {
        let c = p.text
        if c == ":" {
            let why = "'\(text)' could be hours and minutes or minutes and seconds"
            if pieces.count == 3, i == 1, let a = Number(pieces[0].text), let b = Number(pieces[2].text), a.isWhole, b.isWhole {
                return .refused(why: why, fix: .instead("\(a.text)h\(b.text)m for hours and minutes or \(a.text)m\(b.text)s for minutes and seconds"))
            }
            return .refused(why: why, fix: .instead("units, e.g. 1h30m or 1m30s"))
        }
        if c == "-", i == 0 { return .refused(why: "a duration cannot be negative", fix: .examples) }
        let why = "'\(c)' has no place in a duration"
        guard repairing else { return .refused(why: why, fix: .examples) }
        if c == ",", i > 0, i + 1 < pieces.count, pieces[i - 1].kind == .number, pieces[i + 1].kind == .number,
           pieces[i - 1].range.upperBound == p.range.lowerBound, p.range.upperBound == pieces[i + 1].range.lowerBound {
            let point = replacing(text, p.range, with: ".")
            if case .seconds = reading(point, repairing: false) { return .refused(why: why, fix: .meant(point)) }
        }
        let without = spaced(replacing(text, p.range, with: " "))
        if case .seconds = reading(without, repairing: false) { return .refused(why: why, fix: .meant(without)) }
        return .refused(why: why, fix: .examples)
    }

    /// The text with its white space runs made single spaces, and none at either end.
    static func spaced(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    static func replacing(_ text: String, _ range: Range<String.Index>, with replacement: String) -> String {
        var s = text
        s.replaceSubrange(range, with: replacement)
        return s
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

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
