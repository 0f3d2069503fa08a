extension ConfigFiles {
    public static let limitSection = "Limit"
    public static let limitKeys = ["Name", "Daily", "Days", "Warn", "Selections", "Users", "Session", "Action"] + MoreTimePolicy.keys

    /// Reads one file of `limits.d/` (§9): a `[Limit]` section with `Name=`, `Daily=`
    /// (the allowance per day, a DURATION up to 24h) and `Selections=` (all required), `Days=`
    /// (default daily) and `Warn=` (a DURATION shorter than `Daily=`, optional). Screen time:
    /// `Session=yes` makes it a limit of the time at the screen, with no `Selections=`, and
    /// `Action=` what it does once used up (lock, the default; logout, suspend, poweroff). List
    /// and reset rules are those of schedule files.
    public static func parseLimit(file: String, text: String) throws(CoreError) -> Limit {
        let (limit, problems) = readLimit(file: file, text: text)
        if let first = problems.first { throw first.error }
        return limit!
    }

    /// `parseLimit`, with every problem of the file, by line (§7); nil when there is any.
    public static func readLimit(file: String, text: String) -> (Limit?, [ConfigProblem]) {
        let reader = ConfigReader(file: file, what: "a limit file")
        var list = ProblemList()
        let (doc, malformed) = INIDocument.read(file: file, text: text)
        list.errors = malformed
        let (entries, misplaced) = reader.entries(of: doc, section: limitSection, problems: &list.errors)
        var name: String?
        var daily: Int?
        var warn: Int?
        var days = WeekdaySet.all
        var selections: [String] = []
        var moreTime: MoreTimePolicy?
        var users: [String] = []
        var session = false
        var action: SessionAction?
        for e in entries {
            let v = e.value
            list.check(e) { () throws(CoreError) in
                switch e.key {
                case "Name":
                    if !v.isEmpty { try reader.checked(e) { () throws(CoreError) in try Names.validate(v, what: "limit name") } }
                    name = v.isEmpty ? nil : v
                case "Daily":
                    daily = try v.isEmpty ? nil : reader.duration(e, in: 1...86_400)
                case "Warn":
                    warn = try v.isEmpty ? nil : reader.duration(e, in: 1...86_400)
                case "Days":
                    days = try reader.days(e)
                case "Selections":
                    selections = try reader.selections(e, adding: selections)
                case "Users":
                    users = try reader.users(e, adding: users)
                case "Session":
                    session = try v.isEmpty ? false : reader.boolean(e)
                case "Action":
                    action = try reader.sessionAction(e)
                case _ where MoreTimePolicy.keys.contains(e.key):
                    moreTime = try reader.moreTime(e, adding: moreTime)
                default:
                    throw reader.unknownKey(e, section: limitSection, valid: limitKeys)
                }
            }
        }
        if doc.sections.isEmpty {
            if malformed.isEmpty {
                list.errors.append(CoreError(.invalidConfig, "\(file): has no [\(limitSection)] section; a limit file needs one with Name=, Daily= and Selections="))
            }
        } else if !misplaced {
            let header = doc.sections[0].line
            let called = name.map { " '\($0)'" } ?? ""
            if name == nil, !list.refused.contains("Name") {
                list.errors.append(reader.fail(header, "[\(limitSection)] has no Name=; add one, e.g. Name=games"))
            }
            if daily == nil, !list.refused.contains("Daily") {
                list.errors.append(reader.fail(header, "[\(limitSection)]\(called) has no Daily=; add the allowance per day, e.g. Daily=1h"))
            }
            if session, !selections.isEmpty {
                list.errors.append(reader.fail(header, "[\(limitSection)]\(called) has Session=yes and Selections=; a screen-time limit counts the time at the screen, so drop Selections="))
            } else if !session, action != nil {
                list.errors.append(reader.fail(header, "[\(limitSection)]\(called) has Action= without Session=yes; Action= is what a screen-time limit does"))
            } else if selections.isEmpty, !session, !list.refused.contains("Selections") {
                list.errors.append(reader.fail(header, "[\(limitSection)]\(called) has no Selections=; add the selections it limits, e.g. Selections=steam, or Session=yes for a screen-time limit"))
            }
            if let warn, let daily, warn >= daily {
                list.errors.append(reader.fail(header, "[\(limitSection)]\(called) has Warn= not shorter than Daily=; warn before the allowance runs out"))
            }
        }
        let problems = list.problems(file: file)
        guard problems.isEmpty, let name, let daily else { return (nil, problems) }
        var limit = Limit(name: name, selections: Registry.unique(selections), seconds: daily, days: days, warnSeconds: warn,
                          origin: .config(file: file))
        limit.moreTime = moreTime
        limit.users = users.isEmpty ? nil : Scope(names: users)
        limit.session = session ? action ?? .lock : nil
        return (limit, [])
    }
}
