import FoundationEssentials

/// Events in, effects out (STYLE: decide in the core, act at the edge). Everything that happens
/// to blockd reaches the core as an `Input` (a request with who asked, the timer, what the
/// edge observed); the core answers with the effects to carry out, in order. Two effects wait
/// for what came of them: `.beginChange` (the edge sets aside what is not the change's to
/// undo), `.loadConfig` (`reload` reads the files at the edge), `.commit` (a request's change written, §7 "OK means on disk") and `.enforce` (T5:
/// the enforcers' report). Each ends its batch; the edge carries it out and
/// hands the `Outcome` back, and the core goes on from where it stopped. The order of the
/// steps (authorize, make, save, tell, reconcile, answer; loosenings due before a wake's
/// reconcile) is the core's alone: the engine and the tests only interpret effects.
extension Core {
    /// What happened, as the edge saw it, at the instant `handle(_:now:)` is given.
    public enum Input: Sendable {
        /// Start-up: the configured activities in force, what was missed caught up (T8), due
        /// loosenings carried out (M2), and a reconcile.
        case startUp
        /// A request from `peer`.
        case request(Request, from: Peer, origin: Origin = .client)
        /// The timer fired, or time jumped: due loosenings (M2), then a reconcile.
        case wake
        /// A reconcile and nothing else (T5).
        case reconcile
        /// An enforcer's retry or repair changed what is really enforced: applied again.
        case enforcementChanged
        /// T7: the system time zone (or its rules) changed.
        case timeZone(Zone)
        /// §9: the limits with a process of their apps running, and for whom.
        case usage(Set<LimitUse>)
        /// R1: the apps of any followed selection running, and for whom.
        case apps(Set<RunningApp>)
        /// Screen time: logind's login sessions now (nil: logind does not answer, so who is at
        /// the screen is not known).
        case sessions([LoginSession]?)
        /// B2: a native-messaging host's connection closed.
        case webEnded(uid: UInt32, reporter: UInt64)
        /// S5: the shield stopped something.
        case shieldHit(ShieldHit)
        /// T4: a failure found at the edge (a hook, a configuration problem at start-up).
        case failure(CoreError, uid: UInt32?, activity: String?, cause: FailureCause?)
    }

    /// Who a request is answered to.
    public enum Origin: Equatable, Sendable {
        /// A client: refusals are told (T4) and the answer is a `.reply` effect.
        case client
        /// SIGHUP's reload: a failure is the daemon's, recorded rather than answered.
        case signal
        /// M2: a loosening whose delay passed, carried out as its asker's request; a failure
        /// is said, not retried.
        case loosening(PendingLoosening)

        var isLoosening: Bool { if case .loosening = self { true } else { false } }
    }

    /// What came of an effect the core waits for.
    public enum Outcome: Sendable {
        /// `.beginChange`: the edge is ready for the change.
        case begun
        /// `.loadConfig`: the configuration files as they are now, or why they cannot be used.
        case configLoaded(Result<ConfigSet, CoreError>)
        /// `.commit`: the change is written (nil), or not, with the `not-saved` error to answer.
        case committed(CoreError?)
        /// `.enforce`: what the enforcers hold, and what failed.
        case enforced(EnforcementReport)
    }

    /// One step of what the core has still to do, in order.
    enum Step: Sendable {
        case startUp
        case request(Request, Peer, Origin, catchUp: Bool)
        case make(Request, Peer, Origin, files: Result<ConfigSet, CoreError>?)
        case proceed(Change, Origin)
        case answer(Change.Answer, Origin)
        case dueLoosenings
        case reconcile
        case emit(Effect)
    }

    /// What the core waits for before it goes on.
    enum Awaiting: Sendable {
        case begin(Request, Peer, Origin)
        case load(Request, Peer, Origin)
        case commit(Change, Request, Peer, Origin, Mark)
        case enforcement(ReconcilePlan)
    }

    /// Takes `input` at `now` and returns what to carry out, in order, up to the first effect
    /// that waits for an outcome (then the last one) or to the end.
    public mutating func handle(_ input: Input, now: Date) -> [Effect] {
        precondition(awaiting == nil, "an input reached the core while it waits for an outcome: the edge must hand the outcome back first")
        stepNow = now
        switch input {
        case .startUp: agenda = [.startUp, .dueLoosenings, .reconcile]
        case .request(let request, let peer, let origin):
            // T9, §7 Truth: a read catches up with a boundary the timer has not brought in yet,
            // so that no answer tells of a lock or an unlock before enforcement holds it.
            let catchUp = !request.modifies && origin == .client && nextTransition.map { now >= $0 } == true
            agenda = [.request(request, peer, origin, catchUp: catchUp)]
        case .wake: agenda = [.dueLoosenings, .reconcile]
        case .reconcile: agenda = [.reconcile]
        case .enforcementChanged:
            mustApply = true
            agenda = [.reconcile]
        case .timeZone(let zone): agenda = timeZoneChanged(to: zone) ? [.reconcile] : []
        case .usage(let running):
            usageChanged(running: running, now: now)
            agenda = [.reconcile]
        case .apps(let running): appsRunning(running, now: now)
        case .sessions(let sessions):
            sessionsObserved(sessions, now: now)
            agenda = [.reconcile]  // a screen-time limit counts, warns and acts with the sessions
        case .webEnded(let uid, let reporter): agenda = webEnded(uid: uid, reporter: reporter, now: now) ? [.reconcile] : []
        case .shieldHit(let hit): recordShieldHit(hit, now: now)
        case .failure(let error, let uid, let activity, let cause): recordFailure(error, uid: uid, activity: activity, cause: cause, now: now)
        }
        return run()
    }

    /// Goes on with what came of the effect the core waited for.
    public mutating func handle(_ outcome: Outcome) -> [Effect] {
        resume(outcome)  // returns before the steps run: the mark it held (sharing the state's storage) is let go,
        return run()     // so the reconcile that follows changes the state in place instead of copying it whole
    }

    private mutating func resume(_ outcome: Outcome) {
        let now = stepNow
        let waited = awaiting
        awaiting = nil
        switch (waited, outcome) {
        case (.begin(let request, let peer, let origin), .begun):
            if request.command == .reload {
                awaiting = .load(request, peer, origin)
                emit(.loadConfig)
            } else {
                agenda.insert(.make(request, peer, origin, files: nil), at: 0)
            }
        case (.load(let request, let peer, let origin), .configLoaded(let files)):
            agenda.insert(.make(request, peer, origin, files: files), at: 0)
        case (.commit(let change, _, _, let origin, _), .committed(nil)):
            agenda.insert(.proceed(change, origin), at: 0)
        case (.commit(let change, let request, let peer, let origin, let mark), .committed(let error?)):
            restore(mark)  // §7: nothing of the change was enforced yet
            if change.refollowsLimitsOnFailure { followLimits() }
            refuse(request, peer: peer, origin: origin, error, now: now)
        case (.enforcement(let plan), .enforced(let report)):
            finish(plan, report: report, now: now)
        default:
            preconditionFailure("the edge handed the core an outcome it does not wait for")
        }
    }

    /// Whether the core waits for an outcome (the edge owes it one).
    public var isWaiting: Bool { awaiting != nil }

    private mutating func run() -> [Effect] {
        while awaiting == nil, !agenda.isEmpty { perform(agenda.removeFirst(), now: stepNow) }
        return takeEffects()
    }

    private mutating func perform(_ step: Step, now: Date) {
        switch step {
        case .startUp: startUp(now: now)
        case .request(let request, let peer, let origin, let catchUp):
            if catchUp { return agenda.insert(contentsOf: [.reconcile, .request(request, peer, origin, catchUp: false)], at: 0) }
            authorizing(request, peer: peer, origin: origin, now: now)
        case .make(let request, let peer, let origin, let files):
            make(request, peer: peer, origin: origin, files: files, now: now)
        case .proceed(let change, let origin):
            proceed(change, now: now)
            agenda.insert(contentsOf: change.reconciles ? [.reconcile, .answer(change.answer, origin)] : [.answer(change.answer, origin)], at: 0)
        case .answer(let answer, let origin):
            guard origin == .client else { return }
            if let reply = reply(answer, now: now) { emit(.reply(.ok(reply))) } else { emit(.replyFromView(answer)) }
        case .dueLoosenings:
            let due = takeDueLoosenings(now: now)
            guard !due.isEmpty else { return }
            agenda.insert(contentsOf: due.map { .request($0.request, $0.peer, .loosening($0.loosening), catchUp: false) } + [.emit(.persist)], at: 0)
        case .reconcile:
            let plan = planReconcile(now: now, shown: shownBlocked)
            guard let targets = plan.targets else { return finish(plan, report: nil, now: now) }
            awaiting = .enforcement(plan)
            emit(.enforce(targets, changed: plan.changed))
        case .emit(let effect): emit(effect)
        }
    }

    /// One request: authorized (A1); a change then waits for the edge to begin it.
    private mutating func authorizing(_ request: Request, peer: Peer, origin: Origin, now: Date) {
        do throws(CoreError) {
            try authorize(request, by: peer)
        } catch {
            return refuse(request, peer: peer, origin: origin, error, now: now)
        }
        guard request.modifies else { return make(request, peer: peer, origin: origin, files: nil, now: now) }
        awaiting = .begin(request, peer, origin)
        emit(.beginChange)
    }

    /// The request made in memory, then saved before anything follows (a read has nothing to
    /// save). The mark is where a change that cannot be saved comes back to (§7).
    private mutating func make(_ request: Request, peer: Peer, origin: Origin, files: Result<ConfigSet, CoreError>?, now: Date) {
        do throws(CoreError) {
            let mark = request.modifies ? mark() : nil
            let change = try prepare(request, from: peer, now: now, delaying: !origin.isLoosening, fresh: files)
            if change.saves, let mark {
                awaiting = .commit(change, request, peer, origin, mark)
                return emit(.commit)
            }
            agenda.insert(.proceed(change, origin), at: 0)
        } catch {
            refuse(request, peer: peer, origin: origin, error, now: now)
        }
    }

    /// A request that could not be made, told as its origin wants it (T4).
    private mutating func refuse(_ request: Request, peer: Peer, origin: Origin, _ error: CoreError, now: Date) {
        switch origin {
        case .client:
            refused(request, with: error, uid: peer.uid, now: now)
            emit(.reply(.error(error)))
        case .loosening(let l):
            refused(request, with: error, uid: peer.uid, now: now)
            delayedLooseningFailed(l, error)
        case .signal:
            guard error.code != .notSaved else { return }  // recorded once by the failed save
            recordFailure(error, uid: nil, activity: nil, cause: error.code == .invalidConfig ? .config : nil, now: now)
            emit(.persist)
        }
    }

    /// The second half of a reconcile, with the enforcers' report (nil: nothing to enforce).
    private mutating func finish(_ plan: ReconcilePlan, report: EnforcementReport?, now: Date) {
        let done = finishReconcile(plan, report: report, now: now)
        for selection in done.looked {
            if isBlockedNow(selection) { shownBlocked.insert(selection) } else { shownBlocked.remove(selection) }
        }
        emit(.reconciled(looked: done.looked))
    }
}
