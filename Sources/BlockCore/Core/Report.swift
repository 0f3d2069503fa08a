import FoundationEssentials

/// Something the engine decided or saw that people are told about. `entry` and `event` are
/// the one place where it becomes a journal entry (message, MESSAGE_ID, fields) and a
/// `watch` event, so the two never disagree about what happened.
public enum Report: Sendable {
    /// A selection became blocked (and enforced) for `audience` (U2), with the reasons and
    /// the end that apply to them; `whom` names them for the journal (nil: everyone).
    case lock(Policy.Blocked, audience: Audience = .everyone, whom: String? = nil)
    /// A selection is no longer blocked for `audience`: `why` in words, and the fields that
    /// say which activity ended when.
    case unlock(selection: String, why: String, fields: [(JournalField, String)], audience: Audience = .everyone, whom: String? = nil)
    /// T4: a refused request, or a failure that is ours to fix.
    case problem(CoreError, uid: UInt32?, activity: String?)
    /// S5: a denied launch, a stopped process, or (E1, E6) a repaired hosts file, with when
    /// the selection is lifted (nil: no end in sight) and whom it is blocked for (nil: everyone).
    case hit(ShieldHit, until: Date?, users: [UInt32]? = nil)
    /// §9: a daily limit was used up; its apps are blocked until the end of the window.
    case limitReached(Limit, until: String)
    /// §9: a daily limit is about to be used up.
    case limitWarning(Limit, remaining: String, starts: String)
    /// Screen time: allowed hours begin in `remaining` (at `starts`).
    case hoursWarning(Schedule, remaining: String, starts: Date)
    /// A block ended without unlocking anything (journal only: watchers see no change).
    case ended(Block, message: String)
    /// M1-M3: a more-time request or grant changed, or a loosening was delayed (Report+MoreTime.swift).
    case moreTime(MoreTimeNote)

    public var logEvent: LogEvent {
        switch self {
        case .lock: .lock
        case .unlock: .unlock
        case .problem(let error, _, _): [.internal, .invalidConfig, .notSaved].contains(error.code) ? .failure : .refusal
        case .hit(let hit, _, _): hit.kind == .tamper ? .tamper : .shieldHit
        case .limitReached: .limit
        case .limitWarning, .hoursWarning: .warning
        case .ended: .stop
        case .moreTime(let note): note.event
        }
    }

    /// The journal entry. Its message names instants as people read them, from `now` (the
    /// exact instant is in the fields); without `now`, in ISO 8601.
    public func entry(clock: LocalClock, now: Date? = nil) -> JournalEntry {
        func spoken(_ instant: Date) -> String { now.map { clock.spoken(instant, from: $0) } ?? clock.iso8601(instant) }
        switch self {
        case .lock(let b, let audience, let whom):
            let why = b.reasons.map { "\($0.kind.rawValue) '\($0.activity)'" }.joined(separator: ", ")
            let until = b.until.map { "until \(spoken($0))" } ?? "with no end in sight"
            var fields: [(JournalField, String)] = [(.selection, b.selection), (.activity, b.reasons.map(\.activity).joined(separator: " "))]
            if let end = b.until { fields.append((.end, clock.iso8601(end))) }
            return JournalEntry("Blocked \(AllowOnly.display(b.selection))\(whom.map { " \($0)" } ?? ""): \(why), \(until)", priority: .notice, event: logEvent,
                            fields: fields + Report.fields(audience))
        case .unlock(let selection, let why, let fields, let audience, let whom):
            return JournalEntry("Unblocked \(AllowOnly.display(selection))\(whom.map { " \($0)" } ?? ""): \(why)", priority: .notice, event: logEvent,
                            fields: [(.selection, selection)] + fields + Report.fields(audience))
        case .problem(let error, let uid, let activity):
            var fields: [(JournalField, String)] = [(.code, error.code.rawValue)]
            if let activity { fields.append((.activity, activity)) }
            if let uid { fields.append((.uid, String(uid))) }
            return JournalEntry("\(logEvent == .failure ? "Failure" : "Refused"): \(error.message)", priority: .warning, event: logEvent, fields: fields)
        case .hit(let hit, _, _):
            var fields: [(JournalField, String)] = [(.selection, hit.selection), (.path, hit.path), (.hit, hit.kind.rawValue)]
            if let app = hit.app { fields.append((.app, app)) }
            if let pid = hit.pid { fields.append((.pid, String(pid))) }
            if let uid = hit.uid { fields.append((.uid, String(uid))) }
            return JournalEntry(Report.message(hit), priority: hit.kind == .tamper ? .warning : .notice, event: logEvent, fields: fields)
        case .limitReached(let l, let until):
            // §9: a person's own allowance (the limit comes scoped to them); an older pool's has none.
            let whose = l.users.map { " for \($0)" } ?? ""
            let users = Report.fields(scope: l.users)
            let end = (try? TimeText.parseISO8601WithOffset(until)).map(spoken) ?? until
            let what = l.session != nil ? "\(DurationText.format(l.seconds)) at the screen): time at the screen is over\(whose) until \(end)"
                : "\(DurationText.format(l.seconds)) of use): \(l.selections.joined(separator: ", ")) blocked\(whose) until \(end)"
            return JournalEntry("Daily limit '\(l.name)' reached (\(what)",
                            priority: .notice, event: logEvent,
                            fields: [(.activity, l.name), (.selection, l.selections.joined(separator: " ")), (.end, until)] + users)
        case .limitWarning(let l, let remaining, _):
            let whose = l.users.map { " \($0)'s" } ?? ""
            let users = Report.fields(scope: l.users)
            let what = l.session != nil ? "at the screen" : "for \(l.selections.joined(separator: ", "))"
            return JournalEntry("Daily limit '\(l.name)': \(remaining) of\(whose) use left today \(what)",
                            priority: .info, event: logEvent, fields: [(.activity, l.name), (.selection, l.selections.joined(separator: " "))] + users)
        case .hoursWarning(let s, let remaining, let starts):
            let whose = s.users.map { " for \($0)" } ?? ""
            let users = Report.fields(scope: s.users)
            let then = s.session.map { " (Action=\($0.rawValue))" } ?? ""
            return JournalEntry("Allowed hours '\(s.name)' begin in \(remaining)\(whose), at \(spoken(starts)): off the screen then\(then)",
                                priority: .info, event: logEvent, fields: [(.activity, s.name), (.end, clock.iso8601(starts))] + users)
        case .ended(let block, let message):
            return JournalEntry(message, priority: .info, event: logEvent, fields: [(.activity, block.name)])
        case .moreTime(let note): return note.entry(clock: clock)
        }
    }

    /// The `watch` events: one, or for a limit's warning one per selection.
    public func events(clock: LocalClock, now: Date) -> [WatchEvent] {
        let time = clock.iso8601(now)
        switch self {
        case .lock(let b, let audience, _):
            return [.lock(time: time, selection: b.selection, until: b.until.map(clock.iso8601), reasons: b.reasons.map(\.activity),
                          users: audience.users, except: audience.except)]
        case .unlock(let selection, let why, _, let audience, _):
            return [.unlock(time: time, selection: selection, why: why, users: audience.users, except: audience.except)]
        case .problem(let error, let uid, _):
            let (code, message) = (error.code.rawValue, error.message)
            return [logEvent == .failure ? .failure(time: time, code: code, message: message, uid: uid)
                                         : .refusal(time: time, code: code, message: message, uid: uid)]
        case .hit(let hit, let until, let users):
            let end = until.map(clock.iso8601)
            return [hit.kind == .tamper
                ? .tamper(time: time, kind: hit.kind, selection: hit.selection, path: hit.path, app: hit.app, until: end, users: users)
                : .shieldHit(time: time, kind: hit.kind, selection: hit.selection, path: hit.path, app: hit.app, until: end, users: users)]
        case .limitReached(let l, let until):
            return [.limit(time: time, activity: l.name, selections: l.selections, until: until, users: l.users?.uids)]
        case .limitWarning(let l, let remaining, let starts):
            // A screen-time limit has no selection: its warning is about the limit itself.
            return (l.session != nil ? [l.name] : l.selections).map {
                .warning(time: time, activity: l.name, selection: $0, starts: starts, remaining: remaining, users: l.users?.uids, session: l.session)
            }
        case .hoursWarning(let s, let remaining, let starts):
            return [.warning(time: time, activity: s.name, selection: s.name, starts: clock.iso8601(starts), remaining: remaining,
                             users: s.users?.uids, session: s.session)]
        case .ended:
            return []
        case .moreTime(let note): return note.events(clock: clock, now: now)
        }
    }

    /// The journal field of the people a limit or schedule is for (none: everyone).
    static func fields(scope: Scope?) -> [(JournalField, String)] {
        scope.map { [(.users, $0.uids.map(String.init).joined(separator: " "))] } ?? []
    }

    /// U2: the journal fields that say whom a lock or an unlock is about (none: everyone).
    public static func fields(_ audience: Audience) -> [(JournalField, String)] {
        if let users = audience.users { return [(.users, users.map(String.init).joined(separator: " "))] }
        return audience.except.isEmpty ? [] : [(.exceptUsers, audience.except.map(String.init).joined(separator: " "))]
    }

    /// What a shield hit did, in a sentence.
    public static func message(_ hit: ShieldHit) -> String {
        let who = hit.app ?? Path.lastComponent(hit.path)
        switch hit.kind {
        case .deniedLaunch:
            return "Denied launch of \(who) (\(hit.path)): \(AllowOnly.display(hit.selection)) is blocked"
        case .killed:
            return "Stopped \(who) (\(hit.path)\(hit.pid.map { ", pid \($0)" } ?? "")): \(AllowOnly.display(hit.selection)) is blocked"
        case .tamper:
            return "Repaired \(hit.path): its blockd lines were changed, or a line giving a blocked name an address was added, while \(hit.selection) is blocked"
        }
    }
}
