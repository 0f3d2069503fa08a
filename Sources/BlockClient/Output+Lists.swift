import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The listing commands and the `watch` event lines.
extension Output {
    /// `schedule list`: `{"schedules": [activity...]}`.
    public func schedules(_ o: JSONObject) -> String {
        let items = ListReply<ActivityReply>(.schedules, from: o).items
        guard !items.isEmpty else {
            return "No schedules. Add one with 'blockc schedule add bedtime --daily 22:00-07:00 SELECTION...'."
        }
        // The kind column says "schedule" on every row here, so it is left out.
        return table(items.map { row in
            var cells = activityRow(row)
            cells.remove(at: 1)
            return cells
        }, indent: "").joined(separator: "\n")
    }

    /// `limit list`: `{"limits": [activity...]}` (§9).
    public func limits(_ o: JSONObject) -> String {
        let items = ListReply<ActivityReply>(.limits, from: o).items
        guard !items.isEmpty else {
            return "No limits. Add one with 'blockc limit add games 1h SELECTION...'."
        }
        return table(items.map { a in
            let flags = originFlag(a).map { [$0] } ?? []
            return [Cell(Output.clean(a.name), .bold), Cell(limitRule(a)), Cell(limitCovers(a)),
                    Cell(limitUse(a), a.active ? .red : nil), Cell(flags.joined(separator: ", "), .yellow)]
        }, indent: "").joined(separator: "\n")
    }

    /// `limit add`: the limit's activity object.
    public func limitAdded(_ o: JSONObject) -> String {
        let a = ActivityReply(o)
        let days = a.days.map(Output.clean).flatMap { $0 == "daily" || $0.isEmpty ? nil : " (\($0))" } ?? ""
        if let action = a.session {
            return "Added limit '\(Output.clean(a.name))': \(DurationText.format(a.limit ?? 0)) at the screen a day\(days)\(onlyFor(a.users)), "
                + "then \(Output.sessionAction(action)); \(limitUse(a))."
        }
        return "Added limit '\(Output.clean(a.name))': \(DurationText.format(a.limit ?? 0)) of use a day\(days) for "
            + "\(a.selections.map(Output.clean).joined(separator: ", "))\(onlyFor(a.users)); \(limitUse(a))."
    }

    /// What a screen-time limit does once used up, as people say it.
    static func sessionAction(_ word: String) -> String {
        switch SessionAction(rawValue: word) {
        case .lock?: "the sessions are locked"
        case .logout?: "the sessions are ended"
        case .suspend?: "the machine is suspended"
        case .poweroff?: "the machine is powered off"
        case nil: Output.clean(word)
        }
    }

    /// A limit's selections, or for a screen-time limit "screen time (then lock)".
    func limitCovers(_ a: ActivityReply) -> String {
        if a.session != nil { return sessionCovers(a) }
        return a.selections.map(Output.clean).joined(separator: ", ")
    }

    /// What a screen-time limit or allowed hours do: "screen time, then lock", "off the
    /// screen (lock)".
    func sessionCovers(_ a: ActivityReply) -> String {
        let action = a.session.map { SessionAction(rawValue: $0) == nil ? Output.clean($0) : $0 } ?? ""
        return a.kind == .known(.schedule) ? "off the screen (\(action))" : "screen time, then \(action)"
    }

    /// `selections`: `{"selections": [{name, domains, apps, openURL}...]}`.
    public func selections(_ o: JSONObject) -> String {
        let items = ListReply<SelectionReply>(.selections, from: o).items
        guard !items.isEmpty else { return "No selections are defined." }
        let header = [Cell("NAME", .dim), Cell("DOMAINS", .dim), Cell("APPS", .dim)]
        let rows = items.map { s in
            [Cell(Output.clean(s.name), .bold), Cell(summary(s.domains.map(Output.clean))), Cell(summary(s.apps.map(Output.clean)))]
        }
        return (table([header] + rows, indent: "") + ["", "Details: 'blockc selections show NAME'."]).joined(separator: "\n")
    }

    /// The first few items and how many more, so one selection stays one line.
    func summary(_ items: [String], shown: Int = 3) -> String {
        guard !items.isEmpty else { return "-" }
        let head = items.prefix(shown).joined(separator: ", ")
        return items.count > shown ? "\(head), +\(items.count - shown) more" : head
    }

    /// `selections show NAME`: `{"selection": {name, domains, apps, paths, openURL}}`.
    public func selection(_ o: JSONObject) -> String {
        let s = SelectionShowReply(o).selection
        var lines = [heading("Selection \(Output.clean(s.name))")]
        func list(_ label: String, _ items: [String]) {
            let pad = String(repeating: " ", count: 10 - label.count)
            if items.isEmpty { lines.append("  \(label)\(pad)-") }
            for (i, item) in items.enumerated() {
                lines.append(i == 0 ? "  \(label)\(pad)\(item)" : "            \(item)")
            }
        }
        list("Domains:", s.domains.map(Output.clean))
        list("Apps:", s.apps.map(Output.clean))
        if !s.paths.isEmpty { list("Paths:", s.paths.map(Output.clean)) }  // E8, in browsers only
        if let url = s.openURL { list("Opens:", [Output.clean(url)]) }
        return lines.joined(separator: "\n")
    }

    /// `failures`: `{"failures": [{time, code, message, uid?, activity?, resolved?}...]}`,
    /// oldest first. T4: a resolved one says when its cause was gone ("resolved 16:40").
    public func failures(_ o: JSONObject) -> String {
        let items = ListReply<FailureReply>(.failures, from: o).items
        guard !items.isEmpty else { return "No failures recorded." }
        let resolved = items.filter { $0.resolved != nil }.count
        let rows = items.map { f in
            var cells = failureRow(f)
            var who: [String] = []
            if let uid = f.uid { who.append(person(uid)) }
            if let activity = f.activity { who.append("'\(Output.clean(activity))'") }
            cells.insert(Cell(who.joined(separator: " "), .dim), at: 2)
            if resolved > 0 {
                let when = f.resolved.map { text in "resolved " + (instant(text).map(time) ?? Output.clean(text)) } ?? ""
                cells.insert(Cell(when, .dim), at: 2)
            }
            return cells
        }
        let footer = resolved == 0 ? "Clear them with 'blockc failures --clear'."
            : "\(items.count == resolved ? "No current failures" : plural(items.count - resolved, "current failure")), \(resolved) resolved (their cause is gone; kept as history). Clear the list with 'blockc failures --clear'."
        return (table(rows, indent: "") + ["", footer]).joined(separator: "\n")
    }

    /// `stats`: `{"shieldHits": [{day, selection, hits}...]}`, by day then selection.
    public func stats(_ o: JSONObject) -> String { stats(StatsReply(o)) }

    public func stats(_ reply: StatsReply) -> String {
        let items = reply.shieldHits
        guard !items.isEmpty else { return "No shield hits recorded yet." }
        let header = [Cell("DAY", .dim), Cell("SELECTION", .dim), Cell("HITS", .dim)]
        var previousDay = ""
        let rows = items.map { h in
            let day = Output.clean(h.day)
            // The day is printed once per group; repeating it adds nothing.
            defer { previousDay = day }
            return [Cell(day == previousDay ? "" : day), Cell(Output.clean(h.selection), .bold), Cell(String(h.hits))]
        }
        return table([header] + rows, indent: "").joined(separator: "\n")
    }

    /// One `watch` event as a line: `13:35 Unblocked instagram: timed block 'instagram' ended (30m)`.
    public func event(_ object: JSONObject) -> String { event(WatchEvent(object)) }

    public func event(_ e: WatchEvent) -> String {
        let when = instant(e.time).map(time) ?? time(now)
        func shown(_ selection: String) -> String { Output.clean(AllowOnly.display(selection)) }  // W2: `everything but school`
        let body: String
        switch e {
        case .lock(let l):
            let reasons = l.reasons.map(Output.clean)
            body = paint("Blocked", .red) + " \(shown(l.selection))\(forWhom(e)) \(until(l.until))"
                + (reasons.isEmpty ? "" : ": \(reasons.joined(separator: ", "))")
        case .unlock(let u):
            body = paint("Unblocked", .green) + " \(shown(u.selection))\(forWhom(e)): \(Output.clean(u.why))"
        case .refusal(let p):
            body = paint("Refused", .yellow) + ": \(Output.clean(p.message))"
        case .failure(let p):
            body = paint("Failure", .red) + ": \(Output.clean(p.message))"
        case .dropped(let d):
            // S3: the daemon's queue for this watcher overflowed; the count says how much is missing.
            body = paint("(\(plural(d.count, "event")) \(d.count == 1 ? "was" : "were") dropped: this watcher fell behind)", .yellow)
        case .moreTime(let m):
            body = moreTimeLine(m, selection: shown(m.selection))
        case .shieldHit(let h):
            // S5: `Denied Steam (/usr/games/steam): games is blocked until 14:00 (1h left)`.
            let path = Output.clean(h.path)
            let app = h.app.map(Output.clean) ?? Path.lastComponent(path)
            // A newer daemon's kind is still a hit on a blocked selection: said as a denial.
            let verb = switch h.kind {
            case .known(.killed): "Stopped"
            case .known(.deniedLaunch), .known(.tamper), .unknown: "Denied"
            }
            body = paint(verb, .yellow) + " \(app) (\(path))\(forWhom(e)): \(shown(h.selection)) is blocked"
                + (h.until != nil ? " \(until(h.until))" : "")
        case .tamper(let h):
            body = paint("Repaired", .yellow) + " \(Output.clean(h.path)): its blockd lines were changed while \(shown(h.selection)) is blocked"
        case .limit(let l):
            // §9: `Daily limit 'games' reached: steam blocked until Mon 30 Nov 00:00 (5h left)`.
            let selections = l.selections.map(Output.clean).joined(separator: ", ")
            body = paint("Daily limit", .red) + " '\(Output.clean(l.activity))' reached\(forWhom(e)): \(selections) blocked \(until(l.until))"
        case .warning(let w):
            // §9: `Daily limit 'games': 5m of use left for steam, blocked at 13:05 if it keeps running`.
            let starts = instant(w.starts).map { " at \(time($0))" } ?? ""
            body = paint("Daily limit", .yellow) + " '\(Output.clean(w.activity))'\(forWhom(e)): \(Output.clean(w.remaining)) of use left"
                + " for \(shown(w.selection)), blocked\(starts) if it keeps running"
        case .unknown(let word, var rest):
            // A newer daemon's event: show it rather than drop it.
            rest["time"] = nil
            body = "\(Output.clean(word)) \(Output.cleaned(.object(rest)).serialized())"
        }
        return "\(when) \(body)"
    }

    /// M3: a request's or a grant's news in a sentence, with local times (the daemon's own
    /// `message` is the journal's, with instants in ISO 8601; it stays for unknown kinds).
    func moreTimeLine(_ e: WatchEvent.MoreTime, selection: String) -> String {
        let head = paint("More time", .cyan)
        let id = e.id.isEmpty ? "" : " (request \(Output.clean(e.id)))"
        switch e.kind {
        case .known(.asked): return head + " asked for \(selection)\(id)" + (instant(e.until).map { ", unanswered it expires at \(time($0))" } ?? "")
        case .known(.granted): return head + " for \(selection) granted\(id): \(until(e.until))"
        case .known(.denied): return head + " for \(selection) denied\(id)"
        case .known(.expired): return head + " for \(selection): the request\(id) expired unanswered"
        case .known(.cancelled): return head + " for \(selection): the request\(id) was cancelled"
        case .known(.ended): return head + " for \(selection) ended\(id)"
        case .unknown: return head + ": \(Output.clean(e.message))"
        }
    }
}
