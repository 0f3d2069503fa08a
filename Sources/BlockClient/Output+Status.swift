import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// `blockc status` and the answers to the commands that change something.
extension Output {
    /// How many failures `status` shows before pointing at `blockc failures`.
    static let statusFailureCount = 3

    /// The `status` object: Blocked now, Activities, Failures (if any), the enforcement line.
    public func status(_ o: JSONObject) -> String { status(StatusReply(o)) }

    public func status(_ s: StatusReply) -> String {
        var lines: [String] = []
        let blocked = s.blocked
        if blocked.isEmpty {
            lines.append("Nothing is blocked.")
        } else {
            lines.append(heading("Blocked now"))
            lines += table(blocked.map { b in
                let reasons = b.reasons.map(Output.clean)
                return [Cell(Output.clean(AllowOnly.display(b.selection)), .red), Cell(until(b.until)),
                        Cell((reasons.isEmpty ? "" : "by \(reasons.joined(separator: ", "))") + forWhom(b.users), .dim)]
            })
        }

        let activities = s.activities
        lines.append("")
        // Without --all the daemon sends the active activities and `counts` of all of them.
        let total = s.counts["activities"] ?? activities.count
        let cap = s.maxActivities.map { " (\(Output.grouped(total)) of \(Output.grouped($0)))" } ?? ""
        lines.append(heading("Activities") + cap)
        if total == 0 {
            lines.append("  None. Start one with 'blockc start --minutes 30 SELECTION'.")
        } else if activities.isEmpty {
            lines.append("  None active.")
        } else {
            lines += table(activities.map(activityRow))
        }
        if let idle = idleLine(s.counts, shown: activities.count) { lines.append(idle) }
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
        lines.append(enforcementLine(s))
        return lines.joined(separator: "\n")
    }

    /// "  12 schedules, 3 limits, 99,985 idle activities; ...": what a status without --all
    /// leaves out, so that 100,000 idle schedules take one line; nil when nothing is left out.
    func idleLine(_ counts: [String: Int], shown: Int) -> String? {
        guard let total = counts["activities"], total > shown else { return nil }
        var parts: [String] = []
        for (key, word) in [("schedules", "schedule"), ("limits", "limit")] {
            if let n = counts[key], n > 0 { parts.append(Output.grouped(n) + " " + word + (n == 1 ? "" : "s")) }
        }
        let idle = total - shown
        parts.append("\(Output.grouped(idle)) idle activit\(idle == 1 ? "y" : "ies")")
        return "  " + parts.joined(separator: ", ") + "; 'blockc status --all' or 'blockc schedule list' lists them."
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

    func enforcementLine(_ s: StatusReply) -> String {
        let e = s.enforcement
        var line = "Enforcement: \(e.mode.map(Output.clean) ?? "unknown")"
        if let hosts = e.hostsFile { line += " (hosts file \(Output.clean(hosts)))" }
        line += "."
        // What the mode line does not claim, and why (a part turned off or with nothing to act on).
        let offs = e.off.map { "\(Output.clean($0.part)): \(Output.clean($0.why))" }
        if !offs.isEmpty { line += " Off: " + offs.joined(separator: "; ") + "." }
        if let apps = e.apps {
            line += " Apps: \(Output.clean(apps))"
            if let reason = e.appsReason { line += " (\(Output.clean(reason)))" }
            line += "."
        }
        line += browsersNote(e)
        if let next = instant(s.nextTransition) { line += " Next change \(at(next))." }
        if let felt = feltLine(e) { line += "\n" + felt }
        if let closed = closedLine(e) { line += "\n" + closed }
        // §7 "Truth": say when the configuration in force is not the files, or the
        // state file cannot be saved.
        if let problem = e.configProblem { line += "\nConfiguration: \(Output.clean(problem))." }
        if let problem = e.stateProblem { line += "\nState file not saved: \(Output.clean(problem))." }
        // §7 "Truth": what should be blocked but is not, and why.
        for missing in e.notEnforced {
            line += "\n" + paint("Not enforced yet: \(Output.clean(missing.selection)): \(Output.clean(missing.cause))", .red)
        }
        for stuck in e.unblockPending {
            line += "\n" + paint("Still blocked, unblock pending: \(Output.clean(stuck.selection)): \(Output.clean(stuck.cause))", .red)
        }
        if let paths = e.pathRules { line += "\nNote: \(Output.clean(paths))." }
        return line
    }

    /// E5: whether open connections are cut, new ones refused, and where blocked names point.
    func feltLine(_ e: EnforcementReply) -> String? {
        guard let cut = e.cutSockets, let firewall = e.firewall else { return nil }
        var line = "Open connections: "
        line += cut ? "cut when a block starts (\(e.socketsCut ?? 0) so far)" : "not cut (CutSockets=no)"
        if let problem = e.cutSocketsProblem { line += " (\(Output.clean(problem)))" }
        line += ". New connections: "
        if firewall.enabled {
            // E5: the addresses DNS taught, not the sink's own, which are refused whatever DNS says.
            let count = firewall.learned ?? 0
            line += "refused through nftables table \(Output.clean(firewall.table ?? "inet blockd")) (\(count) learned address\(count == 1 ? "" : "es")"
            if let until = instant(firewall.until) { line += ", grace \(self.until(until))" }
            line += ")"
        } else {
            line += "not refused"
        }
        if let problem = firewall.problem { line += " (\(Output.clean(problem)))" }
        if let windows = allowOnlyNote(firewall) { line += ". " + windows }
        if let dns = e.dns, let problem = dns.problem {
            line += ". " + paint("DNS lookups fail (\(dns.failed ?? 0) of \(dns.lookups ?? 0)): \(Output.clean(problem))", .red)
        }
        if let sink = e.sink { line += ". Blocked names point at \(Output.clean(sink))" }
        return line + "."
    }

    /// W2: what the allow-only windows' rules let their users reach, or why connections are
    /// not refused during a window; nil without a window.
    func allowOnlyNote(_ firewall: EnforcementReply.Firewall) -> String? {
        if let problem = firewall.allowOnlyProblem {
            let text = Output.clean(problem)
            return text.prefix(1).uppercased() + text.dropFirst()
        }
        guard let windows = firewall.allowOnly, !windows.isEmpty else { return nil }
        let parts = windows.map { w in
            let uids = w.uids.map { String($0) }
            let whose = uids.isEmpty ? "login users reach" : "uid\(uids.count == 1 ? " \(uids[0]) reaches" : "s \(uids.joined(separator: ",")) reach")"
            let hosts = w.hosts ?? 0, addresses = w.addresses.count
            return "\(whose) only \(addresses) address\(addresses == 1 ? "" : "es") of \(hosts) allowed host\(hosts == 1 ? "" : "s")"
        }
        return "Allow-only time: " + parts.joined(separator: "; ") + ", DNS and this machine"
    }

    /// E7: which browsers get blockd's policies, or why none do.
    func browsersNote(_ e: EnforcementReply) -> String {
        guard let b = e.browserPolicies else { return "" }
        if let reason = e.browsersReason { return " Browsers: none (\(Output.clean(reason)))." }
        var line = " Browsers: \(b.browsers.map(Output.clean).joined(separator: ", "))"
        let files = b.files.map(Output.clean) + (b.firefox.map { [Output.clean($0)] } ?? [])
        if !files.isEmpty { line += " (\(files.joined(separator: ", ")))" }
        // B1: web time and the block page come from the extension.
        if b.extensionInstalled {
            line += "; blockd's extension is installed in them (web time, the block page)"
        } else if let why = b.extensionReason {
            line += "; blockd's extension: \(Output.clean(why))"
        }
        return line + "."
    }

    /// W3: "Closed while blocked: private windows, guest profiles, new profiles (...)."; nil
    /// when nothing is closed.
    func closedLine(_ e: EnforcementReply) -> String? {
        guard let b = e.browserPolicies else { return nil }
        let closed = b.closed.map(Output.clean)
        guard !closed.isEmpty else { return nil }
        var line = "Closed while blocked: " + closed.joined(separator: ", ")
        if b.firefoxPrivateClosed {
            line += " (Firefox reads this when it starts: one already running keeps its private windows until restarted)"
        }
        return line + "."
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
        return [Cell(Output.clean(a.name), .bold), Cell(kind), Cell(rule), Cell(a.selections.map(Output.clean).joined(separator: ", ")),
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
        switch reply.outcome {
        case .known(.extended):
            return "Extended the block on \(what) \(end)\(named).\(lock)"
        case .known(.unchanged):
            return "\(what) is already blocked \(end)\(named); a block is extended, never shortened."
        case .known(.created), .unknown:
            return "Blocked \(what) \(end)\(named).\(lock)"
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
