import BlockCore
import Dispatch
import Foundation

/// DESIGN §7 "Truth": `OK` means on disk. A request's change is saved before it is enforced or
/// answered; if it cannot be saved it is undone and answered `ERR not-saved`. Saves that no
/// request waits for (timers, shield hits) are retried with backoff until they succeed, and a
/// failing cause is recorded once, not on every attempt.
extension Engine {
    /// What a request may change, taken before it changes anything.
    struct Snapshot {
        var registry: Registry
        var state: DaemonState
        var config: ConfigSet
        var configProvenance: ConfigProvenance
    }

    func snapshot() -> Snapshot {
        Snapshot(registry: registry, state: state, config: config, configProvenance: configProvenance)
    }

    /// Saves the change made since `before`; if the save fails, puts `before` back (nothing of
    /// the change was enforced yet) and throws `not-saved` with what to do.
    func commit(since before: Snapshot, now: Date) throws(CoreError) {
        do throws(AtomicFile.Failure) {
            try saveState(store)
        } catch {
            registry = before.registry
            state = before.state
            config = before.config
            configProvenance = before.configProvenance
            saveFailed(error, store: store, now: now)
            throw CoreError(.notSaved, "the change was not made: \(store.notSaved(error).message)")
        }
        saveSucceeded(store)
    }

    /// Saves the state with no one waiting for the answer; a failure is recorded and retried.
    func persist() {
        do throws(AtomicFile.Failure) {
            try saveState(store)
        } catch {
            saveFailed(error, store: store, now: clock.wallNow())
            return
        }
        saveSucceeded(store)
    }

    private func saveState(_ store: StateStore) throws(AtomicFile.Failure) {
        assertOnQueue()
        state.activities = registry.activities.filter {
            if case .client = $0.origin { return true } else { return false }
        }.map(StoredActivity.init)
        try store.save(state)
    }

    /// T4: recorded once per distinct cause; the retry runs whatever the cause.
    private func saveFailed(_ failure: AtomicFile.Failure, store: StateStore, now: Date) {
        scheduleSaveRetry()
        let cause = failure.description
        guard cause != saveProblem else { return }
        saveProblem = cause
        let error = store.notSaved(failure)
        recordFailure(CoreError(.notSaved, "\(error.message); until then changes are refused and blockd retries on its own"),
                      uid: nil, activity: nil, now: now)
    }

    private func saveSucceeded(_ store: StateStore) {
        saveRetry?.cancel()
        saveRetry = nil
        saveRetryDelay = saveRetryBase
        guard saveProblem != nil else { return }
        saveProblem = nil
        log.log(LogEntry("The state file \(store.path) is saved again; nothing acknowledged was lost", priority: .notice))
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
        }
        saveRetry = item
        queue.asyncAfter(deadline: .now() + delay, execute: item)
    }

    static let saveRetryMax: TimeInterval = 60
}
