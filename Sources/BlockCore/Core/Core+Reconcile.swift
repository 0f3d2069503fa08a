import FoundationEssentials

/// What one reconcile decided (T5, STYLE 4): the selections enforcement was asked for (nil
/// when it was already right), the selections that became blocked and those no longer
/// blocked, the selections it looked at, and one report per event for the journal and watchers.
public struct Reconciliation: Sendable {
    public var targets: [String]?
    public var locks: [Policy.Blocked] = []
    public var unlocks: [String] = []
    public var reports: [Report] = []
    /// The selections looked at: what the published status must bring up to date.
    public var looked: Set<String> = []
}

/// The first half of a reconcile: what it looks at, and what to enforce (nil: enforcement is
/// already right). The engine hands `targets` to the enforcers and gives their report to
/// `finishReconcile(_:report:now:)`.
public struct ReconcilePlan: Sendable {
    public var targets: [Selection]?
    /// The selections whose targets differ from those enforcement was last asked for (nil:
    /// any may), for enforcers that keep their own state (a change costs its own size).
    public var changed: Set<String>?
    /// The names in `targets`, in order, each once.
    var targetNames: [String]?
    var candidates: Set<String>
    var ended: [Block]
    var unlocks: [String]
    var newlyBlocked: [String]
    /// §7 Truth: blocked selections with no targets at all (never enforced, gone from the
    /// configuration), with why.
    var unresolved: [String: String] = [:]
}

extension Core {
    /// Converges enforcement to the desired set at `now` (T5), first half: settles more time
    /// and limits, ends what ended, and works out which selections changed. Enforcement is
    /// planned only when the blocked set changed (or must be applied again), and then with all
    /// of it. Idempotent: a second call with nothing changed plans nothing.
    ///
    /// The work is proportional to the selections whose reasons changed (the registry's index
    /// keeps the union, T5), not to the number of activities. `shown`: the selections the
    /// published status shows as blocked, looked at again when the index is rebuilt.
    mutating func planReconcile(now: Date, shown: some Sequence<String> = [String]()) -> ReconcilePlan {
        settleMoreTime(now: now)  // M3
        let ended = registry.expire(now: now)
        if !loginSessions.isEmpty { settleScreen(now: now) }  // before the checkpoint: an idle grace ends at its own instant
        refreshLimits(now: now)
        enforceSessionLimits(now: now)  // screen time
        warnBeforeHours(now: now)
        // A rebuild (first look, time zone, clock stepped back) does not know what was
        // blocked before it: every applied selection is looked at again.
        let rebuilds = registry.index.evaluatedAt.map { now < $0 } ?? true
        registry.advance(to: now)
        var candidates = registry.takeTouchedSelections().union(notEnforced.keys).union(lingering.keys)
        if rebuilds || mustApply { candidates.formUnion(applied.keys); candidates.formUnion(shown) }
        if mustApply { candidates.formUnion(registry.index.blockedSelections) }
        // M3: a grant lifts its selection while every reason allows it. Grants are few, so the
        // lifted set is worked out whole; what was lifted before is looked at again.
        let lifting = liftedReasons(now: now)
        candidates.formUnion(lifting.keys)
        candidates.formUnion(lifted.keys)
        lifted = lifting

        let unlocks = candidates.filter { applied[$0] != nil && !isBlockedNow($0) }.sorted()
        let newlyBlocked = candidates.filter { applied[$0] == nil && isBlockedNow($0) }.sorted()
        var plan = ReconcilePlan(targets: nil, candidates: candidates, ended: ended, unlocks: unlocks, newlyBlocked: newlyBlocked)
        // §7: a selection no activity names any more has no targets left to keep.
        for name in candidates where state.targets[name] != nil && !registry.index.isNamed(name) {
            setTarget(name, nil)
        }
        // §7: a selection blocked again while its unlock still lingers is enforced again too
        // (the write that takes it away must not land once it is wanted back).
        let wantedBack = candidates.contains { lingering[$0] != nil && isBlockedNow($0) }
        if mustApply || !newlyBlocked.isEmpty || !unlocks.isEmpty || wantedBack || scopesChanged(candidates) {  // per-user blocks
            // Only what was looked at can have other targets; all of it after a reload, a
            // rebuild, a change put back or an enforcer's news.
            let (changed, unresolved) = updateTargets(looked: candidates, full: mustApply || rebuilds || targetsStale, now: now)
            mustApply = false
            plan.targets = enforcing.all
            plan.targetNames = enforcing.targetNames
            plan.changed = changed
            plan.unresolved = unresolved
        }
        return plan
    }

    /// The second half: given what enforcement reported (nil when nothing was enforced),
    /// decides what is applied and what is announced, records failures, and arms the timer.
    /// Returns what it decided; everything it did follows from that value.
    @discardableResult
    mutating func finishReconcile(_ plan: ReconcilePlan, report enforced: EnforcementReport?, now: Date) -> Reconciliation {
        var candidates = plan.candidates
        var effects = Reconciliation()
        effects.unlocks = plan.unlocks
        if let targets = plan.targets {
            effects.targets = plan.targetNames ?? Array(Set(targets.map(\.name))).sorted()  // W2: a per-user AlwaysAllowed= splits a target
            var report = enforced ?? EnforcementReport()
            for (name, cause) in plan.unresolved.sorted(by: { $0.key < $1.key }) { report.notEnforced(name, cause) }  // §7 Truth
            report.settle(targets: targets)  // §7 Truth: a part left off is said; every part off is not enforced
            record(report, now: now)
            if report.failures.isEmpty && report.notEnforced.isEmpty { lastEnforced = now }  // F3
            candidates.formUnion(notEnforced.keys)
            // §7 Truth: an unlock whose write failed is pending: no "Unblocked", no unblock hook.
            effects.unlocks.removeAll { lingering[$0] != nil }
        }
        // Truth (§7): what failed to be enforced is not applied, and is not "Blocked" in
        // the journal until a retry enforces it.
        effects.locks = plan.newlyBlocked.filter { notEnforced[$0] == nil }.compactMap { registry.index.blocked($0) }
        var outcomes: [String: Announcements.Outcome] = [:]
        for selection in candidates { outcomes[selection] = outcome(selection) }
        effects.reports = announcements(now: now).reports(outcomes, ended: plan.ended, unlocked: effects.unlocks,
                                                          applied: { outcomes[$0]?.applied ?? self.outcome($0).applied }, now: now)
        carryOut(effects, now: now)
        for (selection, outcome) in outcomes {
            let reasons = outcome.applied
            recordBlocked(selection, from: applied[selection], to: reasons, now: now)  // R1
            if (applied[selection] == nil) != (reasons == nil) { setApplied(selection, reasons != nil) }
            applied[selection] = reasons
            restoredFor[selection] = nil
        }
        pendingUnlockNotes = [:]
        state.history.prune(keeping: config.daemon.reportDays, today: local.civil(of: now).date)  // R1: bounded
        if state.applied.count != applied.count {  // the list the state file had at start-up
            state.applied = applied.keys.sorted()
            unsavedSelections = nil
        }
        state.lastReconcile = now
        emit(.persist)
        armNextTransition(now: now)
        followApps(now: now)  // R1
        emit(.status(statusLine(now: now, blocked: blockedNowCount)))
        effects.looked = candidates
        return effects
    }

    /// Puts `selection` in the state's sorted list of what is applied, or takes it out: the
    /// size of the change, not a sort of the list.
    private mutating func setApplied(_ selection: String, _ isApplied: Bool) {
        let (lo, there) = state.applied.sortedPosition(of: selection)
        if isApplied && !there { state.applied.insert(selection, at: lo) }
        if !isApplied && there { state.applied.remove(at: lo) }
        noteUnsaved(selection)
    }

    /// R1: the report's blocked time follows what is applied, for whom (`UsageHistory.everyone`
    /// for the whole machine).
    private mutating func recordBlocked(_ selection: String, from before: [Reason]?, to after: [Reason]?, now: Date) {
        func users(_ reasons: [Reason]?) -> Set<String> {
            guard let reasons else { return [] }
            if reasons.isEmpty { return restoredFor[selection] ?? [UsageHistory.everyone] }  // after a restart
            return Core.users(reasons).map { Set($0.map(String.init)) } ?? [UsageHistory.everyone]
        }
        let (was, now_) = (users(before), users(after))
        if was != now_ { state.history.blocked(selection, from: was, to: now_, at: now, clock: local) }
    }

    /// Where `selection` stands after the apply: what was applied, what blocks it now, and
    /// whether the apply failed to enforce it or to take its enforcement away.
    func outcome(_ selection: String) -> Announcements.Outcome {
        Announcements.Outcome(before: applied[selection], current: blockedReasons(selection),
                              notEnforced: notEnforced[selection] != nil, lingering: lingering[selection] != nil,
                              beforeFor: restoredUsers(selection))
    }

    /// U2: the uids a selection applied before a restart was blocked for, when that was some
    /// users only (nil: the whole machine, not known, or its reasons are known again).
    func restoredUsers(_ selection: String) -> [UInt32]? {
        guard applied[selection]?.isEmpty == true, let users = restoredFor[selection],
              !users.contains(UsageHistory.everyone) else { return nil }
        let uids = users.compactMap { UInt32($0) }
        return uids.count == users.count && !uids.isEmpty ? uids.sorted() : nil
    }

    /// What people are told, decided in the core from what the engine knows.
    func announcements(now: Date) -> Announcements {
        let (index, users) = (registry.index, users)
        return Announcements(clock: local, notes: pendingUnlockNotes, name: { users.name($0) },
                             until: { selection, viewer in index.until(selection, from: now, viewer: viewer) })
    }

    /// T5 with M3: whether `selection` is blocked now for someone (grants did not lift every
    /// reason). O(1) unless a grant touches it.
    public func isBlockedNow(_ selection: String) -> Bool {
        registry.index.isBlocked(selection) && (lifted[selection] == nil || blockedReasons(selection) != nil)
    }

    /// T5 with M3: the reasons blocking `selection` now that no grant lifts (nil: none).
    public func blockedReasons(_ selection: String) -> [Reason]? {
        guard let reasons = registry.index.reasons(for: selection) else { return nil }
        guard let lift = lifted[selection] else { return reasons }
        return Policy.Blocked(selection: selection, reasons: reasons, until: nil).without(lift)?.reasons  // A1: per view
    }

    /// T5 with M3: the selection as blocked now, without what grants lift (nil: not blocked).
    public func blockedNow(_ selection: String) -> Policy.Blocked? {
        guard var b = registry.index.blocked(selection), let reasons = blockedReasons(selection) else { return nil }
        b.reasons = reasons
        return b
    }

    /// M3: the activities blocking a selection that a grant lifts now. They are still active
    /// (status lists them, with the grant under them), only not felt by the grant's asker.
    public var liftedActivities: Set<String> {
        Set(lifted.keys.flatMap { registry.index.reasons(for: $0)?.map(\.activity) ?? [] })
    }

    /// How many selections are blocked now, grants considered.
    public var blockedNowCount: Int { registry.index.blockedCount - lifted.keys.filter { !isBlockedNow($0) }.count }

    /// M3: what grants lift at `now`, per selection: the askers' views whose every reason
    /// allows more time (`Grant.lifted(from:at:)`).
    private func liftedReasons(now: Date) -> [String: Lift] {
        var out: [String: Lift] = [:]
        for grant in book.grants where grant.window.contains(now) {
            guard let b = registry.index.blocked(grant.selection) else { continue }
            let lift = grant.lift(from: b, at: now)
            if !lift.isEmpty { out[grant.selection, default: Lift()].add(lift) }
        }
        return out
    }

    /// Tells people what a reconcile decided and runs the hooks for its locks and unlocks.
    private mutating func carryOut(_ effects: Reconciliation, now: Date) {
        for report in effects.reports { publish(report, now: now) }
        for b in effects.locks {
            if let selection = resolved[b.selection] { emit(.hook(.block, selection, until: b.until.map(local.iso8601))) }
        }
        for name in effects.unlocks {
            if let selection = resolved[name] ?? (try? config.catalog.resolve(name)) { emit(.hook(.unblock, selection, until: nil)) }
        }
    }

    /// T9: the next instant anything changes, and the timer armed for it.
    public mutating func armNextTransition(now: Date) {
        nextTransition = registry.index.nextTransition  // T9: the top of the boundary queue
        if let m = book.nextBoundary(after: now), nextTransition.map({ m < $0 }) ?? true { nextTransition = m }  // M3, T9
        if let idle = screenDeadline, nextTransition.map({ idle < $0 }) ?? true { nextTransition = idle }  // screen time: an idle grace ends
        if let warn = nextHoursWarning(after: now), nextTransition.map({ warn < $0 }) ?? true { nextTransition = warn }  // before allowed hours
        if let lock = lockDeadlines.values.map(\.by).min(), nextTransition.map({ lock < $0 }) ?? true { nextTransition = lock }  // a lock's grace
        if anyCountedAppRunning || anyoneAtScreen {
            // Checkpoint running usage at least once a minute (only while a limited app, or an
            // app the report counts, runs).
            let checkpoint = now.addingTimeInterval(60)
            if nextTransition.map({ checkpoint < $0 }) ?? true { nextTransition = checkpoint }
        }
        emit(.armTimer(nextTransition))
    }

    /// Keeps what an apply could not enforce, and records each failure once while it persists
    /// (a retry that fails the same way is not a new failure); T4: a failure the apply no
    /// longer reports is resolved, and so is a selection's missing targets once it is enforced
    /// or no longer blocked.
    mutating func record(_ report: EnforcementReport, now: Date) {
        notEnforced = report.notEnforced
        partsOff = report.partsOff.mapValues { $0.sorted { $0.key < $1.key }.map(\.value) }
        lingering = report.lingering.filter { applied[$0.key] != nil }
        settleFailures(.enforcement, report.failures.map { (CoreError(.internal, $0.message), nil, $0.selection) }, now: now)
        let missing = state.failures.filter { $0.isCurrent && $0.cause == FailureCause.target.rawValue }.compactMap(\.activity)
        let found = Set(missing.filter { !isBlockedNow($0) || state.targets[$0] != nil })
        if !found.isEmpty { resolveFailures(.target, now: now) { $0.activity.map(found.contains) ?? false } }
    }
}
