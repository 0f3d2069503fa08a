import FoundationEssentials

/// Request handlers (§6, §8). Each makes its change and returns it as a `Change` (what follows
/// once it is saved, and the answer), or throws a CoreError; the engine maps the error to
/// `ERR <code> <message>` in one place.
extension Core {
    /// A1: who may call the command at all; what it acts on is judged where it is found.
    func authorize(_ request: Request, by peer: Peer) throws(CoreError) {
        if case .refused(let error) = Authority.decide(request.command, by: registry.actor(peer)) { throw error }
    }

    /// Makes the change `request` asks for (after `authorize`). `delaying` false: a loosening
    /// whose `Delay=` has passed is carried out (M2). `fresh`: for `reload`, the configuration
    /// files as they are now, or why they cannot be used.
    mutating func prepare(_ request: Request, from peer: Peer, now: Date, delaying: Bool = true,
                                 fresh: Result<ConfigSet, CoreError>? = nil) throws(CoreError) -> Change {
        let request = resolvingNames(request, for: peer)
        if delaying, let change = try delayedLoosening(request, peer: peer, now: now) { return change }  // M2
        return try dispatch(request, peer: peer, now: now, fresh: fresh)
    }

    /// T4: refusals of well-formed changes are told (the journal, the watchers): the cap,
    /// permissions, locks, a name clash. Input mistakes are answered on the spot and not told.
    public static let toldCodes: Set<ErrorCode> = [.activityLimit, .permissionDenied, .locked, .exists, .invalidConfig, .internal, .busy]

    /// A1: the activities that moved aside for another's name since the last call; the
    /// more-time book follows each (before they are saved).
    public mutating func takeMoves() -> [Move] {
        let moves = registry.takeMoves()
        for m in moves { book.rename(m.from, to: m.to) }
        return moves
    }

    /// A1: what is said of each move once it is saved: the owner finds their activity under
    /// its new name.
    public static func entries(for moves: [Move]) -> [JournalEntry] {
        moves.map { m in
            JournalEntry("\(m.owner)'s activity '\(m.from)' goes on as '\(m.to)': the \(m.reason) takes its name",
                         priority: .notice, event: .start, fields: [(.activity, m.to)])
        }
    }

    /// T4: `request` from `uid` was refused with `error`. A refusal is the rules working, not a
    /// failure: it goes to the journal and the watchers (`refusal`), and its asker had the
    /// answer. Only what is blockd's to fix (a configuration that does not load, an internal
    /// error: `Report.logEvent` is `failure`) goes to the failure list too, and is saved; a
    /// failed reload is resolved by the next reload that loads.
    mutating func refused(_ request: Request, with error: CoreError, uid: UInt32?, now: Date) {
        guard request.modifies && Core.toldCodes.contains(error.code) else { return }
        let report = Report.problem(error, uid: uid, activity: nil)
        guard report.logEvent == .failure else { return publish(report, now: now) }
        recordFailure(error, uid: uid, activity: nil, cause: request.command == .reload ? .config : nil, now: now)
        emit(.persist)
    }

    /// A1: a name a member types means their own activity of that name when they have one
    /// (`youtube` is `kid/youtube` for kid), else the name as given.
    func resolvingNames(_ request: Request, for peer: Peer) -> Request {
        switch request {
        case .stop(let n): .stop(name: registry.resolve(n, for: peer))
        case .scheduleRemove(let n): .scheduleRemove(name: registry.resolve(n, for: peer))
        case .limitRemove(let n): .limitRemove(name: registry.resolve(n, for: peer))
        case .cancel(let n): .cancel(name: registry.resolve(n, for: peer))
        case .hello, .status, .start, .scheduleAdd, .scheduleList, .selections, .selectionShow, .failures, .failuresClear, .limitAdd, .limitList, .more, .requests, .approve, .deny, .stats, .report, .screen, .foreground, .web, .watch, .reload:
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

    private mutating func dispatch(_ request: Request, peer: Peer, now: Date, fresh: Result<ConfigSet, CoreError>?) throws(CoreError) -> Change {
        switch request {
        case .hello:
            return .read(.reply(HelloReply.current.json))
        // The read-only answers come from the published snapshot on the connection's side
        // (Engine+Snapshot.swift); they reach the engine when that cannot answer, and for
        // other users' views (per-user blocks).
        case .status(let all, let view): return .read(.status(all: all, viewer: try statusViewer(view, peer: peer), peer: peer))
        case .failures, .stats: return .read(.published(request, peer: peer))
        case .report(let args):  // R2: a member sees their own view (`viewer` refuses another's)
            let uid = try viewer(args.view, peer: peer)
            let range = args.range(today: local.civil(of: now).date)
            let limits = registry.index.limits.filter { l in uid.map { l.users?.contains($0) ?? true } ?? true }
            return .read(.reply(state.history.report(from: range.from, to: range.to, previous: range.previous, period: args.period.name,
                                                     user: uid.map(String.init), at: now, clock: local, limits: limits, usage: state.usage,
                                                     shieldHits: shieldHitDays(viewer: uid)).json))
        case .screen(let view):  // a member asks of themselves (`viewer` refuses another's)
            guard let uid = try viewer(view, peer: peer) else { throw CoreError(.usage, "screen is about one person: give --user NAME, or nothing for yourself") }
            return .read(.reply(screenReply(uid, now: now).json))
        case .foreground(let app): return foreground(app, peer: peer, now: now)  // R1: the caller's own, by SO_PEERCRED
        case .web(let site): return web(site, peer: peer, now: now)  // B2: the caller's own, by SO_PEERCRED
        case .start(let args): return try start(args, peer: peer, now: now)
        case .stop(let name): return try stop(name, peer: peer, now: now)
        case .scheduleAdd(let schedule): return try addSchedule(schedule, peer: peer, now: now)
        case .scheduleRemove(let name): return try removeSchedule(name, peer: peer, now: now)
        case .scheduleList:
            let schedules = activitiesForDisplay(at: now).filter { $0.kind == .schedule && listed($0, to: peer) }
            return .read(.reply(ListReply(.schedules, schedules.map { shapes.activityReply($0, at: now) }).json))
        case .selections:
            return .read(.reply(ListReply(.selections, config.catalog.selections.map(shapes.selectionReply)).json))
        case .selectionShow(let name):
            return .read(.reply(SelectionShowReply(selection: shapes.selectionReply(try config.catalog.resolve(name))).json))
        case .failuresClear:
            // A1: a member clears their own failures only; what the daemon or others recorded stays.
            let count = state.failures.count
            if let own = Core.privateView(peer) { state.failures.removeAll { $0.uid == own } } else { state.failures = [] }
            return Change(saves: true, answer: .reply(ClearedReply(cleared: count - state.failures.count).json))
        case .reload:
            guard let fresh else { throw CoreError(.internal, "reload reached the core without the configuration files; this is a bug in blockd, please report it") }
            return try reload(fresh, now: now)
        case .limitAdd(let limit): return try addLimit(limit, peer: peer, now: now)
        case .limitRemove(let name): return try removeLimit(name, peer: peer, now: now)
        case .more, .requests, .approve, .deny, .cancel: return try moreTime(request, peer: peer, now: now)
        case .limitList:
            // §9: everyone's own figures; an administrator's with every person's listed.
            let limits = activitiesForDisplay(at: now, viewer: peer.uid, everyone: peer.rank >= .admin).filter { $0.kind == .limit && listed($0, to: peer) }
            return .read(.reply(ListReply(.limits, limits.map { shapes.activityReply($0, at: now) }).json))
        case .watch:
            throw CoreError(.internal, "watch is handled by the connection, not the engine")
        }
    }

    private mutating func start(_ args: Request.StartArguments, peer: Peer, now: Date) throws(CoreError) -> Change {
        var names: [String] = []
        for argument in args.selections { names.append(try config.catalog.resolve(argument).name) }
        let end: Date
        if let seconds = args.seconds {
            end = now + TimeInterval(seconds)  // T1: exact, from receipt; T6 keeps it elapsed time
        } else {
            end = args.until!
        }
        let users = try grantedScope(args.users, selections: names, peer: peer)  // per-user blocks
        let moreTime = args.moreTime ?? MoreTimePolicy.familyDefault(scope: users, setBy: peer.uid)  // A1
        let outcome = try registry.startBlock(name: args.name, selections: names, end: end, locked: args.lock, moreTime: moreTime,
                                             users: users, by: peer, now: now)
        if case .created = outcome { state.history.count(.started, user: String(peer.uid), at: now, clock: local) }  // R1
        let block = outcome.block
        var change = Change(saves: true, answer: .started(block, outcome: .unchanged))
        change.reconciles = true
        switch outcome {
        case .created:
            change.answer = .started(block, outcome: .created)
            change.entries = [JournalEntry("Block '\(block.name)' started by \(who(peer.uid)) until \(local.spoken(block.end, from: now))\(block.locked ? " (locked)" : "")",
                                           priority: .info, event: .start, fields: [(.activity, block.name), (.end, local.iso8601(block.end)), (.uid, String(peer.uid))])]
        case .extended(let from, _):
            change.answer = .started(block, outcome: .extended)
            change.entries = [JournalEntry("Block '\(block.name)' extended by \(who(peer.uid)) from \(local.spoken(from.end, from: now)) to \(local.spoken(block.end, from: now)); a block is extended, never shortened",
                                           priority: .info, event: .start, fields: [(.activity, block.name), (.end, local.iso8601(block.end))])]
        case .unchanged: break
        }
        return change
    }

    private mutating func stop(_ name: String, peer: Peer, now: Date) throws(CoreError) -> Change {
        let block = try registry.stopBlock(named: name, by: peer, now: now)
        state.history.count(.stoppedEarly, user: String(peer.uid), at: now, clock: local)  // R1
        var change = Change(saves: true, answer: .reply(["stopped": .string(block.name)]))
        for s in block.selections { change.unlockNotes[s] = "block '\(block.name)' stopped early by \(who(peer.uid))" }
        change.entries = [JournalEntry("Block '\(block.name)' stopped early by \(who(peer.uid))", priority: .info, event: .stop,
                                       fields: [(.activity, block.name), (.uid, String(peer.uid))])]
        change.reconciles = true
        return change
    }

    private mutating func addSchedule(_ schedule: Schedule, peer: Peer, now: Date) throws(CoreError) -> Change {
        var s = schedule
        if let action = s.session { try Registry.check(Authority.mayAct(action, by: registry.actor(peer))) }  // A1
        var names: [String] = []
        for argument in s.selections { names.append(try config.catalog.resolve(argument).name) }
        s.selections = names
        s.users = try grantedScope(s.users, selections: names, peer: peer)  // per-user blocks
        s.moreTime = s.moreTime ?? MoreTimePolicy.familyDefault(scope: s.users, setBy: peer.uid)  // A1
        s = try registry.addSchedule(s, by: peer, now: now)  // A1: its key, which may be the member's own (kid/NAME)
        var change = Change(saves: true, answer: .activity(s.name))
        let hours = s.session.map { ", off the screen (Action=\($0.rawValue))" } ?? ""
        change.entries = [JournalEntry("Schedule '\(s.name)' added by \(who(peer.uid)): \(s.rule)\(hours)", priority: .info, event: .start,
                                       fields: [(.activity, s.name)])]
        change.reconciles = true
        return change
    }

    private mutating func removeSchedule(_ name: String, peer: Peer, now: Date) throws(CoreError) -> Change {
        try checkNotHeldOff(removing: name, peer: peer, now: now)
        let s = try registry.removeSchedule(named: name, by: peer)
        var change = Change(saves: true, answer: .reply(["removed": .string(s.name)]))
        for sel in s.selections { change.unlockNotes[sel] = "schedule '\(s.name)' removed by \(who(peer.uid))" }
        change.entries = [JournalEntry("Schedule '\(s.name)' removed by \(who(peer.uid))", priority: .info, event: .stop, fields: [(.activity, s.name)])]
        change.reconciles = true
        return change
    }

    /// SIGHUP and `blockc reload`: all or nothing; a bad configuration keeps the old one and
    /// records a failure (§7). The new configuration is saved as the last good one
    /// before it takes effect; blocked selections it removes or narrows keep their targets.
    mutating func reload(_ loaded: Result<ConfigSet, CoreError>, now: Date) throws(CoreError) -> Change {
        let fresh: ConfigSet
        switch loaded {
        case .success(let c): fresh = c
        case .failure(let error):
            throw CoreError(.invalidConfig, "reload failed, the previous configuration stays in force: \(error.message)")
        }
        config = fresh
        configProvenance = .files
        state.lastGoodConfig = StoredConfig(fresh, at: now)
        resolveFailures(.config, now: now)  // T4: the configuration loads again
        let problems = installConfigSchedules(now: now)
        // A1, T4: what is not in force as written is part of the answer, not only a failure.
        var change = Change(saves: true, answer: .reply(ReloadReply(files: fresh.files.count, problems: problems.map(\.message)).json))
        change.reconfigured = true
        change.refollowsLimitsOnFailure = true
        change.entries = [JournalEntry("Configuration reloaded (\(fresh.files.count) file\(fresh.files.count == 1 ? "" : "s"))", priority: .info, event: .reload)]
        // §7: what loads but deserves a word (an app that is not installed), once per reload.
        change.entries += fresh.warnings.map { JournalEntry($0.text, priority: .warning) }
        change.reconciles = true
        return change
    }
}
