import BlockCore

/// §6: `schedule add` (allowed hours too) and `limit add` (§9, screen time), with the words people type unquoted.
extension CommandParser {
    mutating func scheduleAdd() throws(CoreError) -> Schedule {
        let users = try takeUsers()
        guard !words.isEmpty else { throw scanner.usage("schedule add needs a NAME") }
        let name = words.removeFirst()
        let allowOnly = take("--allow-only")
        let session = try sessionFlags(for: "allowed hours")
        let policy = try moreTimeFlags()
        let daily = value("--daily"), weekly = value("--weekly")
        var days = WeekdaySet.all
        var window: String
        switch (daily, weekly) {
        case (let d?, nil): window = d
        case (nil, let w?):
            days = try WeekdaySet.parse(w)
            guard !words.isEmpty else { throw scanner.usage("--weekly DAYS needs the window after it: --weekly mon-fri 09:00-15:00") }
            window = words.removeFirst()
        default:
            throw scanner.usage("schedule add needs exactly one of --daily HH:MM-HH:MM and --weekly DAYS HH:MM-HH:MM")
        }
        window = spacedWindow(window)
        guard let (start, end) = try WallTime.window(window) else {
            throw CoreError(.invalidTime, "'\(window)' is not a window; write HH:MM-HH:MM, e.g. 22:00-07:00")
        }
        if session != nil, allowOnly { throw scanner.usage("--session keeps people off the screen as a whole; --allow-only is for selections: give one of them") }
        guard !words.isEmpty || session != nil else { throw scanner.usage("schedule add needs at least one SELECTION (or --session for allowed hours)") }
        let selections = session != nil ? words : try allowing(allowOnly)
        var schedule = Schedule(name: name, selections: selections, days: days, start: start, end: end)
        schedule.session = session
        try schedule.validate()  // as typed, before the addresses are read
        defer { words = [] }
        (schedule.selections, schedule.moreTime, schedule.users) = (readAddresses(selections), policy, users)
        return schedule
    }

    /// `--daily 12:00 - 13:00` and `12:00- 13:00` as typed: the window's words after the flag
    /// (a lone `-` is never an option), joined.
    mutating func spacedWindow(_ first: String) -> String {
        if first.hasSuffix("-"), !first.hasSuffix("--"), let next = words.first, next.first?.isNumber == true {
            return first + words.removeFirst()
        }
        guard words.count >= 2, words[0] == "-", words[1].first?.isNumber == true else { return first }
        defer { words.removeFirst(2) }
        return first + "-" + words[1]
    }

    mutating func limitAdd() throws(CoreError) -> Limit {
        let users = try takeUsers()
        let sessionAction = try sessionFlags(for: "a screen-time limit")
        let session = sessionAction != nil
        let needs = session ? "limit add --session needs NAME DURATION" : "limit add needs NAME DURATION SELECTION... (or --session for screen time)"
        guard words.count >= 2 || session && words.count >= 1 else { throw scanner.usage(needs) }
        let name = words.removeFirst()
        guard !words.isEmpty else { throw scanner.usage(needs) }
        let duration = takeDuration()
        guard !words.isEmpty || session else { throw scanner.usage(needs) }
        let seconds = try DurationText.parse(duration)
        let days = try value("--days").map { text throws(CoreError) in try WeekdaySet.parse(text) } ?? .all
        let warn = try value("--warn").map { text throws(CoreError) in try DurationText.parse(text) }
        let policy = try moreTimeFlags()
        var limit = Limit(name: name, selections: words, seconds: seconds, days: days, warnSeconds: warn)
        limit.session = sessionAction
        try limit.validate()  // as typed, before the addresses are read
        defer { words = [] }
        (limit.selections, limit.moreTime, limit.users) = (readAddresses(words), policy, users)
        return limit
    }

    /// `--session [--action lock|logout|suspend|poweroff]`: what `what` does to the sessions
    /// (nil: no `--session`, a limit or schedule of apps and sites).
    mutating func sessionFlags(for what: String) throws(CoreError) -> SessionAction? {
        let session = take("--session")
        let action = value("--action")
        guard session else {
            if action != nil { throw scanner.usage("--action is what \(what) does to the sessions: give it with --session") }
            return nil
        }
        guard let action else { return .lock }
        guard let a = SessionAction(rawValue: action) else {
            throw scanner.usage("--action takes \(SessionAction.allCases.map(\.rawValue).joined(separator: ", ")), not '\(action)'")
        }
        return a
    }

    /// The DURATION at the front of `words`, with the words after it that belong to it as
    /// people type them unquoted (`limit add games 1 hour steam`, `more reddit 10 minutes`).
    mutating func takeDuration() -> String {
        let first = words.removeFirst()
        let n = DurationText.wordsContinuing(first, in: words)
        defer { words.removeFirst(n) }
        return ([first] + words.prefix(n)).joined(separator: " ")
    }
}
