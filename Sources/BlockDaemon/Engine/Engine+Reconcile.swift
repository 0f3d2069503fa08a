import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// What one reconcile decided (T5, STYLE 4): the selections enforcement was asked for (nil
/// when it was already right), the selections that became blocked and those no longer
/// blocked, and one report per event for the journal and watchers.
struct Reconciliation {
    var targets: [String]?
    var locks: [Policy.Blocked] = []
    var unlocks: [String] = []
    var reports: [Report] = []
}

extension Engine {
    /// Converges enforcement to the desired set at `now` (T5): locks what became blocked,
    /// unlocks only what no activity covers any more, then persists and reports the next
    /// transition. Idempotent: a second call with nothing changed does nothing visible.
    /// Returns what it decided; everything it did follows from that value.
    ///
    /// The work is proportional to the selections whose reasons changed (the registry's index
    /// keeps the union, T5), not to the number of activities; the enforcer is called only
    /// when the blocked set changed, and then with all of it.
    @discardableResult
    func reconcile(now: Date) -> Reconciliation {
        assertOnQueue()
        settleMoreTime(now: now)  // M3
        let ended = registry.expire(now: now)
        refreshLimits(now: now)
        // A rebuild (first look, time zone, clock stepped back) does not know what was
        // blocked before it: every applied selection is looked at again.
        let rebuilds = registry.index.evaluatedAt.map { now < $0 } ?? true
        registry.advance(to: now)
        var candidates = registry.takeTouchedSelections().union(notEnforced.keys).union(lingering.keys)
        if rebuilds || mustApply { candidates.formUnion(applied.keys); candidates.formUnion(blockedView.keys) }
        if mustApply { candidates.formUnion(registry.index.blockedSelections) }
        // M3: a grant lifts its selection while every reason allows it. Grants are few, so the
        // lifted set is worked out whole; what was lifted before is looked at again.
        let lifting = liftedReasons(now: now)
        candidates.formUnion(lifting.keys)
        candidates.formUnion(lifted.keys)
        lifted = lifting

        var effects = Reconciliation()
        effects.unlocks = candidates.filter { applied[$0] != nil && !isBlockedNow($0) }.sorted()
        let newlyBlocked = candidates.filter { applied[$0] == nil && isBlockedNow($0) }.sorted()
        if mustApply || !newlyBlocked.isEmpty || !effects.unlocks.isEmpty || scopesChanged(candidates) {  // per-user blocks
            mustApply = false
            let blocked = registry.index.blockedSelections.filter { lifted[$0] == nil || isBlockedNow($0) }
            let (resolved, unresolved) = enforcementTargets(blocked, now: now)
            let targets = scoped(resolved, reasons: { self.blockedReasons($0) ?? [] })  // per-user blocks
            var named = Set<String>()
            effects.targets = targets.map(\.name).filter { named.insert($0).inserted }  // W2: a per-user AlwaysAllowed= splits a target
            var report = enforcer.enforce(blocked: targets)
            for (name, cause) in unresolved.sorted(by: { $0.key < $1.key }) { report.notEnforced(name, cause) }  // §7 Truth
            record(report, now: now)
            if report.failures.isEmpty && report.notEnforced.isEmpty { lastEnforced = now }  // F3
            candidates.formUnion(notEnforced.keys)
            // §7 Truth: an unlock whose write failed is pending: no "Unblocked", no unblock hook.
            effects.unlocks.removeAll { lingering[$0] != nil }
        }
        // Truth (§7): what failed to be enforced is not applied, and is not "Blocked" in
        // the journal until a retry enforces it.
        effects.locks = newlyBlocked.filter { notEnforced[$0] == nil }.compactMap { registry.index.blocked($0) }
        var outcomes: [String: Announcements.Outcome] = [:]
        for selection in candidates { outcomes[selection] = outcome(selection) }
        effects.reports = announcements(now: now).reports(outcomes, ended: ended, unlocked: effects.unlocks,
                                                          applied: { outcomes[$0]?.applied ?? self.outcome($0).applied }, now: now)
        carryOut(effects, now: now)
        var appliedChanged = false
        for (selection, outcome) in outcomes {
            let reasons = outcome.applied
            recordBlocked(selection, from: applied[selection], to: reasons, now: now)  // R1
            if (applied[selection] == nil) != (reasons == nil) { appliedChanged = true }
            applied[selection] = reasons
        }
        pendingUnlockNotes = [:]
        state.history.prune(keeping: config.daemon.reportDays, today: local.civil(of: now).date)  // R1: bounded
        if appliedChanged || state.applied.count != applied.count { state.applied = applied.keys.sorted() }
        state.lastReconcile = now
        persist()
        armNextTransition(now: now)
        followApps()  // R1
        collaborators.status(statusLine(now: now, blocked: registry.index.blockedCount - lifted.keys.filter { !isBlockedNow($0) }.count))
        publishSnapshot(changed: candidates)
        return effects
    }

    /// R1: the report's blocked time follows what is applied, for whom (`UsageHistory.everyone`
    /// for the whole machine).
    private func recordBlocked(_ selection: String, from before: [Reason]?, to after: [Reason]?, now: Date) {
        func users(_ reasons: [Reason]?) -> Set<String> {
            guard let reasons else { return [] }
            return Engine.users(reasons).map { Set($0.map(String.init)) } ?? [UsageHistory.everyone]
        }
        let (was, now_) = (users(before), users(after))
        if was != now_ { state.history.blocked(selection, from: was, to: now_, at: now, clock: local) }
    }

    /// Where `selection` stands after the apply: what was applied, what blocks it now, and
    /// whether the apply failed to enforce it or to take its enforcement away.
    func outcome(_ selection: String) -> Announcements.Outcome {
        Announcements.Outcome(before: applied[selection], current: blockedReasons(selection),
                              notEnforced: notEnforced[selection] != nil, lingering: lingering[selection] != nil)
    }

    /// What people are told, decided in the core from what the engine knows.
    func announcements(now: Date) -> Announcements {
        let (index, directory) = (registry.index, directory)
        return Announcements(clock: local, notes: pendingUnlockNotes, name: { directory.name($0) },
                             until: { selection, viewer in index.until(selection, from: now, viewer: viewer) })
    }

    /// T5 with M3: whether `selection` is blocked now for someone (grants did not lift every
    /// reason). O(1) unless a grant touches it.
    func isBlockedNow(_ selection: String) -> Bool {
        registry.index.isBlocked(selection) && (lifted[selection] == nil || blockedReasons(selection) != nil)
    }

    /// T5 with M3: the reasons blocking `selection` now that no grant lifts (nil: none).
    func blockedReasons(_ selection: String) -> [Reason]? {
        guard let reasons = registry.index.reasons(for: selection) else { return nil }
        guard let lift = lifted[selection] else { return reasons }
        return Policy.Blocked(selection: selection, reasons: reasons, until: nil).without(lift)?.reasons  // A1: per view
    }

    /// T5 with M3: the selection as blocked now, without what grants lift (nil: not blocked).
    func blockedNow(_ selection: String) -> Policy.Blocked? {
        guard var b = registry.index.blocked(selection), let reasons = blockedReasons(selection) else { return nil }
        b.reasons = reasons
        return b
    }

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
    private func carryOut(_ effects: Reconciliation, now: Date) {
        for report in effects.reports { publish(report, now: now) }
        let hooks = collaborators.hooks
        for b in effects.locks {
            if let selection = resolved[b.selection] { hooks.run(.block, selection: selection, until: b.until.map(local.iso8601)) }
        }
        for name in effects.unlocks {
            if let selection = resolved[name] ?? (try? config.catalog.resolve(name)) { hooks.run(.unblock, selection: selection, until: nil) }
        }
    }

    func armNextTransition(now: Date) {
        nextTransition = registry.index.nextTransition  // T9: the top of the boundary queue
        if let m = book.nextBoundary(after: now), nextTransition.map({ m < $0 }) ?? true { nextTransition = m }  // M3, T9
        if anyCountedAppRunning {
            // Checkpoint running usage at least once a minute (only while a limited app, or an
            // app the report counts, runs).
            let checkpoint = now.addingTimeInterval(60)
            if nextTransition.map({ checkpoint < $0 }) ?? true { nextTransition = checkpoint }
        }
        collaborators.armTimer(nextTransition)
    }

    /// The wall time every engine entry point works with (T6). It first accounts for a wall-clock
    /// step since the last look: blocks that existed before the step are shifted by it so their
    /// remaining elapsed time is unchanged. Doing this before a request is applied, rather than
    /// in the reconcile after it, keeps a block created after the step exactly as long as asked
    /// and keeps every answer (status included) free of times shifted by an unnoticed step.
    func observedNow() -> Date {
        assertOnQueue()
        let now = clock.wallNow()
        compensateWallStep(now: now)
        return now
    }

    /// Keeps what an apply could not enforce, and records each failure once while it persists
    /// (a retry that fails the same way is not a new failure).
    func record(_ report: EnforcementReport, now: Date) {
        notEnforced = report.notEnforced
        lingering = report.lingering.filter { applied[$0.key] != nil }
        var causes: Set<String> = []
        for failure in report.failures {
            let key = "\(failure.selection ?? "")\n\(failure.message)"
            causes.insert(key)
            if !enforcementCauses.contains(key) {
                recordFailure(CoreError(.internal, failure.message), uid: nil, activity: failure.selection, now: now)
            }
        }
        enforcementCauses = causes
    }

    /// An enforcer's retry or repair changed the outcome: enforce again, so that `applied`,
    /// the journal and the failure list follow what is really enforced.
    public func enforcementChanged() {
        assertOnQueue()
        mustApply = true
        reconcile(now: observedNow())
    }

    /// T6: if the wall clock was stepped since the last observation, shift every block (and
    /// more time's grants, requests and delayed loosenings) by the step. Steps under a second are read jitter between the two clocks, not a step.
    private func compensateWallStep(now: Date) {
        let offset = now.timeIntervalSince1970 - clock.bootNow()
        guard let previous = wallMinusBoot else {
            wallMinusBoot = offset
            return
        }
        let step = offset - previous
        guard abs(step) >= 1 else { return }
        wallMinusBoot = offset
        var shifted: [Activity] = []
        for activity in registry.activities {
            guard case .block(var b) = activity else { shifted.append(activity); continue }
            b.start += step
            b.end += step
            shifted.append(.block(b))
        }
        registry = registry.rebuilt(shifted)
        book.shift(by: step)  // M3: grants, requests and delayed loosenings too
        (registry.reserved, registry.reservedBy) = (book.count, book.countByUid)  // M3: grants and requests keep their slots (T4, A1)
        log.log(JournalEntry("The wall clock was stepped by \(step >= 0 ? "+" : "-")\(Int(abs(step).rounded())) s; blocks keep their remaining time and schedules follow the new local time",
                         priority: .notice))
    }

    /// T8: for every activity whose start or end passed while blockd was down, log it once with
    /// how late it is being applied. The reconcile that follows applies it.
    func catchUp(now: Date) {
        guard let last = state.lastReconcile, last < now else { return }
        for activity in registry.activities {
            var missed: (Date, Bool)?  // the latest boundary in (last, now], and whether it is a start
            var t = last
            var steps = 0
            while let b = activity.nextBoundary(after: t, clock: local), b <= now, steps < 1000 {
                let isStart = activity.activeWindow(at: b, clock: local)?.start == b
                missed = (b, isStart)
                t = b
                steps += 1
            }
            guard let (instant, isStart) = missed else { continue }
            let lateMS = Int((now.timeIntervalSince(instant) * 1000).rounded())
            let what = isStart ? "started" : "ended"
            log.log(JournalEntry("Catching up: \(activity.kind.rawValue) '\(activity.name)' \(what) at \(local.iso8601(instant)) while blockd was not running; applied \(DurationText.formatRemaining(now.timeIntervalSince(instant))) late",
                             priority: .notice, event: .catchUp,
                             fields: [(.activity, activity.name), (.lateMS, String(lateMS)),
                                      (.selection, activity.selections.joined(separator: " "))]))
        }
    }

    func statusLine(now: Date, blocked: Int) -> String {
        let next = nextTransition.map { "next change \(local.iso8601($0))" } ?? "nothing scheduled"
        return "\(blocked) selection\(blocked == 1 ? "" : "s") blocked, \(registry.index.count) of \(registry.maxActivities) activities; \(next)"
    }
}
