/// The rules a request must meet, one function per request. blockc checks them before it
/// sends (so a mistake is a usage error, exit 2, without a round trip), the protocol checks
/// them on receipt (a third-party client may send anything) and the registry checks them
/// before it changes anything (config-free callers, tests); all three call the same
/// function, so the layers cannot disagree about what is valid. What only the daemon can
/// know (the clock, the cap, names already taken, permissions) stays in the registry.
extension Request.StartArguments {
    /// T1: 1 to 256 selections, a duration from 1s to 366d when one is given, and a valid
    /// block name when one is given.
    public func validate() throws(CoreError) {
        guard (1...256).contains(selections.count) else {
            throw CoreError(.usage, "name 1 to 256 selections to block, not \(selections.count)")
        }
        if let seconds, !(DurationText.minimum...DurationText.maximum).contains(seconds) {
            throw CoreError(.invalidDuration, "a block lasts from 1s to 366d (\(DurationText.maximum) seconds), not \(seconds) seconds")
        }
        if let name { try Names.validate(name, what: "block name") }
    }
}

extension Schedule {
    /// T2: a valid name, at least one selection (none for allowed hours) and at least one day
    /// (any two times of day make a window: equal ends mean 24 hours).
    public func validate() throws(CoreError) {
        try Names.validate(name, what: "schedule name")
        if session != nil {
            guard selections.isEmpty else {
                throw CoreError(.usage, "a schedule of allowed hours keeps people off the screen, not off apps or sites: give it no selections")
            }
        } else {
            guard !selections.isEmpty else { throw CoreError(.usage, "name at least one selection for the schedule, or make it keep people off the screen (--session, Session=)") }
        }
        guard days != [] else { throw CoreError(.invalidDays, "the schedule has no days; give at least one") }
    }
}

extension Limit {
    /// §9: a valid name, at least one selection and one day, an allowance from 1s to 24h,
    /// and a warning, if any, that comes before the allowance is used up.
    public func validate() throws(CoreError) {
        try Names.validate(name, what: "limit name")
        if session != nil {
            guard selections.isEmpty else {
                throw CoreError(.usage, "a screen-time limit counts the time at the screen, not apps or sites: give it no selections")
            }
        } else {
            guard !selections.isEmpty else { throw CoreError(.usage, "name at least one selection for the limit, or make it a screen-time limit (--session, Session=)") }
        }
        if selections.contains(where: AllowOnly.isExpression) {
            throw CoreError(.usage, "a limit counts the time apps run, so it cannot allow only some things; allow-only time is a block or a schedule ('blockc start --allow-only', 'blockc schedule add --allow-only', Mode=allow-only)")
        }
        guard days != [] else { throw CoreError(.invalidDays, "the limit has no days; give at least one") }
        guard (DurationText.minimum...86_400).contains(seconds) else {
            throw CoreError(.invalidDuration, "a daily limit is from 1s to 24h (86400 seconds), not \(seconds) seconds")
        }
        if let warn = warnSeconds, !(1..<seconds).contains(warn) {
            throw CoreError(.invalidDuration, "the warning (\(DurationText.format(warn))) must be at least 1s and shorter than the limit itself (\(DurationText.format(seconds)))")
        }
    }

    /// §9, B3: a limit counts the time its selections' apps run and the time their sites are in
    /// the person's focused browser tab (blockd's extension reports it); one whose selections
    /// name neither could never be used up, so it is refused instead of accepted and never
    /// firing. A URL prefix alone is not counted: the extension reports sites, not pages.
    public static func checkCountable(_ name: String, _ selections: [Selection]) throws(CoreError) {
        guard !selections.isEmpty, selections.allSatisfy({ $0.apps.isEmpty && $0.domains.isEmpty }) else { return }
        let names = selections.map { "'\($0.name)'" }.joined(separator: ", ")
        let verb = selections.count == 1 ? "names" : "name"
        throw CoreError(.usage, "limit '\(name)' could never be used up: a limit counts the time apps run and sites are open, and \(names) \(verb) no app and no domain; "
            + "limit a selection with apps or domains (Apps= or Domains= in selections.d), or block its pages at set times with 'blockc schedule add'")
    }
}
