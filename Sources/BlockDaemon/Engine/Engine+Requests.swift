import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Request handlers (§6, §8). Each returns the response object or throws a CoreError;
/// the error is mapped to `ERR <code> <message>` in one place (`handle`).
extension Engine {
    /// Handles one request on the engine queue; `reply` gets the answer once the change it made
    /// is on disk (§7), so that one fdatasync covers the changes of every request handled
    /// meanwhile (group commit). `watch` is the server's business. `delaying` false: a
    /// loosening whose `Delay=` has passed is carried out (M2).
    public func handle(_ request: Request, from peer: Peer, delaying: Bool = true, reply: @escaping (Response) -> Void) {
        let response = answer(request, from: peer, delaying: delaying)
        // An answer never overtakes one waiting for the fdatasync (a connection pipelines).
        guard saving.waiting.isEmpty && !(request.modifies && saving.journal.unsynced) else {
            saving.waiting.append((response, reply))
            return scheduleFlush()
        }
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
        let mark = publications
        do throws(CoreError) {
            // A1: who may call the command at all; what it acts on is judged where it is found.
            if case .refused(let error) = Authority.decide(request.command, by: registry.actor(peer)) { throw error }
            let request = resolvingNames(request, for: peer)
            if delaying, let o = try delayedLoosening(request, peer: peer, now: now) {  // M2
                publishSnapshot(unlessSince: mark)
                return .ok(o)
            }
            let reply = try dispatch(request, peer: peer, now: now)
            if request.modifies { publishSnapshot(unlessSince: mark) }
            return .ok(reply)
        } catch {
            // T4: refusals of well-formed changes are recorded (the cap, permissions, locks);
            // input mistakes are answered on the spot and not kept, so they cannot push real
            // failures out of the bounded list.
            if request.modifies && Engine.recordedCodes.contains(error.code) {
                recordFailure(error, uid: peer.uid, activity: nil, now: now)
                persist()
            }
            if request.modifies { publishSnapshot() }  // the failure recorded here is news
            return .error(error)
        }
    }

    static let recordedCodes: Set<ErrorCode> = [.activityLimit, .permissionDenied, .locked, .exists, .invalidConfig, .internal, .busy]

    /// A1: a name a member types means their own activity of that name when they have one
    /// (`youtube` is `kid/youtube` for kid), else the name as given.
    func resolvingNames(_ request: Request, for peer: Peer) -> Request {
        switch request {
        case .stop(let n): .stop(name: registry.resolve(n, for: peer))
        case .scheduleRemove(let n): .scheduleRemove(name: registry.resolve(n, for: peer))
        case .limitRemove(let n): .limitRemove(name: registry.resolve(n, for: peer))
        case .cancel(let n): .cancel(name: registry.resolve(n, for: peer))
        case .hello, .status, .start, .scheduleAdd, .scheduleList, .selections, .selectionShow, .failures, .failuresClear, .limitAdd, .limitList, .more, .requests, .approve, .deny, .stats, .report, .foreground, .watch, .reload:
            request
        }
    }

    /// R2: the shield's hits by local day, by selection, as `viewer` sees them (nil: everyone's
    /// totals; a uid: the hits on that person's processes).
    func shieldHitDays(viewer: UInt32?) -> [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        for (key, hits) in state.shieldHits {
            if let day = ShieldHitDays.day(of: key, for: viewer) { out[day] = hits }
        }
        return out
    }

    private func dispatch(_ request: Request, peer: Peer, now: Date) throws(CoreError) -> JSONObject {
        switch request {
        case .hello:
            return ["protocol": .int(Int64(BlockdVersion.protocolVersion)), "version": .string(BlockdVersion.version), "daemon": "blockd"]
        // The read-only answers come from the published snapshot on the connection's side
        // (Engine+Snapshot.swift); they reach the engine when that cannot answer, and for
        // other users' views (per-user blocks).
        case .status(let all, let view):
            var o = status(now: now, viewer: try viewer(view, peer: peer), all: all)
            if let own = Engine.privateView(peer) { o = StatusSnapshot.only(own, o); o["counts"] = counts(visibleTo: own, now: now) }  // A1
            return o
        case .failures, .stats: return answerNow(request, now: now, private: Engine.privateView(peer))
        case .report(let args):  // R2: a member sees their own view (`viewer` refuses another's)
            let uid = try viewer(args.view, peer: peer)
            let range = args.range(today: local.civil(of: now).date)
            let limits = registry.index.limits.filter { l in uid.map { l.users?.contains($0) ?? true } ?? true }
            return state.history.report(from: range.from, to: range.to, previous: range.previous, period: args.period.name,
                                        user: uid.map(String.init), at: now, clock: local, limits: limits, usage: state.usage,
                                        shieldHits: shieldHitDays(viewer: uid))
        case .foreground(let app): return try foreground(app, peer: peer, now: now)  // R1: the caller's own, by SO_PEERCRED
        case .start(let args): return try start(args, peer: peer, now: now)
        case .stop(let name): return try stop(name, peer: peer, now: now)
        case .scheduleAdd(let schedule): return try addSchedule(schedule, peer: peer, now: now)
        case .scheduleRemove(let name): return try removeSchedule(name, peer: peer, now: now)
        case .scheduleList:
            let schedules = activitiesForDisplay(at: now).filter { $0.kind == .schedule && listed($0, to: peer) }
            return ["schedules": .array(schedules.map { shapes.activity($0, at: now) })]
        case .selections:
            return ["selections": .array(config.catalog.selections.map { shapes.selection($0) })]
        case .selectionShow(let name):
            return ["selection": shapes.selection(try config.catalog.resolve(name))]
        case .failuresClear:
            // A1: a member clears their own failures only; what the daemon or others recorded stays.
            let before = snapshot()
            let count = state.failures.count
            if let own = Engine.privateView(peer) { state.failures.removeAll { $0.uid == own } } else { state.failures = [] }
            try commit(since: before, now: now)
            return ["cleared": .int(Int64(count - state.failures.count))]
        case .reload: return try reload(now: now)
        case .limitAdd(let limit): return try addLimit(limit, peer: peer, now: now)
        case .limitRemove(let name): return try removeLimit(name, peer: peer, now: now)
        case .more, .requests, .approve, .deny, .cancel: return try moreTime(request, peer: peer, now: now)
        case .limitList:
            let limits = activitiesForDisplay(at: now).filter { $0.kind == .limit && listed($0, to: peer) }
            return ["limits": .array(limits.map { shapes.activity($0, at: now) })]
        case .watch:
            throw CoreError(.internal, "watch is handled by the connection, not the engine")
        }
    }

    private func start(_ args: Request.StartArguments, peer: Peer, now: Date) throws(CoreError) -> JSONObject {
        var names: [String] = []
        for argument in args.selections { names.append(try config.catalog.resolve(argument).name) }
        let end: Date
        if let seconds = args.seconds {
            end = now + TimeInterval(seconds)  // T1: exact, from receipt; T6 keeps it elapsed time
        } else {
            end = args.until!
        }
        let users = try grantedScope(args.users, selections: names, peer: peer)  // per-user blocks
        let before = snapshot()
        let moreTime = args.moreTime ?? MoreTimePolicy.familyDefault(scope: users, setBy: peer.uid)  // A1
        let outcome = try registry.startBlock(name: args.name, selections: names, end: end, locked: args.lock, moreTime: moreTime,
                                             users: users, by: peer, now: now)
        if case .created = outcome { state.history.count(.started, user: String(peer.uid), at: now, clock: local) }  // R1
        try commit(since: before, now: now)
        let block = outcome.block
        switch outcome {
        case .created:
            log.log(JournalEntry("Block '\(block.name)' started by \(who(peer.uid)) until \(local.iso8601(block.end))\(block.locked ? " (locked)" : "")",
                             priority: .info, event: .start, fields: [(.activity, block.name), (.end, local.iso8601(block.end)), (.uid, String(peer.uid))]))
        case .extended(let from, _):
            log.log(JournalEntry("Block '\(block.name)' extended by \(who(peer.uid)) from \(local.iso8601(from.end)) to \(local.iso8601(block.end)); a block is extended, never shortened",
                             priority: .info, event: .start, fields: [(.activity, block.name), (.end, local.iso8601(block.end))]))
        case .unchanged: break
        }
        reconcile(now: now)
        guard case .object(var o) = shapes.activity(.block(block), at: now) else { return [:] }
        o["outcome"] = switch outcome {
        case .created: "created"
        case .extended: "extended"
        case .unchanged: "unchanged"
        }
        // Truth (§7): the block is registered either way; the client says whether it
        // is enforced, and blockd retries what is not.
        let missing = notEnforcedJSON(block.selections)
        o["enforced"] = .bool(missing.array?.isEmpty ?? true)
        if missing.array?.isEmpty == false { o["notEnforced"] = missing }
        return o
    }

    /// `[{"selection", "cause"}]` for those of `selections` that should be blocked now but are
    /// not enforced.
    func notEnforcedJSON(_ selections: [String]) -> JSON {
        .array(selections.filter { applied[$0] == nil && notEnforced[$0] != nil }.map {
            ["selection": .string($0), "cause": .string(notEnforced[$0]!)]
        })
    }

    private func stop(_ name: String, peer: Peer, now: Date) throws(CoreError) -> JSONObject {
        let before = snapshot()
        let block = try registry.stopBlock(named: name, by: peer, now: now)
        state.history.count(.stoppedEarly, user: String(peer.uid), at: now, clock: local)  // R1
        try commit(since: before, now: now)
        for s in block.selections { pendingUnlockNotes[s] = "block '\(block.name)' stopped early by \(who(peer.uid))" }
        log.log(JournalEntry("Block '\(block.name)' stopped early by \(who(peer.uid))", priority: .info, event: .stop,
                         fields: [(.activity, block.name), (.uid, String(peer.uid))]))
        reconcile(now: now)
        return ["stopped": .string(block.name)]
    }

    private func addSchedule(_ schedule: Schedule, peer: Peer, now: Date) throws(CoreError) -> JSONObject {
        var s = schedule
        var names: [String] = []
        for argument in s.selections { names.append(try config.catalog.resolve(argument).name) }
        s.selections = names
        s.users = try grantedScope(s.users, selections: names, peer: peer)  // per-user blocks
        s.moreTime = s.moreTime ?? MoreTimePolicy.familyDefault(scope: s.users, setBy: peer.uid)  // A1
        let before = snapshot()
        try registry.addSchedule(s, by: peer, now: now)
        try commit(since: before, now: now)
        log.log(JournalEntry("Schedule '\(s.name)' added by \(who(peer.uid)): \(s.rule)", priority: .info, event: .start,
                         fields: [(.activity, s.name)]))
        reconcile(now: now)
        return shapes.activity(registry.activity(named: s.name)!, at: now).object ?? [:]
    }

    private func removeSchedule(_ name: String, peer: Peer, now: Date) throws(CoreError) -> JSONObject {
        let before = snapshot()
        let s = try registry.removeSchedule(named: name, by: peer)
        try commit(since: before, now: now)
        for sel in s.selections { pendingUnlockNotes[sel] = "schedule '\(s.name)' removed by \(who(peer.uid))" }
        log.log(JournalEntry("Schedule '\(s.name)' removed by \(who(peer.uid))", priority: .info, event: .stop, fields: [(.activity, s.name)]))
        reconcile(now: now)
        return ["removed": .string(s.name)]
    }

    /// SIGHUP and `blockc reload`: all or nothing; a bad configuration keeps the old one and
    /// records a failure (§7). The new configuration is saved as the last good one
    /// before it takes effect; blocked selections it removes or narrows keep their targets.
    func reload(now: Date) throws(CoreError) -> JSONObject {
        let fresh: ConfigSet
        do throws(CoreError) {
            fresh = try collaborators.loadConfig()
        } catch {
            throw CoreError(.invalidConfig, "reload failed, the previous configuration stays in force: \(error.message)")
        }
        let before = snapshot()
        config = fresh
        configProvenance = .files
        state.lastGoodConfig = StoredConfig(fresh, at: now)
        let problems = installConfigSchedules(now: now)
        do throws(CoreError) { try commit(since: before, now: now) } catch {
            followLimits()
            throw error
        }
        resolved = [:]
        mustApply = true
        logKeptTargets(now: now)
        log.log(JournalEntry("Configuration reloaded (\(fresh.files.count) file\(fresh.files.count == 1 ? "" : "s"))", priority: .info, event: .reload))
        reconcile(now: now)
        // A1, T4: what is not in force as written is part of the answer, not only a failure.
        return ["reloaded": .int(Int64(fresh.files.count)), "problems": .array(problems.map { .string($0.message) })]
    }

    /// SIGHUP: like `blockc reload`, with the failure recorded rather than answered.
    public func reloadFromSignal() {
        assertOnQueue()
        let now = observedNow()
        do throws(CoreError) { _ = try reload(now: now) } catch {
            guard error.code != .notSaved else { return }  // recorded once by the failed save
            recordFailure(error, uid: nil, activity: nil, now: now)
            persist()
            publishSnapshot()
        }
    }
}
