import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// `blockc status` and the answers to the commands that change something.
extension Output {
    /// How many failures `status` shows before pointing at `blockc failures`.
    static let statusFailureCount = 3

    /// The `status` object: Blocked now, Kept off the screen (if anyone is), Activities, Failures
    /// (if any), the enforcement line.
    public func status(_ o: JSONObject) -> String { status(StatusReply(o)) }

    public func status(_ s: StatusReply) -> String {
        var lines = blockedSection(s)
        if !s.screen.isEmpty {  // screen time: who allowed hours or a used-up limit keep off the screen
            lines.append("")
            lines.append(heading("Kept off the screen"))
            lines += s.screen.map { "  " + screen($0) }
        }

        let activities = s.activities
        lines.append("")
        // Without --all the daemon sends the active activities and `counts` of all of them.
        let total = s.counts["activities"] ?? activities.count
        // The cap matters once something counts against it.
        let cap = total == 0 ? "" : s.maxActivities.map { " (\(Output.grouped(total)) of \(Output.grouped($0)))" } ?? ""
        lines.append(heading("Activities") + cap)
        if total == 0 {
            lines.append("  None. Start one with 'blockc start --minutes 30 SELECTION'.")
        } else if activities.isEmpty {
            if (s.counts["active"] ?? 0) == 0 { lines.append("  None active.") }  // else: active for others (idleLine)
        } else {
            lines += table(activities.map(activityRow))
        }
        if let idle = idleLine(s.counts, shown: activities) { lines.append(idle) }
        lines += moreTimeStatus(s.moreTime)  // M2, M3

        // T4: a failure is never swallowed, so status shows the latest ones.
        let failures = s.failures
        if !failures.isEmpty {
            lines.append("")
            lines.append(heading("Failures") + " (\(failures.count))")
            lines += table(failures.suffix(Output.statusFailureCount).map(failureRow))
            let older = failures.count - Output.statusFailureCount
            lines.append(older > 0 ? "  \(plural(older, "older failure")) in 'blockc failures'; clear them with 'blockc failures --clear'."
                                   : "  Clear them with 'blockc failures --clear'.")
        }

        lines.append("")
        lines += enforcementSection(s)
        return lines.joined(separator: "\n")
    }

    /// §7 "Truth", U2: what is blocked, as enforced: for everyone first, then for each user (an
    /// administrator's view holds every user's blocks); under a selection blocked in part, what
    /// is not; then what should be blocked and is not yet, and what stays blocked because its
    /// unblock could not be written yet.
    func blockedSection(_ s: StatusReply) -> [String] {
        let e = s.enforcement
        let missing = Set(e.notEnforced.map(\.selection))
        let enforced = s.blocked.filter { !missing.contains($0.selection) }
        var lines: [String] = []
        if enforced.isEmpty {
            lines.append("Nothing is blocked.")
        } else {
            // Groups in order: everyone (nil), then each set of users as first met.
            var groups: [(users: [String]?, rows: [BlockedReply])] = []
            for b in enforced {
                let key = b.users.flatMap { $0.isEmpty ? nil : $0 }
                if let i = groups.firstIndex(where: { $0.users == key }) { groups[i].rows.append(b) } else { groups.append((key, [b])) }
            }
            groups.sort { ($0.users == nil ? 0 : 1) < ($1.users == nil ? 0 : 1) }
            let perUser = groups.contains { $0.users != nil }
            let partial = Dictionary(grouping: e.partial, by: \.selection)
            // One table for every group, so that the columns line up across them.
            let rendered = table(enforced.count > 0 ? groups.flatMap(\.rows).map { b in
                let reasons = b.reasons.map(Output.clean)
                return [Cell(Output.clean(AllowOnly.display(b.selection)), .red), Cell(until(b.until)),
                        Cell(reasons.isEmpty ? "" : "by \(reasons.joined(separator: ", "))", .dim)]
            } : [])
            var row = 0
            for group in groups {
                if !lines.isEmpty { lines.append("") }
                let whom = group.users.map { "Blocked now for " + $0.map(Output.clean).joined(separator: ", ") }
                lines.append(heading(whom ?? (perUser ? "Blocked now for everyone" : "Blocked now")))
                for b in group.rows {
                    lines.append(rendered[row])
                    row += 1
                    for part in partial[b.selection] ?? [] {
                        lines.append("    " + paint("in part: \(Output.clean(part.cause))", .yellow))
                    }
                }
            }
        }
        let notYet = e.notEnforced.filter { n in s.blocked.contains { $0.selection == n.selection } }
        if !notYet.isEmpty {
            lines.append("")
            lines.append(paint(heading("Not blocked yet"), .red) + " (blockd retries by itself)")
            lines += table(notYet.map { [Cell(Output.clean(AllowOnly.display($0.selection)), .red), Cell(Output.clean($0.cause))] })
        }
        if !e.unblockPending.isEmpty {
            lines.append("")
            lines.append(paint(heading("Still blocked, unblock pending"), .red) + " (blockd retries by itself)")
            lines += table(e.unblockPending.map { [Cell(Output.clean(AllowOnly.display($0.selection)), .red), Cell(Output.clean($0.cause))] })
        }
        return lines
    }

    /// "  Not listed: 99,982 idle schedules, 3 idle limits; ...": what a status without --all
    /// leaves out, so that 100,000 idle schedules take one line; nil when nothing is left out.
    /// Each kind is counted as idle only (the active ones are listed above it). U2: in one
    /// user's view, the activities active for other users are said as such, never as idle ones
    /// (their kinds are not known then, so the idle ones are counted together).
    func idleLine(_ counts: [String: Int], shown: [ActivityReply]) -> String? {
        guard let total = counts["activities"], total > shown.count else { return nil }
        let shownActive = shown.filter(\.active).count
        let others = max(0, min((counts["active"] ?? shownActive) - shownActive, total - shown.count))
        let idle = total - shown.count - others
        func n(_ count: Int, _ word: String) -> String { Output.grouped(count) + " " + word + (count == 1 ? "" : "s") }
        var parts: [String] = []
        let kinds = [("schedules", "schedule", "idle schedule"), ("limits", "limit", "idle limit")].compactMap { key, kind, word -> String? in
            guard let all = counts[key] else { return nil }
            let count = all - shown.filter { $0.kind.known?.rawValue == kind }.count
            return count > 0 ? n(count, word) : nil
        }
        let byKind = [("schedules", "schedule"), ("limits", "limit")].reduce(0) { sum, pair in
            sum + max(0, (counts[pair.0] ?? 0) - shown.filter { $0.kind.known?.rawValue == pair.1 }.count)
        }
        if idle > 0 {
            parts += others == 0 && byKind == idle ? kinds : ["\(Output.grouped(idle)) idle activit\(idle == 1 ? "y" : "ies")"]
        }
        if others > 0 { parts.append("\(Output.grouped(others)) active for other users") }
        let many = idle + others > 1
        let how = others > 0 && idle == 0 ? "'blockc status --all-users' lists \(many ? "them" : "it")"
            : "'blockc status --all' lists \(many ? "them" : "it")"
        return "  Not listed: " + parts.joined(separator: ", ") + "; " + how + "."
    }

    /// 99985 → "99,985".
    static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// One activity as table cells: name, kind, rule, selections, when, flags.
    func activityRow(_ a: ActivityReply) -> [Cell] {
        let kind = Output.clean(a.kind.word)
        let rule = switch a.kind {
        case .known(.schedule): "\(Output.clean(a.days ?? "")) \(Output.clean(a.window ?? ""))"
        case .known(.limit): limitRule(a)
        case .known(.block), .unknown: ""
        }
        var flags: [String] = []
        if a.locked { flags.append("locked") }
        if let from = originFlag(a) { flags.append(from) }
        if a.users != nil { flags.append(forWhom(a.users).trimmed()) }  // per-user blocks
        return [Cell(Output.clean(a.name), .bold), Cell(kind), Cell(rule), Cell(a.session != nil ? sessionCovers(a) : a.selections.map { Output.clean(AllowOnly.display($0)) }.joined(separator: ", ")),
                Cell(when(a), a.active ? .green : nil), Cell(flags.joined(separator: ", "), .yellow)]
    }

    /// "from /etc/blockd/schedules.d/bedtime.conf" for an activity of the configuration; nil
    /// for a client's (or a newer daemon's origin: nothing is said of what is not known).
    func originFlag(_ a: ActivityReply) -> String? {
        switch a.origin {
        case .known(.config): "from \(Output.clean(a.file ?? ""))"
        case .known(.client), .unknown: nil
        }
    }

    /// "1h mon-fri": a limit's allowance and days.
    func limitRule(_ a: ActivityReply) -> String { "\(DurationText.format(a.limit ?? 0)) \(Output.clean(a.days ?? ""))" }

    /// For a schedule `start`/`end` are the current window if active, else the next (§6).
    func when(_ a: ActivityReply) -> String {
        switch a.kind {
        case .known(.limit): return limitUse(a)
        case .known(.block), .known(.schedule), .unknown: break
        }
        if a.active { return "active, \(until(a.end))" }
        if let start = instant(a.start) { return "next \(at(start))" }
        return switch a.kind {
        case .known(.block): "ended"
        case .known(.schedule), .known(.limit), .unknown: "no upcoming window"
        }
    }

    /// A limit's day so far: "12m of 1h used today (48m left)", or "reached, until 00:00";
    /// on an administrator's view each person's after it (§9: each has their own allowance):
    /// "kid: reached; kid2: 20m used".
    func limitUse(_ a: ActivityReply) -> String {
        let people = (a.people ?? []).map { p in
            "\(Output.clean(p.user)): \(p.blocked ? "reached" : "\(DurationText.formatRemaining(Double(p.used))) used")"
        }
        let each = people.isEmpty ? "" : "; " + people.joined(separator: "; ")
        if a.active { return "limit reached, \(until(a.end))\(each)" }
        let used = DurationText.formatRemaining(Double(a.used ?? 0))
        let allowance = DurationText.format(a.limit ?? 0)
        let left = DurationText.formatRemaining(Double(a.left ?? 0))
        let running = a.running == true ? ", in use now" : ""
        return "\(used) of \(allowance) used today (\(left) left\(running))\(each)"
    }

    func failureRow(_ f: FailureReply) -> [Cell] {
        [Cell(instant(f.time).map(time) ?? "?"), Cell(Output.clean(f.code), .red), Cell(Output.clean(f.message))]
    }

    // MARK: Commands that change something

    /// `start`: the activity object plus `outcome` (created, extended or unchanged, T10).
    public func start(_ o: JSONObject) -> String { start(StartReply(o)) }

    public func start(_ reply: StartReply) -> String {
        let a = reply.block
        let name = Output.clean(a.name)
        let selections = a.selections.map(Output.clean)
        let shown = selections.map(AllowOnly.display)  // W2: `everything but school`
        let what = paint(selections.isEmpty ? name : shown.joined(separator: ", "), .bold) + forWhom(a.users)
        // The block's name is what 'blockc stop' takes; say it when it is not the selection.
        let named = selections == [name] ? "" : " (block '\(name)')"
        let end = until(a.end)
        let lock = a.locked ? " It is locked: nobody can stop it early." : ""
        // §7 "Truth": what the configuration leaves off is said with the block.
        let part = reply.partial.map { "\n  In part: \(Output.clean($0.cause))." }.joined()
        switch reply.outcome {
        case .known(.extended):
            return "Extended the block on \(what) \(end)\(named).\(lock)\(part)"
        case .known(.unchanged):
            return "\(what) is already blocked \(end)\(named); a block is extended, never shortened.\(part)"
        case .known(.created), .unknown:
            return "Blocked \(what) \(end)\(named).\(lock)\(part)"
        }
    }

    /// §7 "Truth": a `start` that was registered but could not be enforced (the hosts
    /// file could not be written); nil when it is enforced.
    public func notEnforced(_ reply: StartReply) -> String? {
        guard !reply.enforced else { return nil }
        let causes = Array(Set(reply.notEnforced.map { Output.clean($0.cause) })).sorted()
        let selections = reply.notEnforced.map { Output.clean($0.selection) }
        let name = Output.clean(reply.block.name)
        let what = selections.isEmpty ? name : selections.joined(separator: ", ")
        return "accepted, but not enforced: \(causes.isEmpty ? "unknown cause" : causes.joined(separator: "; "))\n"
            + "The block '\(name)' is registered \(until(reply.block.end)), but \(what) is not blocked yet; "
            + "blockd retries by itself and 'blockc status' shows when it is enforced."
    }

    /// `schedule add`: the schedule's activity object.
    public func scheduleAdded(_ o: JSONObject) -> String {
        let a = ActivityReply(o)
        let rule = "\(Output.clean(a.days ?? "")) \(Output.clean(a.window ?? ""))"
        let selections = a.selections.map(Output.clean).joined(separator: ", ")
        let state = a.active ? "active now, \(until(a.end))" : instant(a.start).map { "next window \(at($0))" } ?? "no upcoming window"
        if let action = a.session {
            return "Added allowed hours '\(Output.clean(a.name))': off the screen \(rule)\(onlyFor(a.users)), \(Output.sessionAction(action)) whenever someone is at it; \(state)."
        }
        return "Added schedule '\(Output.clean(a.name))' (\(rule)) for \(selections)\(onlyFor(a.users)); \(state)."
    }

    public func failuresCleared(_ o: JSONObject) -> String {
        "Cleared \(plural(ClearedReply(o).cleared, "failure"))."
    }

    public func reload(_ o: JSONObject) -> String {
        let reply = ReloadReply(o)
        let (n, problems) = (reply.files, reply.problems.map(Output.clean))
        guard !problems.isEmpty else { return "Reloaded the configuration (\(plural(n, "file")))." }
        // T4, A1: a configured activity not in force, or one that took a client's name, is said.
        return (["Reloaded the configuration (\(plural(n, "file"))), but not all of it is in force as written:"]
                + problems.map { "  " + paint($0, .red) }).joined(separator: "\n")
    }

    /// An answer this client has no text for (a newer daemon's more-time state): the object
    /// itself, indented, with strings cleaned.
    public func generic(_ o: JSONObject) -> String {
        o.isEmpty ? "Done." : Output.cleaned(.object(o)).prettyPrinted()
    }

    /// A JSON value with every string (and key) cleaned, for printing daemon objects to a
    /// terminal. `prettyPrinted` escapes control characters already; bidi overrides it keeps.
    static func cleaned(_ value: JSON) -> JSON {
        switch value {
        case .string(let s): return .string(clean(s))
        case .array(let items): return .array(items.map(cleaned))
        case .object(let o):
            var out = JSONObject()
            for (k, v) in o { out[clean(k)] = cleaned(v) }
            return .object(out)
        case .null, .bool, .int, .double: return value
        }
    }
}
