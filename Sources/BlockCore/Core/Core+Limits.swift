import FoundationEssentials

/// §9: daily usage limits. The ledger is fed by a usage monitor (running / not running per
/// limit); before every look at the policy the limits are refreshed from it, so an exhausted
/// limit is just another activity in the union (T5).
extension Core {
    /// From the usage monitor: for each limit, the people with at least one of its processes
    /// running now (§9: each person's time counts against their own allowance). A reconcile
    /// follows.
    mutating func usageChanged(running: Set<LimitUse>, now: Date) {
        appLimitUses = running
        applyLimitUses(now: now)
    }

    /// §9, B3: a person uses a limit while an app of its selections runs for them (the usage
    /// monitor's word) or one of its selections' sites is in their browser's focused, visible
    /// tab (the extension's word, `webSites`): one interval, counted once.
    mutating func applyLimitUses(now: Date) {
        var running = appLimitUses.union(screenLimitUses)
        for (uid, reporters) in webSites {
            for site in Set(reporters.values) {
                for l in registry.index.limits where limitCovers(l, site: site) { running.insert(LimitUse(limit: l.name, uid: uid)) }
            }
        }
        // Only the limits there are, and only the people each is for (the monitor judges that
        // too, when a process starts).
        let scopes = Dictionary(registry.index.limits.map { ($0.name, $0.users) }) { a, _ in a }
        let counted = running.filter { use in scopes[use.limit].map { scope in scope?.contains(use.uid) ?? true } ?? false }
        let wanted = Set(counted.map { UsageLedger.key($0.limit, $0.uid) })
        for key in state.usage.running.keys where !wanted.contains(key) {
            state.usage.setRunning(key, false, at: now, clock: local)
        }
        for key in wanted { state.usage.setRunning(key, true, at: now, clock: local) }
    }

    /// R1: from the usage monitor, the apps it follows running now and for whom; their time
    /// goes into the report's ledger.
    mutating func appsRunning(_ running: Set<RunningApp>, now: Date) {
        appsRunning = running
        countApps(now: now)
        emit(.persist)
        armNextTransition(now: now)
    }

    /// R1: the apps whose running time counts now. Once the edge reports login sessions (screen
    /// time followed), only those of people at the screen: an app runs on for a person who
    /// locked the screen or walked away, as a browser's tab does, and counts no more than it
    /// (B2's rule). Without sessions, every running app counts.
    var countedApps: Set<RunningApp> {
        sessionsFollowed ? appsRunning.filter { atScreen.contains($0.uid) } : appsRunning
    }

    /// R1: opens and closes the ledger's running, foreground and `used` intervals for what counts now.
    mutating func countApps(now: Date) {
        let counted = countedApps
        let open = Set(counted.map { UsageHistory.Open(.running, user: String($0.uid), name: $0.app) })
        state.history.setOpen(open, kind: .running, at: now, clock: local)  // what stopped takes its foreground with it
        refreshForegrounds(at: now)
        recordUsed(at: now, counted: counted)
    }

    /// R1: each user's time in each named selection (at least one of its apps counts) and in any
    /// counted app at all, from what runs now (`counted`: `countedApps`, when the caller has it).
    mutating func recordUsed(at now: Date, counted: Set<RunningApp>? = nil) {
        var open: Set<UsageHistory.Open> = []
        for r in counted ?? countedApps {
            let user = String(r.uid)
            open.insert(UsageHistory.Open(.used, user: user, name: UsageHistory.anyApp))
            for s in appSelections[r.app] ?? [] { open.insert(UsageHistory.Open(.used, user: user, name: s)) }
        }
        // B2: a selection is in use while one of its sites is in the person's focused tab too.
        for (uid, reporters) in webSites {
            for site in Set(reporters.values) {
                for s in webSelections(site) { open.insert(UsageHistory.Open(.used, user: String(uid), name: s)) }
            }
        }
        state.history.setOpen(open, kind: .used, at: now, clock: local)
    }

    /// The limits' apps, for the usage monitor: limit name → its selections' `Apps=` entries,
    /// and the uids of its scope (a per-user limit counts its users' own processes only).
    public var limitedApps: [String: LimitedApps] {
        var out: [String: LimitedApps] = [:]
        for l in registry.index.limits {
            out[l.name] = LimitedApps(apps: l.selections.flatMap { (try? config.catalog.resolve($0))?.apps ?? [] },
                                      users: l.users.map { Set($0.uids) })
        }
        return out
    }

    /// Brings every limit's state up to `now`: checkpoints usage, records the instant an
    /// allowance is used up (logged once, with an event) and gives `--warn` warnings once a day.
    mutating func refreshLimits(now: Date) {
        state.usage.checkpoint(at: now, clock: local)
        if !appsRunning.isEmpty || !webSites.isEmpty || !loginSessions.isEmpty {
            state.history.checkpoint([.running, .used, .foreground, .web, .screen], at: now, clock: local)
        }  // R1, B2 (it walks the open intervals; a foreground is open only while its app runs)
        state.usage.prune(keepingFrom: local.civil(of: now).date)
        state.history.keepLimits(state.usage, inForce: registry.index.limits.map(\.name), today: local.civil(of: now).date)
        // Each person's limit (or an older blockd's pool for everyone) reached or warned of,
        // once a day: as the limit seen by that person, scoped to them (nil uid: the pool).
        var reached: [(Limit, UInt32?)] = []
        var warnings: [(Limit, UInt32?)] = []
        // The ledger is moved out while the registry updates the limits (one value cannot be
        // changed in two places at once), and back after.
        var usage = UsageLedger()
        swap(&usage, &state.usage)
        let local = local
        let users = users
        let name = { (uid: UInt32) in users.person(uid).name }
        let people = usage.people(on: local.civil(of: now).date)
        registry.updateLimits { limit in
            let l = limit.refreshed(ledger: usage, at: now, clock: local, names: name, people: people)
            guard let s = l.state else { return l }
            let people = s.people.map { (key: UsageLedger.key(l.name, $0.key), uid: Optional($0.key), person: $0.value) }
                + [s.pool].compactMap { $0 }.map { (key: l.name, uid: UInt32?.none, person: $0) }
            for (key, uid, p) in people {
                if let w = p.window, w.start <= now, usage.exhaustedAt(key, on: s.day) == nil {
                    usage.markExhausted(key, on: s.day, at: w.start)
                    reached.append((l, uid))
                } else if let warnAt = p.warnAt, warnAt <= now, p.window.map({ $0.start > now }) ?? false,
                          !usage.hasWarned(key + p.warnMark, on: s.day) {
                    // One warning at a time: those the time left has passed too are given with it.
                    for w in l.warnings where w.mark == p.warnMark || Double(w.seconds) >= p.remaining {
                        if !usage.hasWarned(key + w.mark, on: s.day) { usage.markWarned(key + w.mark, on: s.day) }
                    }
                    warnings.append((l, uid))
                }
            }
            return l
        }
        swap(&usage, &state.usage)
        for (l, uid) in reached {
            let mine = personal(l, uid)
            let until = mine.state?.window.map { local.iso8601($0.end) } ?? ""
            publish(.limitReached(mine, until: until), now: now)
        }
        for (l, uid) in warnings {
            let mine = personal(l, uid)
            let remaining = DurationText.formatRemaining(mine.state?.remaining ?? 0)
            let starts = mine.state?.window.map { local.iso8601($0.start) } ?? ""
            publish(.limitWarning(mine, remaining: remaining, starts: starts), now: now)
        }
    }

    /// §9: the limit as one person's, for what is said of it: their figures, scoped to them
    /// (nil: an older blockd's pool, the limit as it is).
    func personal(_ l: Limit, _ uid: UInt32?) -> Limit {
        guard let uid else { return l }
        var mine = l.seen(by: uid)
        mine.users = Scope(names: [who(uid)], uids: [uid])
        return mine
    }

    /// The activities with every limit's usage brought up to `now`, for answers only (nothing
    /// is recorded: the next reconcile does that).
    /// `viewer` (nil: the machine's view) sees a limit's figures as theirs (§9, A1);
    /// `everyone`: with every person's listed (an administrator's view).
    public func activitiesForDisplay(at now: Date, viewer: UInt32? = nil, everyone: Bool = false) -> [Activity] {
        let people = state.usage.people(on: local.civil(of: now).date)
        return registry.activities.map { activity in
            guard case .limit(let l) = activity else { return activity }
            return .limit(l.refreshed(ledger: state.usage, at: now, clock: local, names: who, people: people).seen(by: viewer, everyone: everyone))
        }
    }

    /// Whether an app of a limit, or one the report counts (R1), is running: usage is
    /// checkpointed each minute meanwhile, so a crash loses at most a minute of it.
    var anyCountedAppRunning: Bool { !state.usage.running.isEmpty || !appsRunning.isEmpty || !webSites.isEmpty }

    /// §9: the limits and their apps, for the usage monitor to follow.
    public mutating func followLimits() { emit(.followLimits(limitedApps)) }

    /// R1: tells the usage monitor the apps of the selections some activity names, when they
    /// changed (an unused built-in selection's apps are not followed).
    mutating func followApps(now: Date) {
        var selections: [String: [String]] = [:]
        for s in config.catalog.selections where registry.index.isNamed(s.name) {
            for app in Set(s.apps) { selections[app, default: []].append(s.name) }
        }
        guard selections != appSelections || followedApps == nil else { return }
        appSelections = selections
        let apps = Set(selections.keys)
        if apps != followedApps {
            followedApps = apps
            emit(.followApps(apps))
        }
        if !appsRunning.isEmpty { recordUsed(at: now) }  // a selection's apps changed while they run
    }

    mutating func addLimit(_ limit: Limit, peer: Peer, now: Date) throws(CoreError) -> Change {
        var l = limit
        if let action = l.session { try Registry.check(Authority.mayAct(action, by: registry.actor(peer))) }  // A1
        var resolved: [Selection] = []
        for argument in l.selections { resolved.append(try config.catalog.resolve(argument)) }
        try Limit.checkCountable(l.name, resolved)
        let names = resolved.map(\.name)
        l.selections = names
        l.users = try grantedScope(l.users, selections: names, peer: peer)  // per-user blocks
        l.moreTime = l.moreTime ?? MoreTimePolicy.familyDefault(scope: l.users, setBy: peer.uid)  // A1
        l = try registry.addLimit(l, by: peer, now: now)  // A1: its key, which may be the member's own (kid/NAME)
        var change = Change(saves: true, answer: .activity(l.name))
        let covers = l.session.map { "at the screen, then \($0.rawValue)" } ?? "for \(l.selections.joined(separator: ", "))"
        change.entries = [JournalEntry("Limit '\(l.name)' added by \(who(peer.uid)): \(l.rule) \(covers)",
                                       priority: .info, event: .start, fields: [(.activity, l.name)])]
        change.followsLimits = true
        change.reconciles = true
        return change
    }

    mutating func removeLimit(_ name: String, peer: Peer, now: Date) throws(CoreError) -> Change {
        try checkNotHeldOff(removing: name, peer: peer, now: now)
        let l = try registry.removeLimit(named: name, by: peer)
        var change = Change(saves: true, answer: .reply(["removed": .string(l.name)]))
        for sel in l.selections { change.unlockNotes[sel] = "limit '\(l.name)' removed by \(who(peer.uid))" }
        change.entries = [JournalEntry("Limit '\(l.name)' removed by \(who(peer.uid))", priority: .info, event: .stop, fields: [(.activity, l.name)])]
        change.followsLimits = true
        change.reconciles = true
        return change
    }
}

extension Core {
    /// SIGTERM: what runs is folded up to `now` (§9, R1): the next start forgets what was
    /// running, so the time since the last minute's checkpoint would be lost.
    public mutating func checkpointBeforeExit(now: Date) {
        state.usage.checkpoint(at: now, clock: local)
        state.history.checkpoint([.running, .used, .foreground, .web, .screen], at: now, clock: local)
    }
}
