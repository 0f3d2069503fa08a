import BlockCore

extension CommandParser {
    /// `more NAME (DURATION | --today) [--reason TEXT]` (M1: a selection or a limit's name),
    /// checked as blockd checks it.
    mutating func more() throws(CoreError) -> Request.MoreArguments {
        let reason = value("--reason"), today = take("--today")
        guard !words.isEmpty else { throw scanner.usage("more needs a NAME (a selection or a limit) and a DURATION (or --today)") }
        let selection = words.removeFirst()
        let duration = words.isEmpty ? nil : takeDuration()
        guard today != (duration != nil && words.isEmpty) else {
            throw scanner.usage(today ? "give a DURATION or --today, not both" : "more needs a DURATION such as 15m, or --today")
        }
        let seconds = try duration.map { text throws(CoreError) in try DurationText.parse(text) }
        let more = Request.MoreArguments(selection: selection, seconds: seconds, today: today, reason: reason)
        try more.validate()
        return more
    }

    /// `approve ID [DURATION]` (M2).
    mutating func approve() throws(CoreError) -> Request {
        let needs = "approve needs ID and optionally a DURATION"
        guard !words.isEmpty else { throw scanner.usage(needs) }
        let id = words.removeFirst()
        let duration = words.isEmpty ? nil : takeDuration()
        guard words.isEmpty else { throw scanner.usage(needs) }
        let seconds = try duration.map { text throws(CoreError) in try DurationText.parse(text) }
        try Request.validateApproval(id: id, seconds: seconds)
        return .approve(id: id, seconds: seconds)
    }

    /// `deny ID [--reason TEXT]` (M2).
    mutating func deny() throws(CoreError) -> Request {
        let reason = value("--reason")
        let id = try single("ID")
        try Request.validateDenial(id: id, reason: reason)
        return .deny(id: id, reason: reason)
    }

    /// `--more-time no|self|approval`, `--delay DURATION`, `--more-time-per-day DURATION` (M1,
    /// M2), checked as the config keys `MoreTime=`, `Delay=`, `MoreTimePerDay=` are; nil when
    /// none is given, so that the daemon's defaults apply.
    mutating func moreTimeFlags() throws(CoreError) -> MoreTimePolicy? {
        var policy = MoreTimePolicy.standard
        var given = false
        for (flag, key) in [("--more-time", "MoreTime"), ("--delay", "Delay"), ("--more-time-per-day", "MoreTimePerDay")] {
            guard let text = value(flag) else { continue }
            given = true
            do throws(CoreError) { _ = try policy.set(key, text) } catch {
                throw CoreError(.usage, "\(flag): \(error.message)")
            }
        }
        return given ? policy : nil
    }
}
