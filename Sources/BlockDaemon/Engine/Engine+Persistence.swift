import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// §7 "Truth": `OK` means on disk. A request's change is appended to the state log
/// before it is enforced, and answered once an fdatasync has made it durable; if it cannot be
/// written it is undone and answered `ERR not-saved`. One fdatasync covers every change
/// appended since the last (group commit); if it fails, every change it covered is undone and
/// answered not-saved. Saves that no request waits for (timers, shield hits) are retried with
/// backoff until they succeed, and a failing cause is recorded once, not on every attempt.
extension Engine {
    /// What saving keeps between changes, on the engine's queue.
    struct Saving {
        var journal: StateJournal
        /// The state other than the activities, the targets and the open intervals as last written: the base of
        /// the next delta (the targets' and the open intervals' are the undo logs, UndoLog.swift).
        var persisted: DaemonState
        /// Activities whose change a failed save did not write; the next save writes them.
        var unwritten: Set<String> = []
        /// Since the last fdatasync: each changed activity as it was before (nil: none), and
        /// the state and configuration before the first request's change. A failed fdatasync
        /// puts them back.
        var batchBefore: [String: Activity?] = [:]
        var batchMark: Snapshot?
        /// Answers waiting for the fdatasync that makes their change durable.
        var waiting: [(response: Response, reply: (Response) -> Void)] = []
        var flushScheduled = false
        /// T6: the wall-minus-boot offset at the last save. A wall-clock step shifts every
        /// block at once, so the save after one writes a snapshot.
        var wallMinusBoot: TimeInterval?
    }

    /// What a request may change besides the activities (those are undone by the registry).
    typealias Snapshot = Core.Mark

    func snapshot() -> Snapshot {
        // Changes no request made are not this request's to undo; the next save writes them.
        saving.unwritten.formUnion(core.registry.takeChanges())
        if saving.batchMark == nil { core.forgetSavedChanges() }  // no older mark is kept
        return core.mark()
    }

    /// Writes a request's change, begun at `before` (the batch's mark if its fdatasync fails
    /// later); returns why it could not be written. The core puts the change back (its outcome
    /// `committed`), and the failure is recorded after that.
    func commit(since before: Snapshot?) -> DaemonError? {
        let moves = followMoves()
        do throws(DaemonError) { try write() } catch { return error }
        if saving.journal.unsynced && saving.batchMark == nil { saving.batchMark = before }
        tell(moves)
        return nil
    }

    /// A1: activities that moved aside, with the more-time book following them (before they
    /// are saved).
    func followMoves() -> [Move] { core.takeMoves() }

    /// A1: each move is said once it is saved (at once: not after effects still pending).
    func tell(_ moves: [Move]) {
        for entry in Core.entries(for: moves) { log.log(entry) }
    }

    /// Writes the state with no one waiting for the answer; a failure is recorded and retried.
    func persist() {
        let moves = followMoves()
        do throws(DaemonError) {
            try write()
        } catch {
            saving.unwritten.formUnion(core.registry.takeChanges())
            saveFailed(error, now: clock.wallNow())
            tell(moves)  // kept in memory, retried on the next save
            return
        }
        tell(moves)
        if saving.journal.unsynced { scheduleFlush() } else { saveSucceeded() }
    }

    /// SIGTERM: everything into a fresh snapshot (or at least synced), so that the next start
    /// replays nothing. What runs is folded up to now first (§9, R1): the next start forgets
    /// what was running, so the time since the last minute's checkpoint would be lost.
    public func saveBeforeExit() {
        assertOnQueue()
        let now = observedNow()
        core.checkpointBeforeExit(now: now)
        persist()
        do throws(DaemonError) { try compactNow() } catch { flush() }
    }

    /// Appends a record per changed client activity and one for the rest of the state, or
    /// writes a snapshot when no log is open (at start, or after a failed sync) or the wall
    /// clock was stepped.
    private func write() throws(DaemonError) {
        assertOnQueue()
        let changes = core.registry.before
        if saving.journal.fd < 0 || core.wallMinusBoot != saving.wallMinusBoot {
            try compactNow()
        } else {
            try saving.journal.append(records(changes))
            saving.batchBefore.merge(changes) { first, _ in first }
        }
        core.registry.takeChanges()
        saving.unwritten = []
        saving.persisted = core.state.withoutLogged
        _ = core.takeUnsavedSelections()  // written: the next record starts from here
        saving.wallMinusBoot = core.wallMinusBoot
    }

    /// The records for the activities changed (`changes`: each one's activity before) and for
    /// the rest of the state, if it changed.
    private func records(_ changes: [String: Activity?]) -> [StateLog.Record] {
        var out: [StateLog.Record] = []
        for name in saving.unwritten.union(changes.keys).sorted() {
            let forced = saving.unwritten.contains(name)
            let now = core.registry.activity(named: name).flatMap(Engine.stored)
            let was = changes[name].flatMap { $0 }.flatMap(Engine.stored)
            if let now, forced || now != was {
                out.append(.put(now))
            } else if now == nil, forced || was != nil {
                out.append(.remove(name))
            }
        }
        let delta = StateDelta(from: saving.persisted, to: core.state, selections: core.unsavedSelections,
                               intervals: core.state.history.touched, targetsBefore: core.targetsBeforeSave,
                               openBefore: core.openBeforeSave)
        if !delta.isEmpty { out.append(.state(delta)) }
        return out
    }

    /// An activity as the state keeps it: client ones only (configured ones come from files).
    static func stored(_ activity: Activity) -> StoredActivity? {
        if case .client = activity.origin { return StoredActivity(activity) } else { return nil }
    }

    /// The whole state as a new snapshot; every change of the batch is then on disk.
    private func compactNow() throws(DaemonError) {
        var full = core.state
        full.activities = core.registry.activities.compactMap(Engine.stored)
        try saving.journal.compact(full)
        saving.persisted = core.state.withoutLogged
        _ = core.takeUnsavedSelections()  // all of it is in the snapshot
        batchSynced()
    }

    func scheduleFlush() {
        guard !saving.flushScheduled else { return }
        saving.flushScheduled = true
        // Requests already queued run first and join this fdatasync (group commit).
        queue.async { [weak self] in
            guard let self else { return }
            self.saving.flushScheduled = false
            self.flush()
        }
    }

    /// Makes the batch durable and answers it: one fdatasync, or a snapshot when the log is
    /// due for compaction (if that fails, the log is still good and is synced instead).
    func flush() {
        assertOnQueue()
        guard saving.journal.unsynced else { return batchSynced() }
        do throws(DaemonError) {
            if saving.journal.needsCompaction(activities: core.registry.index.count) {
                do throws(DaemonError) { return try compactNow() } catch { saving.journal.compactionFailed() }
            }
            try saving.journal.sync()
        } catch {
            return batchFailed(error)
        }
        batchSynced()
    }

    private func batchSynced() {
        saving.batchBefore = [:]
        saving.batchMark = nil
        core.forgetSavedChanges()
        let waiting = saving.waiting
        saving.waiting = []
        publishIfDue()  // before the answers: each client then reads a snapshot with its change
        for w in waiting { w.reply(w.response) }
        saveSucceeded()
    }

    /// The fdatasync failed: nothing since the last one is known to be on disk. Every change
    /// it covered is undone (the registry rebuilt once, O(activities), on this rare path), the
    /// requests waiting on it are answered not-saved, and enforcement converges back.
    private func batchFailed(_ failure: DaemonError) {
        let now = clock.wallNow()
        core.registry.rollBack()
        if !saving.batchBefore.isEmpty {
            let restored = core.registry.activities.filter { saving.batchBefore[$0.name] == nil } + saving.batchBefore.values.compactMap { $0 }
            core.registry = core.registry.rebuilt(restored)
        }
        if let mark = saving.batchMark {
            core.restoreBatch(mark)
            core.resolved = [:]
            core.mustApply = true
        }
        saving.batchBefore = [:]
        saving.batchMark = nil
        let notSaved = CoreError(.notSaved, "the change was not made: \(store.notSaved(failure).message)")
        let waiting = saving.waiting
        saving.waiting = []
        for w in waiting {
            if case .ok = w.response { w.reply(.error(notSaved)) } else { w.reply(w.response) }
        }
        saveFailed(failure, now: now)
        core.followLimits()
        reconcile(now: now)
    }

    /// T4: recorded once per distinct cause; the retry runs whatever the cause.
    func saveFailed(_ failure: DaemonError, now: Date) {
        scheduleSaveRetry()
        let cause = failure.description
        guard cause != saveProblem else { return }
        saveProblem = cause
        let error = store.notSaved(failure)
        core.recordFailure(CoreError(.notSaved, "\(error.message); until then changes are refused and blockd retries on its own"),
                           uid: nil, activity: nil, cause: .save, now: now)
    }

    private func saveSucceeded() {
        saveRetry?.cancel()
        saveRetry = nil
        saveRetryDelay = saveRetryBase
        // T4: a save works again, so a not-saved failure (this run's or one kept from before a
        // restart) is resolved; the resolution is saved in turn, after this save is done.
        if core.resolveFailures(.save, now: clock.wallNow()) > 0 {
            queue.async { [weak self] in
                guard let self else { return }
                self.persist()
                self.carryOut()
                self.publishSnapshot()
            }
        }
        guard saveProblem != nil else { return }
        saveProblem = nil
        log.log(JournalEntry("The state file \(store.path) is saved again; nothing acknowledged was lost", priority: .notice))
    }

    /// One pending retry at a time, each wait twice the last, up to a minute.
    private func scheduleSaveRetry() {
        guard saveRetry == nil else { return }
        let delay = saveRetryDelay
        saveRetryDelay = min(max(saveRetryDelay, saveRetryBase) * 2, Engine.saveRetryMax)
        let item = DispatchWorkItem { [weak self] in
            guard let self else { return }
            self.saveRetry = nil
            self.persist()
            self.carryOut()
        }
        saveRetry = item
        queue.asyncAfter(deadline: .now() + delay, execute: item)
    }

    static let saveRetryMax: TimeInterval = 60
}
