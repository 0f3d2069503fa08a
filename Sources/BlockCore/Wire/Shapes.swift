import FoundationEssentials

/// The `--json` shapes of §6, built in one place. They are an API for scripts: keys
/// may be added, never renamed. Instants are ISO 8601 with offset, durations are seconds.
public struct Shapes: Sendable {
    public var clock: LocalClock

    public init(clock: LocalClock) { self.clock = clock }

    func text(_ d: Date?) -> String? { d.map(clock.iso8601) }

    /// An activity: for a schedule, `start`/`end` are the current window if active, else the next.
    public func activity(_ a: Activity, at now: Date) -> JSON { .object(activityReply(a, at: now).json) }

    public func activityReply(_ a: Activity, at now: Date) -> ActivityReply {
        let window = a.currentOrNextWindow(at: now, clock: clock)
        let active = a.activeWindow(at: now, clock: clock) != nil
        var r = ActivityReply(name: a.name, kind: a.kind, selections: a.selections, active: active,
                              start: text(window?.start), end: text(window?.end), locked: a.locked, origin: .client)
        if case .schedule(let s) = a {
            r.window = "\(s.start)-\(s.end)"
            r.days = s.days.description
            r.session = s.session?.rawValue  // allowed hours: what is done to the sessions in the window
        }
        if case .limit(let l) = a {
            // §9: the daily allowance and today's use, in seconds.
            (r.limit, r.days, r.warn, r.session) = (l.seconds, l.days.description, l.warnSeconds, l.session?.rawValue)
            if let state = l.state {
                (r.used, r.left, r.running) = (Int(state.used.rounded()), Int(state.remaining.rounded()), state.running)
                // §9: each person's own day, for the machine's and an administrator's view.
                if state.listsPeople {
                    r.people = state.people.keys.sorted().map { uid in
                        let p = state.people[uid]!
                        return ActivityReply.PersonUse(user: state.names[uid] ?? "#\(uid)", uid: Int(uid), used: Int(p.used.rounded()),
                                                       left: Int(p.remaining.rounded()), blocked: p.window?.contains(now) == true)
                    }
                }
            }
        }
        // Seconds until it is lifted, for an active activity only.
        if active, let end = window?.end { r.remaining = Int(end.timeIntervalSince(now).rounded(.up)) }
        switch a.origin {
        case .client(let uid): (r.origin, r.uid) = (.known(.client), Int(uid))
        case .config(let file): (r.origin, r.file) = (.known(.config), file)
        }
        if let scope = a.scope { (r.users, r.userIds) = (scope.names, scope.uids.map { Int($0) }) }
        return r
    }

    public func blocked(_ b: Policy.Blocked) -> JSON { .object(blockedReply(b).json) }

    public func blockedReply(_ b: Policy.Blocked) -> BlockedReply {
        BlockedReply(selection: b.selection, until: text(b.until), reasons: b.reasons.map(\.activity), users: b.userNames)
    }

    public func failure(time: Date, code: String, message: String, uid: UInt32?, activity: String?) -> JSON {
        .object(failureReply(time: time, code: code, message: message, uid: uid, activity: activity).json)
    }

    public func failureReply(time: Date, code: String, message: String, uid: UInt32?, activity: String?, resolved: Date? = nil) -> FailureReply {
        FailureReply(time: text(time), code: code, message: message, uid: uid.map(Int.init), activity: activity, resolved: resolved.flatMap { text($0) })
    }

    /// T4: a recorded failure, with when it was resolved.
    public func failureReply(_ f: FailureRecord) -> FailureReply {
        failureReply(time: f.time, code: f.code, message: f.message, uid: f.uid, activity: f.activity, resolved: f.resolved)
    }

    /// S6: with the selection's own texts (keys as in its file, e.g. ShieldBody[ja]), so that a
    /// user agent renders what the administrator wrote; E8: its URL prefixes.
    public func selection(_ s: Selection) -> JSON { .object(selectionReply(s).json) }

    public func selectionReply(_ s: Selection) -> SelectionReply {
        SelectionReply(name: s.name, domains: s.domains, apps: s.apps, paths: s.paths, openURL: s.openURL,
                       firewall: s.firewall, texts: s.texts)
    }
}
