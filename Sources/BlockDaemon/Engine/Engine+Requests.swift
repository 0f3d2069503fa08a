import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Requests (§6, §8) and everything else that happens, through the core (`Core.handle`): the
/// engine hands it the input, carries out the effects it returns in order, and hands back what
/// came of those it waits for (the change begun, the configuration read, the save: `OK` means
/// on disk, §7; the enforcers' report).
extension Engine {
    /// Handles one request on the engine queue; `reply` gets the answer once the change it made
    /// is on disk (§7), so that one fdatasync covers the changes of every request handled
    /// meanwhile (group commit). `watch` is the server's business.
    public func handle(_ request: Request, from peer: Peer, reply: @escaping (Response) -> Void) {
        handling += 1
        let response = answer(request, from: peer)
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
    public func handle(_ request: Request, from peer: Peer) -> Response {
        var out: Response?
        handle(request, from: peer) { out = $0 }
        if out == nil { flush() }
        return out!
    }

    private func answer(_ request: Request, from peer: Peer) -> Response {
        assertOnQueue()
        let now = observedNow()
        lookUpUsers(names: request.userNames, uids: [peer.uid])  // at the edge, before the core decides (U1, A1)
        let response = run(.request(request, from: peer), now: now)
        // Only marked due here (`handling`): published once before the answer is sent; a
        // failure recorded is news too.
        if request.modifies { publishSnapshot() }
        guard let response else {
            return .error(CoreError(.internal, "'\(request.command)' got no answer; this is a bug in blockd, please report it"))
        }
        return response
    }

    /// Hands `input` to the core at `now` and carries out what it decides, in order, handing
    /// back what came of each effect it waits for. What carrying an effect out makes the core
    /// decide (a failed save is a recorded failure) is carried out after it. Returns the
    /// answer to a client's request.
    @discardableResult
    func run(_ input: Core.Input, now: Date) -> Response? {
        assertOnQueue()
        var answer: Response?
        var effects = core.handle(input, now: now)
        var mark: Snapshot?  // the change begun: what a failed group commit puts back
        while !effects.isEmpty {
            var outcome: Core.Outcome?
            var unsaved: DaemonError?
            for effect in effects {
                switch effect {
                case .beginChange:
                    mark = snapshot()
                    outcome = .begun
                case .loadConfig: outcome = .configLoaded(freshConfig())
                case .commit:
                    unsaved = commit(since: mark)
                    mark = nil  // held no longer than needed: a mark shares the state's storage, and the
                                // reconcile that follows would copy what it changes (5,000 names) whole
                    outcome = .committed(unsaved.map { CoreError(.notSaved, "the change was not made: \(store.notSaved($0).message)") })
                case .enforce(let targets, let changed): outcome = .enforced(enforcer.enforce(blocked: targets, changed: changed))
                case .reply(let response): answer = response
                case .replyFromView(let view): answer = .ok(published(view, now: now))
                default: carryOut(effect)
                }
            }
            effects = outcome.map { core.handle($0) } ?? []
            if let unsaved { saveFailed(unsaved, now: now) }  // T4, once the core put the change back
            effects += core.takeEffects()
        }
        return answer
    }

    /// `reload` reads the configuration files here, at the edge; the core decides what to do with them.
    private func freshConfig() -> Result<ConfigSet, CoreError> {
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
        case .reply, .activity, .started: preconditionFailure("the core answers \(answer) itself")
        }
    }

    /// SIGHUP: like `blockc reload`, with the failure recorded as the daemon's (no one's)
    /// rather than answered.
    public func reloadFromSignal() {
        assertOnQueue()
        let now = observedNow()
        run(.request(.reload, from: .root, origin: .signal), now: now)
        publishSnapshot()
    }

    /// From the usage monitor: the limits that have at least one process running now.
    public func usageChanged(running: Set<LimitUse>) {
        assertOnQueue()
        run(.usage(running), now: observedNow())
    }

    /// B2: a native-messaging host's connection closed: what it reported for `uid` ends.
    public func webEnded(uid: UInt32, reporter: UInt64) {
        assertOnQueue()
        run(.webEnded(uid: uid, reporter: reporter), now: observedNow())
    }

    /// R1: from the usage monitor, the apps of any selection running now and for whom.
    func appsRunning(_ running: Set<UsageMonitor.Running>) {
        assertOnQueue()
        run(.apps(running), now: observedNow())
    }

    /// Screen time: logind's login sessions, after any change (LogindSessions).
    func sessionsObserved(_ sessions: [LoginSession]?) {
        assertOnQueue()
        run(.sessions(sessions), now: observedNow())
    }

    /// The limits' apps, for the usage monitor (§9).
    public var limitedApps: [String: LimitedApps] { core.limitedApps }

    /// `status` for `viewer` (nil: everyone): the activities they see and what blocks them.
    /// While no activity has a scope every view is the whole one (and the snapshot answers);
    /// with scopes the engine works the view out here, over every activity.
    func statusDocument(now: Date, viewer: UInt32?, all: Bool) -> StatusDocument {
        let (every, blocked, snapshot) = snapshotNow(now)
        guard let viewer else { return snapshot.document(all: all, every: all ? every : nil, now: now) }
        var document: StatusDocument
        if core.registry.index.scopedCount == 0 {  // every view is the whole one, but for who is kept off the screen
            document = snapshot.document(all: all, every: all ? every : nil, now: now)
        } else {
            let (view, shapes) = (core.statusView(for: viewer, all: all, now: now, every: every, blocked: blocked), core.shapes)
            document = snapshot.document(all: all, every: [], now: now)  // the activities are the view's
            document.activities = view.activities.map { shapes.activityReply($0, at: now) }
            document.blocked = view.blocked.map(shapes.blockedReply)
            document.enforcement["applied"] = .array(view.applied.map { .string($0) })
            document.enforcement["notEnforced"] = view.notEnforced
            document.enforcement["partial"] = view.partial == .array([]) ? nil : view.partial
            document.viewer = Int(viewer)
        }
        document.screen = document.screen.filter { $0.uid == Int(viewer) }  // U2: the viewer kept off the screen, or nobody
        return document
    }
}
