import FoundationEssentials

/// M1, M5: what `more NAME` is about, and what a grant cannot lift.
extension Core {
    /// M1: what `more NAME` asks about, in the asker's view (U2).
    struct MoreTarget {
        /// What NAME was taken as, and the other kind it names too (nil: none).
        var named: MoreTimeNamed
        var also: MoreTimeNamed?
        /// The selection asked about, with the reasons the request is decided over: every
        /// reason of the asker's view for a selection; the limit's alone for a limit.
        var blocked: Policy.Blocked
    }

    /// M1: NAME is first a selection blocked for the asker (the README's `more instagram 5m`),
    /// then a limit's name (`more games 5m`: more use of the limit's allowance today). A name
    /// that is both is taken as the selection when it is blocked for the asker, and the answer
    /// says the limit has that name too; as the limit otherwise.
    func moreTarget(_ typed: String, peer: Peer, now: Date) throws(CoreError) -> MoreTarget {
        let actor = registry.actor(peer)
        let resolved = Result { () throws(CoreError) in try config.catalog.resolve(typed).name }
        let limit: Limit? = if case .limit(let l)? = registry.known(registry.resolve(typed, for: peer), to: actor) { l } else { nil }
        if case .success(let name) = resolved, let whole = registry.index.blocked(name), let view = whole.seen(by: peer.uid) {
            return MoreTarget(named: .selection, also: limit == nil ? nil : .limit, blocked: view)
        }
        let also: MoreTimeNamed? = if case .success = resolved { .selection } else { nil }
        if let limit {
            // The limit's selections it blocks for the asker now, by name; its own reason only.
            for name in limit.selections.sorted() {
                guard let view = registry.index.blocked(name)?.seen(by: peer.uid),
                      let reason = view.reasons.first(where: { $0.activity == limit.name }) else { continue }
                return MoreTarget(named: .limit, also: also, blocked: Policy.Blocked(selection: name, reasons: [reason], until: reason.until))
            }
            let mine = limit.refreshed(ledger: state.usage, at: now, clock: local).seen(by: peer.uid).state
            // Screen time: a screen-time limit blocks no selection; used up, it is asked over itself.
            if limit.session != nil, let window = mine?.window, window.contains(now) {
                let reason = Reason(activity: limit.name, kind: .limit, until: window.end, scope: Scope(names: [], uids: [peer.uid]))  // each person their own allowance
                return MoreTarget(named: .limit, also: also, blocked: Policy.Blocked(selection: limit.name, reasons: [reason], until: window.end))
            }
            let left = mine.map { " (\(DurationText.formatRemaining($0.remaining)) of \(DurationText.format(limit.seconds)) left today)" } ?? ""
            throw CoreError(.notFound, "limit '\(limit.name)' is not used up for you\(left); more time is for once it is, when it blocks \(limit.selections.joined(separator: ", "))")
        }
        // Allowed hours hold no selection: more time is asked over them, for the asker alone.
        if case .schedule(let s)? = registry.known(registry.resolve(typed, for: peer), to: actor), s.session != nil {
            guard s.users?.contains(peer.uid) ?? true, let window = s.activeWindow(at: now, clock: local) else {
                throw CoreError(.notFound, "allowed hours '\(s.name)' do not keep you off the screen now (\(s.rule)); there is nothing to ask more time for")
            }
            let reason = Reason(activity: s.name, kind: .schedule, until: window.end, scope: Scope(names: [], uids: [peer.uid]))
            return MoreTarget(named: .hours, also: also, blocked: Policy.Blocked(selection: s.name, reasons: [reason], until: window.end))
        }
        switch resolved {
        case .success(let name):
            if registry.index.isBlocked(name) {
                throw CoreError(.notFound, "\(name) is not blocked for you now; there is nothing to ask more time for")
            }
            throw CoreError(.notFound, "\(name) is not blocked now; there is nothing to ask more time for")
        case .failure(let error):
            if let a = registry.known(registry.resolve(typed, for: peer), to: actor), let first = a.selections.first {
                throw CoreError(.unknownSelection, "'\(a.name)' is a \(a.kind.rawValue), not a selection or a limit: more time is asked for what it blocks (\(a.selections.map(AllowOnly.display).joined(separator: ", "))), such as 'blockc more \(first) 15m'")
            }
            let limits = registry.index.limits.filter { registry.known($0.name, to: actor) != nil }.map(\.name)
            if !error.message.contains("did you mean"), let near = Suggest.closest(to: typed, among: limits) {
                throw CoreError(error.code, "no selection or limit named \(Domain.quoted(typed, limit: 40)); did you mean the limit '\(near)'? 'blockc limit list' lists the limits")
            }
            let message = error.message.replacing("no selection named", with: "no selection or limit named")
            throw CoreError(error.code, message + "; 'blockc limit list' lists the limits")
        }
    }

    /// M5: what `grant` leaves blocked of its selection in its asker's view at `now`: reasons it
    /// was not given over, or other blocked selections that cover some of its sites and apps;
    /// and how much it lifts. Other grants count (what they lift does not hold it).
    func holds(of grant: Grant, now: Date) -> (lifts: MoreTimeLift, holds: [MoreTimeHold]) {
        let others = book.grants.filter { $0.id != grant.id }
        func view(_ name: String) -> Policy.Blocked? {
            guard let v = registry.index.blocked(name)?.seen(by: grant.uid) else { return nil }
            return policy.lifting([v], grants: others, at: now).first
        }
        func hold(_ selection: String, _ reason: Reason) -> MoreTimeHold {
            let activity = registry.activity(named: reason.activity)
            let locked = if case .block(let b)? = activity { b.locked } else { false }
            return MoreTimeHold(selection: selection, activity: reason.activity, kind: reason.kind,
                                mode: activity?.moreTime.mode ?? .selfService, locked: locked, until: reason.until)
        }
        let given = Set(grant.activities + (grant.limits ?? []))
        if let own = view(grant.selection) {
            let rest = own.reasons.filter { !given.contains($0.activity) }
            if !rest.isEmpty { return (.nothing, rest.map { hold(grant.selection, $0) }) }
        }
        guard let targets = targetsKnown(grant.selection), !targets.allTargets.isEmpty else { return (.all, []) }
        var held = Set<String>(), out: [MoreTimeHold] = []
        for name in registry.index.blockedSelections where name != grant.selection {
            guard let other = targetsKnown(name) else { continue }
            let covered = targets.targets(heldBy: other)
            guard !covered.isEmpty, let v = view(name) else { continue }
            held.formUnion(covered)
            out += v.reasons.map { hold(name, $0) }
        }
        guard !out.isEmpty else { return (.all, []) }
        return (held.isSuperset(of: targets.allTargets) ? .nothing : .some, out)
    }

    /// The targets a selection is (or would be) enforced with: as enforced, as kept, or as
    /// configured (nil: none known).
    func targetsKnown(_ name: String) -> Selection? {
        resolved[name] ?? state.targets[name] ?? (try? config.catalog.resolve(name))
    }

    /// M5: the holds in the journal's words, in local time as the rest of the message: "; reddit
    /// stays blocked by block 'focus' (locked) until 21:00" (nothing when it lifts all).
    func holdsText(_ selection: String, _ lifts: MoreTimeLift, _ holds: [MoreTimeHold], now: Date) -> String {
        guard lifts != .all else { return "" }
        let each = holds.map { h in
            let via = h.selection == selection ? "" : " on \(AllowOnly.display(h.selection))"
            let why = h.locked ? "locked" : "MoreTime=\(h.mode.rawValue)"
            return "\(h.kind.rawValue) '\(h.activity)'\(via) (\(why)) until \(h.until.map { local.spoken($0, from: now) } ?? "no end in sight")"
        }.joined(separator: ", ")
        return lifts == .nothing ? "; it lifts nothing now: \(selection) stays blocked by \(each)"
                                 : "; part of \(selection) stays blocked by \(each)"
    }
}
