extension ConfigFiles {
    public static let limitSection = "Limit"
    public static let limitKeys = ["Name", "Daily", "Days", "Warn", "Selections", "Users"] + MoreTimePolicy.keys

    /// Reads one file of `limits.d/` (§9): a `[Limit]` section with `Name=`, `Daily=`
    /// (the allowance per day, a DURATION up to 24h) and `Selections=` (all required), `Days=`
    /// (default daily) and `Warn=` (a DURATION shorter than `Daily=`, optional). List and
    /// reset rules are those of schedule files.
    public static func parseLimit(file: String, text: String) throws(CoreError) -> Limit {
        let reader = ConfigReader(file: file, what: "a limit file")
        let doc = try INIDocument.parse(file: file, text: text)
        let entries = try reader.entries(of: doc, section: limitSection)
        var name: String?
        var daily: Int?
        var warn: Int?
        var days = WeekdaySet.all
        var selections: [String] = []
        var moreTime: MoreTimePolicy?
        var users: [String] = []
        for e in entries {
            let v = e.value
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
            case _ where MoreTimePolicy.keys.contains(e.key):
                moreTime = try reader.moreTime(e, adding: moreTime)
            default:
                throw reader.unknownKey(e, section: limitSection, valid: limitKeys)
            }
        }
        guard let header = doc.sections.first else {
            throw CoreError(.invalidConfig, "\(file): has no [\(limitSection)] section; a limit file needs one with Name=, Daily= and Selections=")
        }
        guard let name else { throw reader.fail(header.line, "[\(limitSection)] has no Name=; add one, e.g. Name=games") }
        guard let daily else {
            throw reader.fail(header.line, "[\(limitSection)] '\(name)' has no Daily=; add the allowance per day, e.g. Daily=1h")
        }
        guard !selections.isEmpty else {
            throw reader.fail(header.line, "[\(limitSection)] '\(name)' has no Selections=; add the selections it limits, e.g. Selections=steam")
        }
        if let warn, warn >= daily {
            throw reader.fail(header.line, "[\(limitSection)] '\(name)' has Warn= not shorter than Daily=; warn before the allowance runs out")
        }
        var limit = Limit(name: name, selections: Registry.unique(selections), seconds: daily, days: days, warnSeconds: warn,
                         origin: .config(file: file))
        limit.moreTime = moreTime
        limit.users = users.isEmpty ? nil : Scope(names: users)
        return limit
    }
}
