import FoundationEssentials

/// More time (M1-M3): `more`, `requests`, `approve`, `deny`, `cancel`, and the book's upkeep on
/// every reconcile. Grants are applied as a filter on the desired set after the union
/// (`Policy.lifting`), so the union itself never knows about them.
extension Core {
    mutating func moreTime(_ request: Request, peer: Peer, now: Date) throws(CoreError) -> Change {
        switch request {
        case .more(let m): return try more(m, peer: peer, now: now)
        case .approve(let id, let seconds): return try answer(id, approve: true, seconds: seconds, reason: nil, peer: peer, now: now)
        case .deny(let id, let reason): return try answer(id, approve: false, seconds: nil, reason: reason, peer: peer, now: now)
        case .cancel(let name): return try cancel(name, peer: peer, now: now)
        case .requests:
            var r = Authority.view(Core.privateView(peer), requestsReply())  // A1: a member sees their own
            r.admin = peer.isAdmin  // M4: the agent offers Approve/Deny only to those who may
            return .read(.reply(r.json))
        case .hello, .status, .start, .stop, .scheduleAdd, .scheduleRemove, .scheduleList, .selections, .selectionShow, .failures, .failuresClear, .limitAdd, .limitRemove, .limitList, .stats, .report, .screen, .foreground, .web, .watch, .reload:
            throw CoreError(.internal, "\(request.command.rawValue) is not a more-time request; this is a bug in blockd, please report it")
        }
    }

    private mutating func more(_ m: Request.MoreArguments, peer: Peer, now: Date) throws(CoreError) -> Change {
        registry.advance(to: now)
        // U2: what the asker asks about is their own view: their reasons and the machine-wide
        // ones. Other users' activities neither decide the answer nor appear in it. M1: NAME is
        // a selection, or a limit's name (its own reason alone).
        let target = try moreTarget(m.selection, peer: peer, now: now)
        let blocked = target.blocked, name = blocked.selection
        // A1: a block for everyone cannot be lifted for one user without lifting it for all,
        // and that is not a member's to do.
        if peer.rank <= .member, let wide = blocked.reasons.first(where: { $0.scope == nil }) {
            let owner = registry.activity(named: wide.activity).map { registry.owner($0.origin) }
            let by = switch owner {
            case .user(_, _, let name)?: " by \(name)"
            case .configuration(let file)?: " by \(file)"
            case nil: ""
            }
            throw CoreError(.permissionDenied, "'\(wide.activity)' blocks \(name) for everyone\(by), and more time cannot lift a block for everyone for one person; ask an administrator to stop it or to make it yours only")
        }
        let limits = Set(blocked.reasons.filter { $0.kind == .limit }.map(\.activity))
        if let g = book.grants.first(where: { $0.lifts(blocked, at: now) || ($0.selection == name && $0.start > now)
                                             || ($0.uid == peer.uid && $0.allowanceAdded == false && !limits.isDisjoint(with: $0.limits ?? [])) }) {
            throw CoreError(.exists, "\(name) already has more time (\(g.id)) until \(local.spoken(g.end, from: now))")
        }
        if let r = book.requests.first(where: { $0.selection == name && $0.uid == peer.uid }) {
            throw CoreError(.exists, "you already asked for more time for \(name) (\(r.id)); wait for the answer or withdraw it with 'blockc cancel \(r.id)'")
        }
        try registry.checkCap(adding: "a request for more time", by: registry.actor(peer), now: now)  // T4, A1
        // The activities whose MoreTime= decides: those listing the selection, or the screen-time
        // limit or allowed hours asked over themselves (they list none).
        let own = registry.index.activities(named: blocked.reasons.map(\.activity))
        let deciding = !own.isEmpty && own.allSatisfy(\.selections.isEmpty) ? own : registry.index.activities(covering: name)
        let decision = try book.decide(blocked, seconds: m.seconds, activities: deciding, now: now, clock: local)
        let id = book.takeID()
        let over = blocked.reasons.map(\.activity)
        state.history.count(.asked, user: String(peer.uid), at: now, clock: local)  // R1
        switch decision {
        case .grant(let start, let end, let minute):
            let grant = makeGrant(id: id, selection: name, start: start, end: end, over: over, uid: peer.uid, grantedBy: nil, reason: m.reason)
            book.charge(grant, oneMoreMinute: minute, activities: deciding, now: now, clock: local)
            book.grants.append(grant)
            state.history.count(.granted, user: String(peer.uid), at: now, clock: local)  // R1
            let when = start > now ? "from \(local.spoken(start, from: now)) (Delay=) " : ""
            let what = switch target.named {
            case .limit: "\(name) under limit '\(blocked.reasons[0].activity)'"
            case .hours: "the screen during allowed hours '\(name)'"
            case .selection: name
            }
            let held = holds(of: grant, now: now)  // M5
            return told(MoreTimeNote(event: .moreGranted, kind: .granted, id: id, selection: name, until: end,
                                     message: "More time for \(what) granted to \(who(peer.uid)) \(when)until \(local.spoken(end, from: now))\(minute ? " (one more minute)" : "")\(holdsText(name, held.lifts, held.holds, now: now))",
                                     uid: peer.uid, held: held),
                        answer: grantJSON(grant, target: target, held: held))
        case .pending(let expires):
            let r = MoreTimeRequest(id: id, selection: name, seconds: m.seconds, activities: over, uid: peer.uid, reason: m.reason,
                                    asked: now, expires: expires)
            book.requests.append(r)
            let asked = m.seconds.map { DurationText.format($0) } ?? "the rest of the day"
            return told(MoreTimeNote(event: .moreAsked, kind: .asked, id: id, selection: name, until: expires,
                                     message: "\(who(peer.uid)) asked for \(asked) more of \(name) (\(id))\(m.reason.map { ": \($0)" } ?? ""); 'blockc approve \(id)' or 'blockc deny \(id)' answers it",
                                     uid: peer.uid), answer: requestJSON(r))
        }
    }

    /// M4, S4: a lock or shield-hit event says what a "more time" button would get now, so
    /// that the agent shows one only when pressing it can succeed.
    func offeringMoreTime(_ event: WatchEvent, now: Date) -> WatchEvent {
        // U2: the offer is for the view the event is about: a lock's own reasons, or the view
        // of the person whose launch was denied.
        let name: String, reasons: [String]?, uid: UInt32?
        switch event {
        case .lock(let e): (name, reasons, uid) = (e.selection, e.reasons, nil)
        case .shieldHit(let e): (name, reasons, uid) = (e.selection, nil, e.users?.first.flatMap(UInt32.init(exactly:)))
        case .unlock, .refusal, .failure, .tamper, .limit, .warning, .moreTime, .dropped, .unknown: return event
        }
        guard registry.liveCount(at: now) + book.count < registry.maxActivities, var blocked = registry.index.blocked(name) else { return event }
        if let reasons {
            blocked.reasons.removeAll { !reasons.contains($0.activity) }
        } else if let uid {
            guard let view = blocked.seen(by: uid) else { return event }
            blocked = view
        }
        return event.offering(book.offer(blocked, activities: registry.index.activities(covering: name), now: now, clock: local))
    }

    private mutating func answer(_ id: String, approve: Bool, seconds: Int?, reason: String?, peer: Peer, now: Date) throws(CoreError) -> Change {
        guard let index = book.requests.firstIndex(where: { $0.id == id }) else {
            // Only administrators get here (approve and deny are theirs), and they see every request.
            let meant = Suggest.closest(to: id, amongUnordered: book.requests.map(\.id)).map { "; did you mean '\($0)'?" } ?? ";"
            throw CoreError(.notFound, "no pending request '\(id)'\(meant) 'blockc requests' lists them")
        }
        let r = book.requests[index]
        let dayEnd = MoreTimeBook.endOfDay(now, clock: local)
        let end = (seconds ?? r.seconds).map { min(now.addingTimeInterval(TimeInterval($0)), dayEnd) } ?? dayEnd
        book.requests.remove(at: index)
        state.history.count(approve ? .granted : .denied, user: String(r.uid), at: now, clock: local)  // R1: the asker's
        guard approve else {
            return told(MoreTimeNote(event: .moreDenied, kind: .denied, id: id, selection: r.selection, until: nil,
                                     message: "More time for \(r.selection) (\(id)) denied by \(who(peer.uid))\(reason.map { ": \($0)" } ?? "")",
                                     uid: peer.uid, asker: r.uid), answer: DeniedReply(id: id, selection: r.selection).json)
        }
        let grant = makeGrant(id: id, selection: r.selection, start: now, end: end, over: r.activities, uid: r.uid,
                              grantedBy: peer.uid, reason: r.reason)
        book.grants.append(grant)
        let held = holds(of: grant, now: now)  // M5: what the administrator's grant still leaves blocked
        return told(MoreTimeNote(event: .moreGranted, kind: .granted, id: id, selection: r.selection, until: end,
                                 message: "More time for \(r.selection) granted to \(who(r.uid)) by \(who(peer.uid)) until \(local.spoken(end, from: now))\(holdsText(r.selection, held.lifts, held.holds, now: now))",
                                 uid: peer.uid, asker: r.uid, held: held),
                    answer: grantJSON(grant, target: nil, held: held))
    }

    private mutating func cancel(_ name: String, peer: Peer, now: Date) throws(CoreError) -> Change {
        // A1, what a refusal may say: what waits is its asker's alone (`Authority.mayKnow`), so
        // a member finds only their own; another's is answered as nothing waiting of that name.
        let actor = registry.actor(peer)
        func asked(_ uid: UInt32, _ kind: String) -> Authority.Subject {
            Authority.Subject(name: name, owner: registry.owner(.client(uid: uid)), kind: kind, scope: [uid])
        }
        if let i = book.loosenings.firstIndex(where: { $0.name == name && Authority.mayKnow(asked($0.uid, "delayed"), by: actor) }) {
            let l = book.loosenings[i]
            try waiting(asked(l.uid, "delayed \(l.kind.rawValue)"), peer: peer)
            book.loosenings.remove(at: i)
            return told(MoreTimeNote(event: .delayed, kind: nil, id: name, selection: name, until: nil,
                                     message: "The \(l.kind.rawValue) of '\(name)' due at \(local.spoken(l.due, from: now)) was cancelled by \(who(peer.uid)); it stays",
                                     uid: peer.uid), answer: CancelledReply(name: name, kind: .loosening(l.kind)).json)
        }
        if let i = book.requests.firstIndex(where: { $0.id == name && Authority.mayKnow(asked($0.uid, "request"), by: actor) }) {
            let r = book.requests[i]
            try waiting(asked(r.uid, "request"), peer: peer)
            book.requests.remove(at: i)
            return told(MoreTimeNote(event: .moreExpired, kind: .cancelled, id: name, selection: r.selection, until: nil,
                                     message: "Request \(name) for more time for \(r.selection) withdrawn by \(who(peer.uid))", uid: peer.uid),
                        answer: CancelledReply(name: name, kind: .request).json)
        }
        // Did you mean: among what this caller may know of only, as above.
        let mine = book.loosenings.filter { Authority.mayKnow(asked($0.uid, "delayed"), by: actor) }.map(\.name)
            + book.requests.filter { Authority.mayKnow(asked($0.uid, "request"), by: actor) }.map(\.id)
        throw Authority.unknown("request", name, near: Suggest.closest(to: name, amongUnordered: mine))
    }

    /// A1: whether `peer` may cancel what waits.
    private func waiting(_ subject: Authority.Subject, peer: Peer) throws(CoreError) {
        if case .refused(let error) = Authority.decide(.cancel, by: registry.actor(peer), on: subject) { throw error }
    }

    /// A change of the book: saved (undone if it cannot be), told (journal and watchers), and
    /// converged to.
    private func told(_ note: MoreTimeNote, answer: JSONObject) -> Change {
        var change = Change(saves: true, answer: .reply(answer))
        change.reports = [.moreTime(note)]
        change.reconciles = true
        return change
    }
}
