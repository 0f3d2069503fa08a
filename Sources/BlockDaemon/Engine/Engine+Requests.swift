import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Requests (§6, §8) through the core: `authorize`, `prepare` (the change, in memory), the save
/// (`OK` means on disk, §7), `proceed` (what people are told), the reconcile, and the answer.
/// A refusal is answered `ERR <code> <message>` here, in one place.
extension Engine {
    /// Handles one request on the engine queue; `reply` gets the answer once the change it made
    /// is on disk (§7), so that one fdatasync covers the changes of every request handled
    /// meanwhile (group commit). `watch` is the server's business. `delaying` false: a
    /// loosening whose `Delay=` has passed is carried out (M2).
    public func handle(_ request: Request, from peer: Peer, delaying: Bool = true, reply: @escaping (Response) -> Void) {
        handling += 1
        let response = answer(request, from: peer, delaying: delaying)
        carryOut()
        handling -= 1
        // An answer never overtakes one waiting for the fdatasync (a connection pipelines).
        guard saving.waiting.isEmpty && !(request.modifies && saving.journal.unsynced) else {
            saving.waiting.append((response, reply))
            return scheduleFlush()  // the batch's snapshot is published when it is on disk
        }
        publishIfDue()
        reply(response)
    }

    /// Handles one request and syncs at once: the answer, with its change on disk.
    public func handle(_ request: Request, from peer: Peer, delaying: Bool = true) -> Response {
        var out: Response?
        handle(request, from: peer, delaying: delaying) { out = $0 }
        if out == nil { flush() }
        return out!
    }

    private func answer(_ request: Request, from peer: Peer, delaying: Bool) -> Response {
        assertOnQueue()
        let now = observedNow()
        // T9, §7 Truth: a boundary has passed that the timer has not brought in yet (its wake is
        // on the way, or the machine is busy). A read brings it in first, so that no answer
        // tells of a lock or an unlock before the hosts file holds it. (A change reconciles
        // anyway; the timer's wake still comes, and carries out any delayed loosening then.)
        if !request.modifies, let next = core.nextTransition, now >= next { reconcile(now: now) }
        do throws(CoreError) {
            let reply = try perform(request, from: peer, now: now, delaying: delaying)
            // Only marked due here (`handling`): published once before the answer is sent.
            if request.modifies { publishSnapshot() }
            return .ok(reply)
        } catch {
            core.refused(request, with: error, uid: peer.uid, now: now)  // T4
            carryOut()
            if request.modifies { publishSnapshot() }  // the failure recorded here is news
            return .error(error)
        }
    }

    /// One request through the core: authorized, made in memory, saved (undone and refused
    /// `not-saved` if that fails), told, enforced, and answered.
    private func perform(_ request: Request, from peer: Peer, now: Date, delaying: Bool) throws(CoreError) -> JSONObject {
        lookUpUsers(names: request.userNames, uids: [peer.uid])  // at the edge, before the core decides (U1, A1)
        try core.authorize(request, by: peer)
        let before = request.modifies ? snapshot() : nil
        let change = try core.prepare(request, from: peer, now: now, delaying: delaying, fresh: freshConfig(for: request))
        carryOut()  // what making the change found (a configured activity not in force) is said either way
        if change.saves, let before {
            do throws(CoreError) { try commit(since: before, now: now) } catch {
                if change.refollowsLimitsOnFailure { core.followLimits() }
                carryOut()
                throw error
            }
        }
        core.proceed(change, now: now)
        if change.reconciles { reconcile(now: now) } else { carryOut() }
        return core.reply(change.answer, now: now) ?? published(change.answer, now: now)
    }

    /// `reload` reads the configuration files here, at the edge; the core decides what to do with them.
    private func freshConfig(for request: Request) -> Result<ConfigSet, CoreError>? {
        guard request.command == .reload else { return nil }
        do throws(CoreError) {
            let config = try collaborators.loadConfig()
            readUsers(naming: config.userNames)  // a user added before the reload is known to it
            return .success(config)
        } catch {
            return .failure(error)
        }
    }

    /// The users table read again whole (start, reload, /etc/passwd or /etc/group changed),
    /// with the names `naming` gives looked up where it lacks them.
    func readUsers(naming names: [String]) {
        let table = collaborators.users.lookUp(collaborators.users.read(), names, [])
        core.usersChanged(table)
        usersNow.write { $0 = table }
    }

    /// The names and uids the core is about to decide with, looked up where the table lacks
    /// them (a directory that does not enumerate, a user added a moment ago).
    func lookUpUsers(names: [String], uids: [UInt32]) {
        let lacking = core.users.lacking(names: names, uids: uids)
        guard !lacking.names.isEmpty || !lacking.uids.isEmpty else { return }
        let table = collaborators.users.lookUp(core.users, lacking.names, lacking.uids)
        core.usersChanged(table)
        usersNow.write { $0 = table }
    }

    /// The answers rendered from what the engine publishes (status, failures, stats).
    private func published(_ answer: Change.Answer, now: Date) -> JSONObject {
        switch answer {
        case .status(let all, let viewer, let peer):
            var document = statusDocument(now: now, viewer: viewer, all: all)
            if let own = Core.privateView(peer) {  // A1
                document = Authority.view(own, document)
                document.counts = core.counts(visibleTo: own, now: now)
            }
            return document.json
        case .published(let request, let peer): return answerNow(request, now: now, private: Core.privateView(peer))
        case .reply, .activity, .started: return core.reply(answer, now: now) ?? [:]
        }
    }

    /// M2: carries out the loosenings whose delay has passed, as their asker would have.
    /// Called before a timer's or start-up's reconcile, never from inside one.
    func performDueLoosenings(now: Date) {
        let due = core.takeDueLoosenings(now: now)
        guard !due.isEmpty else { return }
        for (request, peer, loosening) in due {
            if case .error(let e) = handle(request, from: peer, delaying: false) { core.delayedLooseningFailed(loosening, e) }
        }
        persist()
        carryOut()
    }

    /// SIGHUP: like `blockc reload`, with the failure recorded as the daemon's (no one's)
    /// rather than answered.
    public func reloadFromSignal() {
        assertOnQueue()
        let now = observedNow()
        do throws(CoreError) { _ = try perform(.reload, from: .root, now: now, delaying: true) } catch {
            carryOut()
            guard error.code != .notSaved else { return }  // recorded once by the failed save
            recordFailure(error, uid: nil, activity: nil, cause: error.code == .invalidConfig ? .config : nil, now: now)
            persist()
            publishSnapshot()
        }
    }

    /// From the usage monitor: the limits that have at least one process running now.
    public func usageChanged(running: Set<LimitUse>) {
        assertOnQueue()
        let now = observedNow()
        core.usageChanged(running: running, now: now)
        reconcile(now: now)
    }

    /// B2: a native-messaging host's connection closed: what it reported for `uid` ends.
    public func webEnded(uid: UInt32, reporter: UInt64) {
        assertOnQueue()
        let now = observedNow()
        if core.webEnded(uid: uid, reporter: reporter, now: now) { reconcile(now: now) }
    }

    /// R1: from the usage monitor, the apps of any selection running now and for whom.
    func appsRunning(_ running: Set<UsageMonitor.Running>) {
        assertOnQueue()
        core.appsRunning(running, now: observedNow())
        carryOut()
    }

    /// Screen time: logind's login sessions, after any change (LogindSessions).
    func sessionsObserved(_ sessions: [LoginSession]) {
        assertOnQueue()
        let now = observedNow()
        _ = core.sessionsObserved(sessions, now: now)
        reconcile(now: now)  // a screen-time limit counts, warns and acts with the sessions
    }

    /// The limits' apps, for the usage monitor (§9).
    public var limitedApps: [String: LimitedApps] { core.limitedApps }

    /// `status` for `viewer` (nil: everyone): the activities they see and what blocks them.
    /// While no activity has a scope every view is the whole one (and the snapshot answers);
    /// with scopes the engine works the view out here, over every activity.
    func statusDocument(now: Date, viewer: UInt32?, all: Bool) -> StatusDocument {
        let (every, blocked, snapshot) = snapshotNow(now)
        guard let viewer, core.registry.index.scopedCount > 0 else { return snapshot.document(all: all, every: all ? every : nil, now: now) }
        let (view, shapes) = (core.statusView(for: viewer, all: all, now: now, every: every, blocked: blocked), core.shapes)
        var document = snapshot.document(all: all, every: [], now: now)  // the activities are the view's
        document.activities = view.activities.map { shapes.activityReply($0, at: now) }
        document.blocked = view.blocked.map(shapes.blockedReply)
        document.enforcement["applied"] = .array(view.applied.map { .string($0) })
        document.enforcement["notEnforced"] = view.notEnforced
        document.enforcement["partial"] = view.partial == .array([]) ? nil : view.partial
        document.viewer = Int(viewer)
        return document
    }
}
