import BlockCore

extension CommandParser {
    /// R2: `report [--last N [--to DATE] | --day DATE | --week [DATE] | --month [DATE]]
    /// [--user NAME | --all-users] [--by selection|app|user] [--json | --csv | --html FILE]`.
    mutating func report() throws(CoreError) -> ReportArguments {
        // `--json` is taken already, as for every command with a JSON shape.
        let formats = [options.json ? OutputOptions.Format.json : nil, take("--csv") ? .csv : nil, value("--html").map { .html($0) }]
        let given = formats.compactMap { $0 }
        guard given.count <= 1 else { throw scanner.usage("give one of --json, --csv and --html") }
        if let one = given.first {
            guard one != .html("") else { throw scanner.usage("--html needs a file to write, such as --html week.html") }
            options.format = one
        }
        if let by = value("--by") {
            guard let grouping = ReportGrouping(rawValue: by) else {
                throw scanner.usage("--by takes selection, app or user, not '\(by)'")
            }
            options.by = grouping
        }
        var args = ReportArguments()
        try reportPeriod(&args)
        args.view = try takeView()
        if options.by == .user, args.view != .allUsers {
            throw scanner.usage("--by user compares people: give it with --all-users (root and blockd-admin members)")
        }
        try none()
        return args
    }

    /// A DATE: YYYY-MM-DD, or `today` or `yesterday` (local).
    func date(_ text: String) throws(CoreError) -> CivilDate {
        let today = clock.civil(of: now).date
        switch text.lowercased() {
        case "today": return today
        case "yesterday": return today.adding(days: -1)
        default: return try CivilDate.parse(text)
        }
    }

    /// One of `--last N` (with `--to DATE`), `--day DATE`, `--week [DATE]`, `--month [DATE]`.
    private mutating func reportPeriod(_ args: inout ReportArguments) throws(CoreError) {
        let last = value("--last"), to = value("--to"), day = value("--day")
        let week = take("--week"), month = take("--month")
        let given = [last != nil, day != nil, week, month].filter { $0 }.count
        guard given <= 1 else { throw scanner.usage("give one of --last, --day, --week and --month") }
        if to != nil, day != nil || week || month { throw scanner.usage("--to goes with --last; --day, --week and --month take their own date") }
        if let last {
            guard let n = Int(last), ReportArguments.daysRange.contains(n) else {
                throw scanner.usage("--last takes a number of days from 1 to 366, not '\(last)'")
            }
            args.period = .days(n)
        }
        if let to { args.to = try date(to) }
        if let day { (args.period, args.to) = (.days(1), try date(day)) }
        if week || month {
            args.period = week ? .week : .month
            if !words.isEmpty {
                let text = words.removeFirst()
                args.to = try date(month && text.count == 7 ? text + "-01" : text)
            }
        }
    }
}
