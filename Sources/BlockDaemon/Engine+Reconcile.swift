import BlockCore
import Foundation

extension Engine {
    /// Converges enforcement to the desired set at `now` (T5): locks what became blocked,
    /// unlocks only what no activity covers any more, then persists and reports the next
    /// transition. Idempotent: a second call with nothing changed does nothing visible.
    func reconcile(now: Date) {
        assertOnQueue()
        let ended = registry.expire(now: now)
        refreshLimits(now: now)
        let desired = policy.desired(at: now, activities: registry.activities)
        var next: [String: [Reason]] = [:]
        for b in desired { next[b.selection] = b.reasons }

        let unlocking = applied.keys.filter { next[$0] == nil }.sorted()
        if mustApply || desired.contains(where: { applied[$0.selection] == nil }) || !unlocking.isEmpty || state.applied != next.keys.sorted() {
            mustApply = false
            let targets = enforcementTargets(next.keys.sorted(), now: now)
            record(enforcer.enforce(blocked: targets), now: now)
        }
        // Truth (DESIGN §7): what failed to be enforced is not applied, and is not "Blocked" in
        // the journal until a retry enforces it.
        next = next.filter { notEnforced[$0.key] == nil }
        let locking = desired.filter { applied[$0.selection] == nil && next[$0.selection] != nil }
        for b in locking {
            logLock(b, now: now)
            if let selection = resolved[b.selection] { collaborators.hooks.run(.block, selection: selection, until: b.until.map(local.iso8601)) }
        }
        for name in unlocking {
            logUnlock(name, previous: applied[name] ?? [], ended: ended, now: now)
            if let selection = resolved[name] ?? (try? config.catalog.resolve(name)) {
                collaborators.hooks.run(.unblock, selection: selection, until: nil)
            }
        }
        for block in ended where !block.selections.contains(where: { unlocking.contains($0) }) {
            logEndWithoutUnlock(block, stillBlocked: next)
        }
        applied = next
        pendingUnlockNotes = [:]
        state.applied = next.keys.sorted()
        state.lastReconcile = now
        persist()
        nextTransition = policy.nextTransition(after: now, activities: registry.activities)
        if anyLimitRunning {
            // Checkpoint running usage at least once a minute (only while a limited app runs).
            let checkpoint = now.addingTimeInterval(60)
            if nextTransition.map({ checkpoint < $0 }) ?? true { nextTransition = checkpoint }
        }
        collaborators.armTimer(nextTransition)
        collaborators.status(statusLine(now: now, blocked: desired.count))
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

    /// T6: if the wall clock was stepped since the last observation, shift every block by the
    /// step. Steps under a second are read jitter between the two clocks, not a step.
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
        registry = Registry(maxActivities: registry.maxActivities, configPath: registry.configPath, activities: shifted)
        log.log(LogEntry("The wall clock was stepped by \(String(format: "%+.0f", step)) s; blocks keep their remaining time and schedules follow the new local time",
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
            log.log(LogEntry("Catching up: \(activity.kind.rawValue) '\(activity.name)' \(what) at \(local.iso8601(instant)) while blockd was not running; applied \(DurationText.formatRemaining(now.timeIntervalSince(instant))) late",
                             priority: .notice, event: .catchUp,
                             fields: [("ACTIVITY", activity.name), ("LATE_MS", String(lateMS)),
                                      ("SELECTION", activity.selections.joined(separator: " "))]))
        }
    }

    func logLock(_ b: Policy.Blocked, now: Date) {
        let why = b.reasons.map { "\($0.kind.rawValue) '\($0.activity)'" }.joined(separator: ", ")
        let until = b.until.map { "until \(local.iso8601($0))" } ?? "with no end in sight"
        var fields: [(String, String)] = [("SELECTION", b.selection), ("ACTIVITY", b.reasons.map(\.activity).joined(separator: " "))]
        if let end = b.until { fields.append(("END", local.iso8601(end))) }
        log.log(LogEntry("Blocked \(b.selection): \(why), \(until)", priority: .notice, event: .lock, fields: fields))
        var e: JSONObject = ["event": "lock", "time": .string(local.iso8601(now)), "selection": .string(b.selection)]
        e["until"] = b.until.map { .string(local.iso8601($0)) } ?? .null
        e["reasons"] = .array(b.reasons.map { .string($0.activity) })
        emit(e)
    }

    func logUnlock(_ selection: String, previous: [Reason], ended: [Block], now: Date) {
        var why = pendingUnlockNotes[selection] ?? ""
        var fields: [(String, String)] = [("SELECTION", selection)]
        if why.isEmpty, let block = ended.first(where: { $0.selections.contains(selection) }) {
            why = "timed block '\(block.name)' ended (\(DurationText.format(Int(block.end.timeIntervalSince(block.start).rounded()))))"
            fields.append(("ACTIVITY", block.name))
            fields.append(("END", local.iso8601(block.end)))
            fields.append(("LATE_MS", String(Int((now.timeIntervalSince(block.end) * 1000).rounded()))))
        } else if why.isEmpty, let reason = previous.first {
            why = "\(reason.kind.rawValue) '\(reason.activity)' ended"
            fields.append(("ACTIVITY", previous.map(\.activity).joined(separator: " ")))
            fields.append(("END", local.iso8601(reason.until)))
            fields.append(("LATE_MS", String(Int((now.timeIntervalSince(reason.until) * 1000).rounded()))))
        } else if why.isEmpty {
            why = "no activity covers it any more"
        }
        log.log(LogEntry("Unblocked \(selection): \(why)", priority: .notice, event: .unlock, fields: fields))
        emit(["event": "unlock", "time": .string(local.iso8601(now)), "selection": .string(selection), "why": .string(why)])
    }

    /// A block ended without unlocking anything. Say why truthfully: only selections another
    /// activity still covers "stay blocked"; the others were never enforced by this daemon
    /// (the block began and ended while it was not looking, e.g. while it was down).
    func logEndWithoutUnlock(_ block: Block, stillBlocked: [String: [Reason]]) {
        let covered = block.selections.filter { stillBlocked[$0] != nil }
        let others = Set(covered.flatMap { stillBlocked[$0]!.map(\.activity) }).subtracting([block.name]).sorted()
        let message: String
        if covered.count == block.selections.count {
            message = "Block '\(block.name)' ended; its selections stay blocked by \(others.map { "'\($0)'" }.joined(separator: ", "))"
        } else if covered.isEmpty {
            message = "Block '\(block.name)' ended at \(local.iso8601(block.end)) before it was enforced; nothing to unlock"
        } else {
            message = "Block '\(block.name)' ended; \(covered.joined(separator: ", ")) stay blocked by \(others.map { "'\($0)'" }.joined(separator: ", "))"
        }
        log.log(LogEntry(message, priority: .info, event: .stop, fields: [("ACTIVITY", block.name)]))
    }

    func statusLine(now: Date, blocked: Int) -> String {
        let next = nextTransition.map { "next change \(local.iso8601($0))" } ?? "nothing scheduled"
        return "\(blocked) selection\(blocked == 1 ? "" : "s") blocked, \(registry.activities.count) of \(registry.maxActivities) activities; \(next)"
    }
}
