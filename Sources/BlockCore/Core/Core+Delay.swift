import FoundationEssentials

/// M2: `Delay=` makes every loosening wait (stop, schedule remove, limit remove); tightening
/// never waits. And the more-time book's upkeep on every reconcile (M3, T8, T9).
extension Core {
    /// A stop or removal of an activity with `Delay=`: checked now as if done now (permission,
    /// `--lock`), then kept until its due instant. Nil when the request does not wait.
    mutating func delayedLoosening(_ request: Request, peer: Peer, now: Date) throws(CoreError) -> Change? {
        // A1: the route says whether a command is a loosening that waits; every such command
        // names its activity (WireWordTests check that the two agree).
        guard request.command.route.loosens == .delayed, let (kind, name) = PendingLoosening.asked(by: request) else { return nil }
        // A1: what a member may not know of goes on to be answered as a name nobody holds.
        guard let activity = registry.known(name, to: registry.actor(peer)), activity.moreTime.delay > 0 else { return nil }
        if let pending = book.loosenings.first(where: { $0.name == name }) { return .read(.reply(looseningReply(pending).json)) }
        if kind != .stop { try checkNotHeldOff(removing: name, peer: peer, now: now) }
        var trial = registry
        switch kind {
        case .stop: _ = try trial.stopBlock(named: name, by: peer, now: now)
        case .scheduleRemove: _ = try trial.removeSchedule(named: name, by: peer)
        case .limitRemove: _ = try trial.removeLimit(named: name, by: peer)
        }
        let due = now.addingTimeInterval(TimeInterval(activity.moreTime.delay))
        let l = PendingLoosening(kind: kind, name: name, uid: peer.uid, asked: now, due: due)
        book.loosenings.append(l)
        var change = Change(saves: true, answer: .reply(looseningReply(l).json))
        change.reports = [.moreTime(MoreTimeNote(event: .delayed, kind: nil, id: name, selection: activity.selections.joined(separator: " "), until: due,
                                                 message: "The \(kind.rawValue) of '\(name)' asked by \(who(peer.uid)) takes effect at \(local.spoken(due, from: now)) (Delay=); 'blockc cancel \(name)' keeps it",
                                                 uid: peer.uid))]
        change.reconciles = true
        return change
    }

    /// M2: the loosenings whose delay has passed, taken out of the book, each as the request
    /// its asker made and the asker with their rank now (A1). The engine carries each out as
    /// that request, not delayed again, before a timer's or start-up's reconcile.
    mutating func takeDueLoosenings(now: Date) -> [(request: Request, peer: Peer, loosening: PendingLoosening)] {
        let due = book.loosenings.filter { $0.due <= now }
        guard !due.isEmpty else { return [] }
        book.loosenings.removeAll { $0.due <= now }
        return due.map { l in (l.request, peerNow(l.uid), l) }
    }

    /// M2: a due loosening that could not be carried out is said, not retried.
    mutating func delayedLooseningFailed(_ l: PendingLoosening, _ error: CoreError) {
        emit(.journal(JournalEntry("The delayed \(l.kind.rawValue) of '\(l.name)' could not be done: \(error.message)", priority: .notice, event: .delayed,
                                   fields: [(.activity, l.name)])))
    }

    /// M3, T8: ends grants whose end has passed (a grant that ended while blockd was down is
    /// not extended), expires unanswered requests, and keeps their slots counted (T4).
    mutating func settleMoreTime(now: Date) {
        for g in book.grants where g.end <= now {
            publish(.moreTime(MoreTimeNote(event: .moreEnded, kind: .ended, id: g.id, selection: g.selection, until: g.end,
                                           message: "More time for \(g.selection) (\(g.id)) ended at \(local.spoken(g.end, from: now))", uid: g.uid)), now: now)
        }
        for r in book.requests where r.expires <= now {
            publish(.moreTime(MoreTimeNote(event: .moreExpired, kind: .expired, id: r.id, selection: r.selection, until: nil,
                                           message: "Request \(r.id) of \(who(r.uid)) for more time for \(r.selection) expired unanswered", uid: r.uid)), now: now)
        }
        addLimitAllowances(now: now)
        book.grants.removeAll { $0.end <= now }
        book.requests.removeAll { $0.expires <= now }
        for g in book.grants where g.window.contains(now) && applied[g.selection] != nil {
            // M5: the unlock says so when another block still holds the selection's sites.
            let held = holds(of: g, now: now)
            pendingUnlockNotes[g.selection] = "more time (\(g.id)) until \(local.spoken(g.end, from: now))"
                + holdsText(g.selection, held.lifts, held.holds, now: now)
        }
        book.prune(keepingFrom: local.civil(of: now).date)
        (registry.reserved, registry.reservedBy) = (book.count, book.countByUid)
    }

    /// M3: over a limit a grant is usage allowance, not a window: the limits go apart, and
    /// the window covers only the other activities (with none, the window lifts nothing).
    func makeGrant(id: String, selection: String, start: Date, end: Date, over: [String], uid: UInt32, grantedBy: UInt32?,
                   reason: String?) -> Grant {
        let limits = over.filter { if case .limit? = registry.activity(named: $0) { true } else { false } }
        var g = Grant(id: id, selection: selection, start: start, end: end, activities: over.filter { !limits.contains($0) }, uid: uid,
                      grantedBy: grantedBy, reason: reason)
        if !limits.isEmpty { (g.limits, g.allowanceAdded) = (limits, false) }
        return g
    }

    /// M3: a grant over limits adds its length to their allowance for the day it begins (T7:
    /// gone at midnight), once; the app's running time then uses it up like the rest.
    mutating func addLimitAllowances(now: Date) {
        for i in book.grants.indices where book.grants[i].allowanceAdded == false && book.grants[i].start <= now {
            let g = book.grants[i]
            for limit in g.limits ?? [] {
                // §9: the asker's own allowance; no one else's.
                state.usage.addAllowance(UsageLedger.key(limit, g.uid), seconds: g.window.duration, on: local.civil(of: g.start).date)
            }
            book.grants[i].allowanceAdded = true
        }
    }

    /// The answers are typed once, in Wire/Replies+MoreTime.swift, and encoded there: blockc and
    /// the agent read them with the same types. A1: people are named; the uid stays a field.
    func grantJSON(_ g: Grant) -> JSONObject { grantReply(g).json }

    func grantReply(_ g: Grant) -> GrantReply {
        GrantReply(id: g.id, selection: g.selection, start: local.iso8601(g.start), end: local.iso8601(g.end), uid: Int(g.uid),
                   user: who(g.uid), activities: g.activities + (g.limits ?? []),
                   allowance: g.limits,  // M3: limits given allowance, not a window
                   grantedBy: g.grantedBy.map { Int($0) }, grantedByUser: g.grantedBy.map(who), reason: g.reason)
    }

    /// The answer to `more` and `approve`: the grant, what NAME was taken as (M1; nil for
    /// `approve`), how much it lifts and what still holds the selection (M5).
    func grantJSON(_ g: Grant, target: MoreTarget?, held: (lifts: MoreTimeLift, holds: [MoreTimeHold])) -> JSONObject {
        var r = grantReply(g)
        if let target { (r.named, r.also) = (.known(target.named), target.also.map(WireWord.known)) }
        r.lifts = .known(held.lifts)
        r.held = held.holds.map { h in
            HeldReply(selection: h.selection, activity: h.activity, kind: .known(h.kind), moreTime: .known(h.mode), locked: h.locked,
                      until: h.until.map(local.iso8601))
        }
        return r.json
    }

    func requestJSON(_ r: MoreTimeRequest) -> JSONObject { requestReply(r).json }

    func requestReply(_ r: MoreTimeRequest) -> MoreTimeRequestReply {
        MoreTimeRequestReply(id: r.id, selection: r.selection, asked: local.iso8601(r.asked), expires: local.iso8601(r.expires),
                             uid: Int(r.uid), user: who(r.uid), activities: r.activities, seconds: r.seconds, reason: r.reason)
    }

    func looseningReply(_ l: PendingLoosening) -> DelayedReply {
        DelayedReply(name: l.name, kind: l.kind, uid: Int(l.uid), user: who(l.uid), at: local.iso8601(l.due))
    }

    /// `requests`, and the more-time members of `status`: everyone's (`Authority.view` cuts them
    /// to what a caller may see).
    public func requestsReply() -> RequestsReply {
        RequestsReply(requests: book.requests.map(requestReply), grants: book.grants.map(grantReply),
                      delayed: book.loosenings.map(looseningReply))
    }
}
