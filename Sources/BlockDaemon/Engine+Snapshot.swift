import BlockCore
import Foundation

/// The read-only requests are answered from a `StatusSnapshot` the engine publishes after each
/// change, on the connection's side: a reader never waits behind the engine (a reconcile, a
/// hosts write, an fsync), and the engine never renders a reply for a reader.
extension Engine {
    /// Publishes what the engine knows now. `desired` is the blocked set a reconcile just
    /// computed; without it the last published one still holds (only a reconcile changes it).
    func publishSnapshot(desired: [Policy.Blocked]? = nil) {
        assertOnQueue()
        let last = published.withLock { $0 }
        let snapshot = makeSnapshot(desired: desired ?? last?.desired ?? [])
        published.withLock { $0 = snapshot }
    }

    func makeSnapshot(desired: [Policy.Blocked]) -> StatusSnapshot {
        var enforcement: JSONObject = ["mode": .string(enforcer.mode), "applied": .array(applied.keys.sorted().map { .string($0) })]
        enforcement["hostsFile"] = .string(config.daemon.hostsFile)
        // DESIGN §7 "Truth": which configuration is in force, and whether the state is on disk.
        enforcement["config"] = .string(configProvenance.kind.rawValue)
        if let problem = configProvenance.problem { enforcement["configProblem"] = .string(problem) }
        if let problem = saveProblem { enforcement["stateProblem"] = .string(problem) }
        enforcement["notEnforced"] = notEnforcedJSON(desired.map(\.selection))
        return StatusSnapshot(local: local, activities: registry.activities, usage: state.usage, desired: desired,
                              failures: state.failures, shieldHits: state.shieldHits, enforcement: enforcement,
                              nextTransition: nextTransition, maxActivities: registry.maxActivities,
                              wallMinusBoot: wallMinusBoot, saveFailing: saveProblem != nil,
                              moreTime: requestsJSON(),
                              enforcementNotes: collaborators.enforcementNotes, serverStats: collaborators.serverStats)
    }

    /// A read-only request answered from the published snapshot, on the caller's thread; nil
    /// when it must go to the engine (not a read-only request, nothing published yet, or the
    /// snapshot is not the truth at this instant: `StatusSnapshot.answers(at:boot:)`). The
    /// clock is the engine's own collaborator, so a test's manual clock rules here as well.
    public func answerFromSnapshot(_ request: Request) -> Response? {
        guard let snapshot = published.withLock({ $0 }) else { return nil }
        let now = clock.wallNow()
        guard snapshot.answers(at: now, boot: clock.bootNow()), let reply = snapshot.answer(request, now: now) else { return nil }
        return .ok(reply)
    }

    /// The same answers on the engine's queue, from what the engine knows at `now` (the way
    /// every read goes when the snapshot cannot answer).
    func answerNow(_ request: Request, now: Date) -> JSONObject {
        let activities = activitiesForDisplay(at: now)
        let desired = policy.lifting(policy.desired(at: now, activities: activities), grants: book.grants, at: now)  // M3
        return makeSnapshot(desired: desired).answer(request, now: now) ?? [:]
    }

    /// `status` with every activity, on the engine's queue.
    func status(now: Date) -> JSONObject { answerNow(.status(all: true), now: now) }
}
