extension ConfigFiles {
    public static let scheduleSection = "Schedule"
    public static let scheduleKeys = ["Name", "Window", "Days", "Selections", "Users", "Mode"] + MoreTimePolicy.keys

    /// Reads one file of `schedules.d/` (§7): a `[Schedule]` section with `Name=`,
    /// `Window=HH:MM-HH:MM` and `Selections=` (all required), `Days=` (default daily) and
    /// `Mode=` (`block`, the default, or `allow-only`: W2, the selections stay allowed).
    ///
    /// - `Window=13:05-13:05` is a 24-hour window (T2), never refused.
    /// - `Days=` takes what `WeekdaySet.parse` takes (`mon-fri`, `fri-mon`, `weekends`, ...);
    ///   the set applies to the day a window starts (T3). Empty means daily again.
    /// - `Selections=` is a list like `Domains=`: it may repeat, an empty assignment empties
    ///   it, duplicates are dropped. Whether the names exist is for the caller to check
    ///   against the catalog and `selections.d/`, which this file cannot see.
    public static func parseSchedule(file: String, text: String) throws(CoreError) -> Schedule {
        let reader = ConfigReader(file: file, what: "a schedule file")
        let doc = try INIDocument.parse(file: file, text: text)
        let entries = try reader.entries(of: doc, section: scheduleSection)
        var name: String?
        var window: (start: WallTime, end: WallTime)?
        var days = WeekdaySet.all
        var selections: [String] = []
        var moreTime: MoreTimePolicy?
        var users: [String] = []
        var allowOnly = false

        for e in entries {
            let v = e.value
            switch e.key {
            case "Name":
                if !v.isEmpty { try reader.checked(e) { () throws(CoreError) in try Names.validate(v, what: "schedule name") } }
                name = v.isEmpty ? nil : v
            case "Window":
                window = try v.isEmpty ? nil : reader.window(e)
            case "Days":
                days = try reader.days(e)
            case "Selections":
                selections = try reader.selections(e, adding: selections)
            case "Users":
                users = try reader.users(e, adding: users)
            case "Mode":
                // W2: `allow-only`: Selections= is what stays allowed during the window.
                guard ["", "block", "allow-only"].contains(v) else {
                    throw reader.fail(e, "Mode= must be block (the default: the selections are blocked) or allow-only (only the selections are allowed), not '\(v)'")
                }
                allowOnly = v == "allow-only"
            case _ where MoreTimePolicy.keys.contains(e.key):
                moreTime = try reader.moreTime(e, adding: moreTime)
            default:
                throw reader.unknownKey(e, section: scheduleSection, valid: scheduleKeys)
            }
        }

        guard let header = doc.sections.first else {
            throw CoreError(.invalidConfig, "\(file): has no [\(scheduleSection)] section; a schedule file needs one with Name=, Window= and Selections=")
        }
        guard let name else {
            throw reader.fail(header.line, "[\(scheduleSection)] has no Name=; add one, e.g. Name=bedtime")
        }
        guard let window else {
            throw reader.fail(header.line, "[\(scheduleSection)] '\(name)' has no Window=; add one, e.g. Window=22:00-07:00")
        }
        guard !selections.isEmpty else {
            throw reader.fail(header.line, "[\(scheduleSection)] '\(name)' has no Selections=; add the selections it blocks, e.g. Selections=social video")
        }
        let listed = Registry.unique(selections)
        var schedule = Schedule(name: name, selections: allowOnly ? [AllowOnly.expression(allowing: listed)] : listed, days: days,
                                start: window.start, end: window.end, origin: .config(file: file))
        schedule.moreTime = moreTime
        schedule.users = users.isEmpty ? nil : Scope(names: users)
        return schedule
    }
}

extension ConfigReader {
    /// `Selections=`: a list that may repeat and adds up; an empty assignment empties it.
    /// `Users=kid @kids`: a list like `Selections=` (it may repeat, empty empties it).
    func users(_ e: INIEntry, adding so_far: [String]) throws(CoreError) -> [String] {
        guard !e.value.isEmpty else { return [] }
        let names = try words(e)
        try checked(e) { () throws(CoreError) in try Scope.validate(names) }
        return so_far + names
    }

    func selections(_ e: INIEntry, adding so_far: [String]) throws(CoreError) -> [String] {
        guard !e.value.isEmpty else { return [] }
        var out = so_far
        for word in try words(e) {
            try checked(e) { () throws(CoreError) in try Names.validate(word, what: "selection name") }
            out.append(word)
        }
        return out
    }

    /// `Days=`: what `WeekdaySet.parse` takes; empty means daily again.
    func days(_ e: INIEntry) throws(CoreError) -> WeekdaySet {
        e.value.isEmpty ? .all : try checked(e) { () throws(CoreError) in try WeekdaySet.parse(e.value) }
    }

    func window(_ e: INIEntry) throws(CoreError) -> (start: WallTime, end: WallTime) {
        let window = try checked(e) { () throws(CoreError) in try WallTime.window(e.value, trimmingINISpace: true) }
        guard let window else {
            throw fail(e, "Window= must be two times of day joined by '-', such as 22:00-07:00, not '\(e.value)'")
        }
        return window
    }
}
