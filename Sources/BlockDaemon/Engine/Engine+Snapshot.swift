import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The read-only requests are answered from a `StatusSnapshot` the engine publishes after each
/// change, on the connection's side: a reader never waits behind the engine (a reconcile, a
/// hosts write, an fsync), and the engine never renders a reply for a reader.
extension Engine {
    /// Publishes what the engine knows now. `changed`: the selections a reconcile looked at,
    /// whose blocked view is brought up to date (nil: nothing blocked changed). O(blocked).
    /// While a request is handled, or answers wait for the fdatasync of a group commit, the
    /// snapshot is only marked due: it is published once, when the batch is on disk and before
    /// any answer of it is sent (`publishIfDue`), so a client that got its `OK` always reads a
    /// snapshot that holds its change, and a batch of changes pays for one snapshot, not one each.
    func publishSnapshot(changed: Set<String>? = nil) {
        assertOnQueue()
        // While no snapshot shows the view, a selection named by thousands of blocks would cost
        // thousands of steps per change: only whether it is blocked is kept then, and the rest
        // is worked out when a snapshot shows it again.
        let shown = snapshotShowsView
        for selection in changed ?? [] {
            if shown {
                blockedView[selection] = core.blockedNow(selection)
                staleViews.remove(selection)
            } else if core.isBlockedNow(selection) {
                if blockedView[selection] == nil { blockedView[selection] = Policy.Blocked(selection: selection, reasons: [], until: nil) }
                staleViews.insert(selection)
            } else {
                blockedView[selection] = nil
                staleViews.remove(selection)
            }
        }
        snapshotDue = true
        guard handling == 0 && saving.waiting.isEmpty else { return }
        publishIfDue()
    }

    /// Whether the published snapshot lists the active activities and the blocked view, so that
    /// status is answered from it: not with more than `StatusSnapshot.maxActive` active.
    var snapshotShowsView: Bool { core.registry.index.activeCount <= StatusSnapshot.maxActive }

    /// Publishes the snapshot marked due, if one is.
    func publishIfDue() {
        assertOnQueue()
        guard snapshotDue else { return }
        snapshotDue = false
        if !staleViews.isEmpty && snapshotShowsView {
            for selection in staleViews { blockedView[selection] = core.blockedNow(selection) }
            staleViews = []
        }
        let snapshot = makeSnapshot(parts: snapshotParts(desired: blockedView.values), isBlocked: { self.blockedView[$0] != nil })
        published.write { $0 = snapshot }
        publications += 1
        collaborators.published(snapshot)
    }

    /// Publishes unless a snapshot was published (or marked due) since `mark` (a reconcile
    /// already did it): a change publishes once.
    func publishSnapshot(unlessSince mark: Int) {
        if publications == mark && !snapshotDue { publishSnapshot() }
    }

    /// What `status` shows, worked out from the index without a walk over the registry.
    func snapshotParts(desired: [Policy.Blocked], bounded: Bool = true) -> StatusSnapshot.Parts {
        // Only the first `maxActive` are kept (in registration order); with more, status goes to
        // the engine: a change never pays for listing a hundred thousand active blocks.
        let active = bounded && !snapshotShowsView ? nil
            : core.registry.index.activities(named: Set(desired.flatMap { $0.reasons.map(\.activity) }).union(core.liftedActivities))
        let n = core.registry.index.kindCounts
        let counts = StatusCounts(activities: core.registry.index.count, active: active?.count ?? core.registry.index.activeCount,
                                  blocks: n[.block] ?? 0, schedules: n[.schedule] ?? 0, limits: n[.limit] ?? 0)
        // Without the active list status goes to the engine, which works out what is blocked
        // itself: the snapshot does not hold the blocked view then (holding it would make the
        // view's next change copy it whole).
        return StatusSnapshot.Parts(active: active, limits: core.registry.index.limits.map(Activity.limit), counts: counts,
                                    desired: active == nil ? [] : desired,
                                    scoped: core.registry.index.scopedCount > 0)
    }

    /// `isBlocked` says whether a selection is blocked in the view `parts` was made from
    /// (without a walk over it; `parts.desired` may leave the view out, see `snapshotParts`).
    func makeSnapshot(parts: StatusSnapshot.Parts, isBlocked: (String) -> Bool, every: [Activity]? = nil) -> StatusSnapshot {
        // `applied` is filled in when a status is written (StatusSnapshot.applied).
        var enforcement: JSONObject = ["mode": .string(enforcer.mode), "applied": .array([])]
        if let composite = enforcer as? CompositeEnforcer, case .array(let offs) = composite.offs, !offs.isEmpty {
            enforcement["off"] = .array(offs)  // what the mode line does not claim, and why
        }
        enforcement["hostsFile"] = .string(core.config.daemon.hostsFile)
        // §7 "Truth": which configuration is in force, and whether the state is on disk.
        enforcement["config"] = .string(core.configProvenance.kind.rawValue)
        if let problem = core.configProvenance.problem { enforcement["configProblem"] = .string(problem) }
        if let problem = saveProblem { enforcement["stateProblem"] = .string(problem) }
        // Those of the blocked not enforced, found from the (usually few) not enforced.
        enforcement["notEnforced"] = core.notEnforcedJSON(core.notEnforced.keys.sorted().filter(isBlocked))
        if !core.partsOff.isEmpty { enforcement["partial"] = core.partialJSON(core.partsOff.keys.sorted().filter(isBlocked)) }
        if !core.lingering.isEmpty {  // §7 Truth: no longer blocked, but still in force until a write lands
            enforcement["unblockPending"] = .array(core.lingering.sorted(by: { $0.key < $1.key }).map {
                ["selection": .string($0.key), "cause": .string($0.value)]
            })
        }
        return StatusSnapshot(local: core.local, parts: parts, usage: core.state.usage,
                              failures: core.state.failures, shieldHits: core.state.shieldHits, enforcement: enforcement,
                              nextTransition: core.nextTransition, maxActivities: core.registry.maxActivities,
                              wallMinusBoot: core.wallMinusBoot, saveFailing: saveProblem != nil,
                              moreTime: core.requestsReply(), screen: core.screenHolds(now: clock.wallNow()), lastEnforced: core.lastEnforced,
                              enforcementNotes: collaborators.enforcementNotes, notesVersion: collaborators.notesVersion,
                              serverStats: collaborators.serverStats, applied: core.appliedSorted, every: every)
    }

    /// A read-only request answered from the published snapshot, on the caller's thread; nil
    /// when it must go to the engine (not a read-only request, nothing published yet, or the
    /// snapshot is not the truth at this instant: `StatusSnapshot.answers(at:boot:)`). The
    /// clock is the engine's own collaborator, so a test's manual clock rules here as well.
    public func answerFromSnapshot(_ request: Request, peer: Peer = .root) -> Response? {
        guard let snapshot = published.read({ $0 }) else { return nil }
        let (now, boot) = clock.observed()
        guard request.command.route.snapshot, snapshot.answers(at: now, boot: boot),
              let reply = snapshot.answer(request, now: now, private: Core.privateView(peer)) else { return nil }
        return .ok(reply)
    }

    /// The same answers on the engine's queue, from what the engine knows at `now` (the way
    /// every read goes when the snapshot cannot answer, and `status --all` and `schedule list`,
    /// which list every activity).
    func answerNow(_ request: Request, now: Date, private uid: UInt32? = nil) -> JSONObject {
        snapshotNow(now).snapshot.answer(request, now: now, private: uid) ?? [:]
    }

    /// Every activity, what they block at `now` (grants considered, M3), and a snapshot of what
    /// the engine knows then, worked out from them (not bounded: it lists every active one).
    func snapshotNow(_ now: Date) -> (every: [Activity], blocked: [Policy.Blocked], snapshot: StatusSnapshot) {
        let every = core.activitiesForDisplay(at: now)
        let blocked = core.blocked(at: now, every: every)
        return (every, blocked, makeSnapshot(parts: snapshotParts(desired: blocked, bounded: false), isBlocked: Set(blocked.map(\.selection)).contains,
                                             every: every))
    }

    /// `status` with every activity, on the engine's queue.
    func status(now: Date) -> JSONObject { answerNow(.status(all: true), now: now) }
}
