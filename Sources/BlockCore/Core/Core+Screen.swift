import FoundationEssentials

/// Screen time: the login sessions the edge last reported (logind), counted into the report's
/// ledger (`screen`, per person and local day) and re-evaluated when an idle session's grace
/// runs out (the timer). Kept in memory only: after a restart nobody is at the screen until the
/// edge reports the sessions again (time nobody observed is not counted).
extension Core {
    /// The sessions now, as the edge reads them (nil: not known, logind does not answer: nobody
    /// counts as at the screen, and apps count whoever runs them). Whether the ledger changed
    /// (the engine then saves).
    @discardableResult
    mutating func sessionsObserved(_ sessions: [LoginSession]?, now: Date) -> Bool {
        loginSessions = sessions ?? []
        let followed = sessionsFollowed
        sessionsFollowed = sessions != nil
        defer { armNextTransition(now: now) }  // an idle grace ends at its own instant
        let changed = settleScreen(now: now)
        guard followed != sessionsFollowed, !appsRunning.isEmpty else { return changed }
        countApps(now: now)  // R1: apps count for people at the screen only while sessions are known
        return true
    }

    /// Counts the last reported sessions at `now` (also on every wake: an idle session stops
    /// counting at its own instant, without a new report).
    @discardableResult
    mutating func settleScreen(now: Date) -> Bool {
        let people = ScreenTime.presence(loginSessions, now: now, idleSeconds: idleSeconds)
        screenDeadline = people.values.compactMap(\.until).min()
        anyoneAtScreen = people.values.contains(where: \.counting)
        var changed = state.history.setScreen(people, at: now, clock: local)
        let present = Set(people.filter(\.value.counting).keys)
        if present != atScreen {
            atScreen = present
            if sessionsFollowed && !appsRunning.isEmpty {  // R1: apps count with their people at the screen
                countApps(now: now)
                changed = true
            }
        }
        if changed { emit(.persist) }
        // A screen-time limit counts each person's time at the screen as an app limit counts
        // its apps' running time: the same ledger, allowance, warnings and more time.
        var uses: Set<LimitUse> = []
        let limits = registry.index.screenLimits
        for (uid, p) in people where p.counting {
            for l in limits where l.users?.contains(uid) ?? true {
                uses.insert(LimitUse(limit: l.name, uid: uid))
            }
        }
        if uses != screenLimitUses {
            screenLimitUses = uses
            applyLimitUses(now: now)
        }
        return changed
    }

    /// How long an idle session still counts as a person at the screen (`IdleSeconds=`).
    var idleSeconds: TimeInterval { TimeInterval(config.daemon.idleSeconds) }

    /// What keeps a person off the screen now: a screen-time limit whose allowance they used up
    /// today, while they are at the screen; allowed hours (a schedule with `session`) whose
    /// window holds them, while they have any unlocked session here. Each acts once when they
    /// get there and again whenever they come back (unlock, log in). Suspend and power off act
    /// on the machine; the strongest action wins. Sessions of a person more time lifts the
    /// hours for are left alone (M3), and root's always.
    mutating func enforceSessionLimits(now: Date) {
        guard !loginSessions.isEmpty || !actedSessions.isEmpty || !lockDeadlines.isEmpty else { return }  // nobody at any screen: nothing to walk
        let people = ScreenTime.presence(loginSessions, now: now, idleSeconds: idleSeconds)
        let open = loginSessions.filter { $0.isLocal && !$0.locked }
        let unlocked = Set(open.map(\.uid))
        actedSessions.formIntersection(open.map(\.id))  // locked or gone since: act again when unlocked
        var due: [UInt32: Hold] = [:]
        func hold(_ uid: UInt32, _ h: Hold) {
            if let old = due[uid], old.action >= h.action { return }  // the stronger acts
            due[uid] = h
        }
        for l in registry.index.screenLimits {
            for uid in l.state?.people.keys.sorted() ?? [] where people[uid]?.counting == true {
                if let h = limitHolding(l, uid, now: now) { hold(uid, h) }
            }
        }
        for uid in unlocked {
            if let h = hoursHolding(uid, now: now) { hold(uid, h) }
        }
        due[0] = nil  // root is never kept off the screen: there is always a way in to put things right
        for (uid, h) in due.sorted(by: { $0.key < $1.key }) {
            // Each unlocked session once: a new login acts at once, whatever else is open.
            let fresh = open.filter { $0.uid == uid && !actedSessions.contains($0.id) }
            guard !fresh.isEmpty else { continue }
            actedSessions.formUnion(fresh.map(\.id))
            act(h, on: uid, fresh: fresh, now: now)
        }
        endUnlocked(due, now: now)
    }

    /// How long a desktop session has to say it is locked (its screen locker sets LockedHint)
    /// after logind was asked to lock it.
    static let lockGrace: TimeInterval = 10

    /// A desktop asked to lock that has not said it is locked within `lockGrace` has no screen
    /// locker that answers logind (a bare window manager): it is ended, so that a person kept
    /// off the screen is off it. One no longer held, locked or gone is let be.
    private mutating func endUnlocked(_ due: [UInt32: Hold], now: Date) {
        guard !lockDeadlines.isEmpty else { return }
        let sessions = Dictionary(loginSessions.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for (id, pending) in lockDeadlines.sorted(by: { $0.key < $1.key }) {
            guard let s = sessions[id], !s.locked, let h = due[pending.uid] else { lockDeadlines[id] = nil; continue }
            guard pending.by <= now else { continue }
            lockDeadlines[id] = nil
            emit(.journal(JournalEntry("Session \(id) of \(who(pending.uid)) did not lock within \(Int(Self.lockGrace)) s (no screen locker answers logind's Lock there): ending it, as '\(h.activity)' keeps \(who(pending.uid)) off the screen",
                                       priority: .notice, event: .session, fields: [(.activity, h.activity), (.uid, String(pending.uid))])))
            emit(.sessionAction(.logout, uid: pending.uid, sessions: [id]))
        }
    }

    /// Before allowed hours begin, as Screen Time before Downtime: 5 minutes and 1 minute before,
    /// the people they are for are told what will happen (a `warning` event with `session`, which
    /// the agent shows, and the journal), once per window and mark.
    static let hoursWarnings: [TimeInterval] = [300, 60]

    mutating func warnBeforeHours(now: Date) {
        warnedHours = warnedHours.filter { $0.value > now }  // windows begun: forgotten
        for s in registry.index.allowedHours where s.activeWindow(at: now, clock: local) == nil {
            guard let start = s.nextWindow(after: now, clock: local)?.start else { continue }
            let left = start.timeIntervalSince(now)
            let due = Self.hoursWarnings.filter { left <= $0 }
            guard let mark = due.min() else { continue }
            let key = "\(s.name)@\(start.timeIntervalSince1970)#\(Int(mark))"
            guard warnedHours[key] == nil else { continue }
            for m in due { warnedHours["\(s.name)@\(start.timeIntervalSince1970)#\(Int(m))"] = start }  // one warning covers those passed with it
            publish(.hoursWarning(s, remaining: DurationText.formatRemaining(left), starts: start), now: now)
        }
    }

    /// The next instant a warning before allowed hours is due (nil: none ahead).
    func nextHoursWarning(after now: Date) -> Date? {
        var next: Date?
        for s in registry.index.allowedHours where s.activeWindow(at: now, clock: local) == nil {
            guard let start = s.nextWindow(after: now, clock: local)?.start else { continue }
            for mark in Self.hoursWarnings {
                let at = start.addingTimeInterval(-mark)
                if at > now, next.map({ at < $0 }) ?? true { next = at }
            }
        }
        return next
    }

    /// One reason a person is kept off the screen.
    struct Hold {
        var action: SessionAction
        var activity: String
        var kind: Activity.Kind
        var until: Date
    }

    /// A1, screen time: a member cannot lift early what keeps them off the screen: their own
    /// allowed hours during the window, or a screen-time limit they used up today, are not
    /// removed by them until it ends (self-control, as `--lock` is for a block); an
    /// administrator may.
    func checkNotHeldOff(removing name: String, peer: Peer, now: Date) throws(CoreError) {
        let actor = registry.actor(peer)
        guard actor.rank < .admin, let activity = registry.known(name, to: actor) else { return }
        let hold: Hold? = switch activity {
        case .schedule(let s): hoursHold(s, for: peer.uid, now: now)
        case .limit(let l): limitHolding(l.refreshed(ledger: state.usage, at: now, clock: local), peer.uid, now: now)
        case .block: nil
        }
        guard let until = hold?.until else { return }
        let what = activity.kind == .limit ? "screen-time limit '\(activity.name)' keeps" : "allowed hours '\(activity.name)' keep"
        throw CoreError(.locked, "\(what) you off the screen until \(local.spoken(until, from: now)), and a member cannot remove them early; remove them after that, or ask an administrator")
    }

    /// The allowed hours that keep `uid` off the screen at `now` (the strongest action, then the
    /// latest end), unless more time lifts them for `uid`; nil for root, whom nothing keeps off.
    func hoursHolding(_ uid: UInt32, now: Date) -> Hold? {
        guard uid != 0 else { return nil }
        var best: Hold?
        for s in registry.index.allowedHours {
            guard let h = hoursHold(s, for: uid, now: now), !hoursLifted(s.name, for: uid, at: now) else { continue }
            if let b = best, (b.action, b.until) >= (h.action, h.until) { continue }
            best = h
        }
        return best
    }

    /// What allowed hours `s` do to `uid` now: nil outside its window, or when it is not for them.
    func hoursHold(_ s: Schedule, for uid: UInt32, now: Date) -> Hold? {
        guard let action = s.session, s.users?.contains(uid) ?? true, let window = s.activeWindow(at: now, clock: local) else { return nil }
        return Hold(action: action, activity: s.name, kind: .schedule, until: window.end)
    }

    /// What screen-time limit `l` (its state as of `now`) does to `uid`: nil unless their
    /// allowance is used up today.
    func limitHolding(_ l: Limit, _ uid: UInt32, now: Date) -> Hold? {
        guard let action = l.session, let window = l.state?.people[uid]?.window, window.contains(now) else { return nil }
        return Hold(action: action, activity: l.name, kind: .limit, until: window.end)
    }

    /// `screen`: whether `uid` may be at the screen now, or what keeps them off it: allowed
    /// hours first (they refuse a login: `blockc screen --pam`), then a screen-time limit used
    /// up today.
    func screenReply(_ uid: UInt32, now: Date) -> ScreenReply {
        var r = ScreenReply(user: who(uid), uid: Int(uid))
        var h = hoursHolding(uid, now: now)
        if h == nil, uid != 0 {
            for l in registry.index.screenLimits where l.users?.contains(uid) ?? true {
                h = limitHolding(l.refreshed(ledger: state.usage, at: now, clock: local), uid, now: now)
                if h != nil { break }
            }
        }
        if let h { (r.held, r.activity, r.kind, r.until, r.action) = (true, h.activity, h.kind.rawValue, local.iso8601(h.until), h.action.rawValue) }
        return r
    }

    /// `status`: everyone kept off the screen now, each with what keeps them (as `screen` says
    /// it), in uid order: the people allowed hours or a used-up screen-time limit name, and
    /// for hours for everyone whoever has a local session. Root never; nothing to look at
    /// while no activity keeps anyone off the screen.
    public func screenHolds(now: Date) -> [ScreenReply] {
        let limits = registry.index.screenLimits
        let hours = registry.index.allowedHours
        guard !hours.isEmpty || !limits.isEmpty else { return [] }
        var uids = Set(loginSessions.filter(\.isLocal).map(\.uid))
        for s in hours { uids.formUnion(s.users?.uids ?? []) }
        for l in limits {
            if let people = l.refreshed(ledger: state.usage, at: now, clock: local).state?.people { uids.formUnion(people.keys) }
        }
        uids.remove(0)
        return uids.sorted().map { screenReply($0, now: now) }.filter(\.held)
    }

    /// M3: whether a grant in force lifts allowed hours `name` for `uid` (more time asked
    /// over the schedule itself: it holds no selection).
    func hoursLifted(_ name: String, for uid: UInt32, at now: Date) -> Bool {
        book.grants.contains { $0.uid == uid && $0.selection == name && $0.activities.contains(name) && $0.window.contains(now) }
    }

    /// The journal line and the effects of `h` on `uid`'s `fresh` sessions (unlocked, not acted
    /// on yet). A lock locks each desktop session (its screen locker answers logind's Lock) and
    /// ends each text session, which nothing could lock; logout ends all of theirs here.
    private mutating func act(_ h: Hold, on uid: UInt32, fresh open: [LoginSession], now: Date) {
        let mine = loginSessions.filter { $0.uid == uid && $0.isLocal }
        let (lock, end): ([String], [String]) = switch h.action {
        case .lock: (open.filter(\.graphical).map(\.id).sorted(), open.filter { !$0.graphical }.map(\.id).sorted())
        case .logout: ([], mine.map(\.id).sorted())
        case .suspend, .poweroff: ([], [])
        }
        func count(_ n: Int, _ kind: String) -> String { n == 1 ? "their \(kind)session" : "their \(n) \(kind)sessions" }
        let what: String = switch h.action {
        case .lock where end.isEmpty: "locking \(count(lock.count, ""))"
        case .lock where lock.isEmpty: "ending \(count(end.count, "text ")) (a text session has no screen lock)"
        case .lock: "locking \(count(lock.count, "desktop ")) and ending \(count(end.count, "text ")) (a text session has no screen lock)"
        case .logout: "ending \(count(end.count, ""))"
        case .suspend: "suspending the machine"
        case .poweroff: "powering the machine off"
        }
        let message = switch h.kind {
        case .schedule: "Allowed hours '\(h.activity)' keep \(who(uid)) off the screen until \(local.spoken(h.until, from: now)): \(what) (Action=\(h.action.rawValue))"
        default: "Screen time limit '\(h.activity)' is used up for \(who(uid)): \(what) (Action=\(h.action.rawValue))"
        }
        emit(.journal(JournalEntry(message, priority: .notice, event: .session,
                                   fields: [(.activity, h.activity), (.uid, String(uid))])))
        switch h.action {
        case .lock:
            for id in lock { lockDeadlines[id] = (uid, now.addingTimeInterval(Self.lockGrace)) }
            if !lock.isEmpty { emit(.sessionAction(.lock, uid: uid, sessions: lock)) }
            if !end.isEmpty { emit(.sessionAction(.logout, uid: uid, sessions: end)) }
        case .logout: emit(.sessionAction(.logout, uid: uid, sessions: end))
        case .suspend, .poweroff: emit(.sessionAction(h.action, uid: uid, sessions: []))
        }
    }
}
