import FoundationEssentials

/// Screen time: the login sessions the edge last reported (logind), counted into the report's
/// ledger (`screen`, per person and local day) and re-evaluated when an idle session's grace
/// runs out (the timer). Kept in memory only: after a restart nobody is at the screen until the
/// edge reports the sessions again (time nobody observed is not counted).
extension Core {
    /// The sessions now, as the edge reads them. Whether the ledger changed (the engine then
    /// saves).
    @discardableResult
    public mutating func sessionsObserved(_ sessions: [LoginSession], now: Date) -> Bool {
        loginSessions = sessions
        defer { armNextTransition(now: now) }  // an idle grace ends at its own instant
        return settleScreen(now: now)
    }

    /// Counts the last reported sessions at `now` (also on every wake: an idle session stops
    /// counting at its own instant, without a new report).
    @discardableResult
    mutating func settleScreen(now: Date) -> Bool {
        let people = ScreenTime.presence(loginSessions, now: now)
        screenDeadline = people.values.compactMap(\.until).min()
        anyoneAtScreen = people.values.contains(where: \.counting)
        let changed = state.history.setScreen(people, at: now, clock: local)
        if changed { emit(.persist) }
        return changed
    }
}
