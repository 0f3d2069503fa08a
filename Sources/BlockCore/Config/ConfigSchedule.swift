extension ConfigFiles {
    public static let scheduleSection = "Schedule"
    public static let scheduleKeys = ["Name", "Window", "Days", "Selections", "Users", "Mode", "Session", "Action"] + MoreTimePolicy.keys

    /// Reads one file of `schedules.d/` (§7): a `[Schedule]` section with `Name=`,
    /// `Window=HH:MM-HH:MM` and `Selections=` (all required), `Days=` (default daily) and
    /// `Mode=` (`block`, the default, or `allow-only`: W2, the selections stay allowed).
    /// `Session=yes` makes it allowed hours instead: no `Selections=`, and during the window
    /// the people it is for are kept off the screen (`Action=lock`, the default, or `logout`,
    /// `suspend`, `poweroff`).
    ///
    /// - `Window=13:05-13:05` is a 24-hour window (T2), never refused.
    /// - `Days=` takes what `WeekdaySet.parse` takes (`mon-fri`, `fri-mon`, `weekends`, ...);
    ///   the set applies to the day a window starts (T3). Empty means daily again.
    /// - `Selections=` is a list like `Domains=`: it may repeat, an empty assignment empties
    ///   it, duplicates are dropped. Whether the names exist is for the caller to check
    ///   against the catalog and `selections.d/`, which this file cannot see.
    public static func parseSchedule(file: String, text: String) throws(CoreError) -> Schedule {
        let (schedule, problems) = readSchedule(file: file, text: text)
        if let first = problems.first { throw first.error }
        return schedule!
    }

    /// `parseSchedule`, with every problem of the file, by line (§7); nil when there is any.
    public static func readSchedule(file: String, text: String) -> (Schedule?, [ConfigProblem]) {
        let reader = ConfigReader(file: file, what: "a schedule file")
        var list = ProblemList()
        let (doc, malformed) = INIDocument.read(file: file, text: text)
        list.errors = malformed
        let (entries, misplaced) = reader.entries(of: doc, section: scheduleSection, problems: &list.errors)
        var name: String?
        var window: (start: WallTime, end: WallTime)?
        var days = WeekdaySet.all
        var selections: [String] = []
        var moreTime: MoreTimePolicy?
        var users: [String] = []
        var allowOnly = false
        var session = false
        var action: SessionAction?

        for e in entries {
            let v = e.value
            list.check(e) { () throws(CoreError) in
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
                        let hint = ConfigReader.didYouMean(v, among: ["block", "allow-only"])
                        throw reader.fail(e, "Mode= must be block (the default: the selections are blocked) or allow-only (only the selections are allowed), not '\(v)'\(hint)")
                    }
                    allowOnly = v == "allow-only"
                case "Session":
                    session = try v.isEmpty ? false : reader.boolean(e)
                case "Action":
                    action = try reader.sessionAction(e)
                case _ where MoreTimePolicy.keys.contains(e.key):
                    moreTime = try reader.moreTime(e, adding: moreTime)
                default:
                    throw reader.unknownKey(e, section: scheduleSection, valid: scheduleKeys)
                }
            }
        }

        if doc.sections.isEmpty {
            if malformed.isEmpty {
                list.errors.append(CoreError(.invalidConfig, "\(file): has no [\(scheduleSection)] section; a schedule file needs one with Name=, Window= and Selections="))
            }
        } else if !misplaced {
            let header = doc.sections[0].line
            let called = name.map { " '\($0)'" } ?? ""
            if name == nil, !list.refused.contains("Name") {
                list.errors.append(reader.fail(header, "[\(scheduleSection)] has no Name=; add one, e.g. Name=bedtime"))
            }
            if window == nil, !list.refused.contains("Window") {
                list.errors.append(reader.fail(header, "[\(scheduleSection)]\(called) has no Window=; add one, e.g. Window=22:00-07:00"))
            }
            if session, !selections.isEmpty || allowOnly {
                list.errors.append(reader.fail(header, "[\(scheduleSection)]\(called) has Session=yes and \(allowOnly ? "Mode=allow-only" : "Selections="); allowed hours keep people off the screen as a whole, so drop \(allowOnly ? "Mode=" : "Selections=")"))
            } else if !session, action != nil {
                list.errors.append(reader.fail(header, "[\(scheduleSection)]\(called) has Action= without Session=yes; Action= is what allowed hours do to the sessions"))
            } else if selections.isEmpty, !session, !list.refused.contains("Selections") {
                list.errors.append(reader.fail(header, "[\(scheduleSection)]\(called) has no Selections=; add the selections it blocks, e.g. Selections=social video, or Session=yes for allowed hours"))
            }
        }
        let problems = list.problems(file: file)
        guard problems.isEmpty, let name, let window else { return (nil, problems) }
        let listed = Registry.unique(selections)
        var schedule = Schedule(name: name, selections: allowOnly ? [AllowOnly.expression(allowing: listed)] : listed, days: days,
                                start: window.start, end: window.end, origin: .config(file: file))
        schedule.moreTime = moreTime
        schedule.users = users.isEmpty ? nil : Scope(names: users)
        schedule.session = session ? action ?? .lock : nil
        return (schedule, [])
    }
}

extension ConfigReader {
    /// `Action=` of a screen-time limit or of allowed hours: one of `SessionAction`'s words.
    func sessionAction(_ e: INIEntry) throws(CoreError) -> SessionAction? {
        guard !e.value.isEmpty else { return nil }
        guard let action = SessionAction(rawValue: e.value) else {
            let words = SessionAction.allCases.map(\.rawValue)
            throw fail(e, "Action=\(e.value) is not an action; use one of \(words.joined(separator: ", "))\(ConfigReader.didYouMean(e.value, among: words))")
        }
        return action
    }

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
        guard !e.value.isEmpty else { return .all }
        do throws(CoreError) { return try WeekdaySet.parse(e.value) } catch {
            let hint = ConfigReader.days(nearest: e.value).map { "; did you mean \(e.key)=\($0)?" } ?? ""
            throw fail(e, "\(e.key)=: \(error.message)\(hint)")
        }
    }

    /// `Days=` with each word that is no day put right (`mon-fir` → `mon-fri`, `wekends` →
    /// `weekends`); nil when some word is near no day, or the result still does not parse.
    static func days(nearest text: String) -> String? {
        if !text.contains(","), !text.contains("-"), let word = Suggestion.nearest(to: text, among: ["daily", "weekdays", "weekends"]) {
            return word
        }
        let names = Weekday.names + Weekday.longNames
        var changed = false, lost = false
        let out = text.split(separator: ",", omittingEmptySubsequences: false).map { item in
            item.split(separator: "-", omittingEmptySubsequences: false).map { raw -> String in
                let part = String(raw).trimmingINISpace()
                if Weekday.parse(part) != nil { return part }
                guard let near = Suggestion.nearest(to: part, among: names) else {
                    lost = true
                    return part
                }
                changed = true
                return near
            }.joined(separator: "-")
        }.joined(separator: ",")
        guard changed, !lost, (try? WeekdaySet.parse(out)) != nil else { return nil }
        return out
    }

    func window(_ e: INIEntry) throws(CoreError) -> (start: WallTime, end: WallTime) {
        let window = try checked(e) { () throws(CoreError) in try WallTime.window(e.value, trimmingINISpace: true) }
        guard let window else {
            throw fail(e, "Window= must be two times of day joined by '-', such as 22:00-07:00, not '\(e.value)'")
        }
        return window
    }
}
