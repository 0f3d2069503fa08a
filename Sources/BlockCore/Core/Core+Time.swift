import FoundationEssentials

/// Time as the core sees it: the wall clock and the boot clock are read at the edge and given
/// here (T6), and what passed while blockd was down is caught up on (T8).
extension Core {
    /// T6: the wall time every step works with, observed with the boot clock (`boot`: seconds
    /// since boot at the same instant). If the wall clock was stepped since the last
    /// observation, every block (and more time's grants, requests and delayed loosenings) is
    /// shifted by the step so its remaining elapsed time is unchanged, and so is every open
    /// interval of the usage ledger and the limits' running time (the step counts for nobody). Doing this before a
    /// request is applied, rather than in the reconcile after it, keeps a block created after
    /// the step exactly as long as asked and keeps every answer free of times shifted by an
    /// unnoticed step. Steps under a second are read jitter between the two clocks, not a step.
    public mutating func observe(wall now: Date, boot: TimeInterval) {
        let offset = now.timeIntervalSince1970 - boot
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
        // R1, screen time, §9: what is running or at the screen keeps the time it had; the
        // step itself is no one's time in the report or against a limit.
        state.history.shift(by: step)
        state.usage.shift(by: step)
        emit(.persist)
        (registry.reserved, registry.reservedBy) = (book.count, book.countByUid)  // M3: grants and requests keep their slots (T4, A1)
        emit(.journal(JournalEntry("The wall clock was stepped by \(step >= 0 ? "+" : "-")\(Int(abs(step).rounded())) s; blocks keep their remaining time and schedules follow the new local time",
                                   priority: .notice)))
    }

    /// T8: for every activity whose start or end passed while blockd was down, log it once with
    /// how late it is being applied. The reconcile that follows applies it.
    mutating func catchUp(now: Date) {
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
            emit(.journal(JournalEntry("Catching up: \(activity.kind.rawValue) '\(activity.name)' \(what) at \(local.spoken(instant, from: now)) while blockd was not running; applied \(DurationText.formatRemaining(now.timeIntervalSince(instant))) late",
                                       priority: .notice, event: .catchUp,
                                       fields: [(.activity, activity.name), (.lateMS, String(lateMS)),
                                                (.selection, activity.selections.joined(separator: " "))])))
        }
    }
}
