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
        // A screen-time limit counts each person's time at the screen as an app limit counts
        // its apps' running time: the same ledger, allowance, warnings and more time.
        var uses: Set<LimitUse> = []
        for (uid, p) in people where p.counting {
            for l in registry.index.limits where l.session != nil && (l.users?.contains(uid) ?? true) {
                uses.insert(LimitUse(limit: l.name, uid: uid))
            }
        }
        if uses != screenLimitUses {
            screenLimitUses = uses
            applyLimitUses(now: now)
        }
        return changed
    }

    /// A screen-time limit's action on each person whose allowance is used up today and who is
    /// at the screen: once when they get there, again whenever they come back (unlock, log in)
    /// the same day. Suspend and power off act on the machine; the strongest action wins.
    mutating func enforceSessionLimits(now: Date) {
        guard !loginSessions.isEmpty || !actedOnScreen.isEmpty else { return }  // nobody at any screen: nothing to walk
        let people = ScreenTime.presence(loginSessions, now: now)
        actedOnScreen = actedOnScreen.filter { people[$0]?.counting == true }  // away since: act again when back
        var due: [UInt32: (SessionAction, Limit)] = [:]
        for l in registry.index.limits {
            guard let action = l.session, let state = l.state else { continue }
            for (uid, p) in state.people where p.window?.contains(now) == true && people[uid]?.counting == true {
                let order = SessionAction.allCases
                if let (old, _) = due[uid], order.firstIndex(of: old)! >= order.firstIndex(of: action)! { continue }
                due[uid] = (action, l)
            }
        }
        for (uid, (action, limit)) in due.sorted(by: { $0.key < $1.key }) where !actedOnScreen.contains(uid) {
            actedOnScreen.insert(uid)
            let sessions = loginSessions.filter { $0.uid == uid && $0.isUser && !$0.remote && $0.active && !$0.locked }.map(\.id).sorted()
            let what = switch action {
            case .lock: "locking \(sessions.count == 1 ? "their session" : "their \(sessions.count) sessions")"
            case .logout: "ending \(sessions.count == 1 ? "their session" : "their \(sessions.count) sessions")"
            case .suspend: "suspending the machine"
            case .poweroff: "powering the machine off"
            }
            emit(.journal(JournalEntry("Screen time limit '\(limit.name)' is used up for \(who(uid)): \(what) (Action=\(action.rawValue))",
                                       priority: .notice, event: .limit, fields: [(.activity, limit.name), (.uid, String(uid))])))
            emit(.sessionAction(action, uid: uid, sessions: sessions))
        }
    }
}
