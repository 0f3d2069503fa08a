import BlockCore
import FoundationEssentials

/// `blockc status`'s Enforcement section (§7 "Truth", E5, E7, U3).
extension Output {
    /// §7 "Truth", E5, E7: how blocking is done here, one row per part as a person names it
    /// (websites, per-user websites, connections, apps, browsers), each part said once: on, with
    /// what; or off, with why. Then the next change and what is not as it should be.
    /// "off (AppShield=no)" for "turned off (AppShield=no)", else "off: WHY".
    static func off(_ why: String) -> String {
        why.hasPrefix("turned off (") ? "off" + why.dropFirst("turned off".count) : "off: " + why
    }

    func enforcementSection(_ s: StatusReply) -> [String] {
        let e = s.enforcement
        var offs: [String: String] = [:]
        for off in e.off { offs[off.part] = Output.clean(off.why) }
        var rows: [[Cell]] = []
        func row(_ part: String, _ text: String, off: Bool = false) { rows.append([Cell(part), Cell(text, off ? .yellow : nil)]) }

        var websites = e.hostsFile.map { "hosts file \(Output.clean($0))" } ?? "the hosts file"
        if let sink = e.sink { websites += "; blocked names point at \(Output.clean(sink).split(separator: " ").joined(separator: " and "))" }
        row("websites", websites)
        if let why = offs.removeValue(forKey: "nss") {
            row("per user", Output.off(why), off: true)
        } else if let tables = e.userTables {
            row("per user", "the NSS module, from the tables in \(Output.clean(tables))")
        }
        if let felt = connections(e) { row("connections", felt.text, off: felt.off) }
        offs["cut"] = nil  // said by the connections row
        if let apps = e.apps.map(Output.clean) {
            let why = e.appsReason.map(Output.clean)
            if apps == "off" { row("apps", why.map(Output.off) ?? "off", off: true) }
            else { row("apps", "\(apps) exec shield" + (why.map { " (\($0))" } ?? "")) }
        } else if let why = offs["apps"] {
            row("apps", Output.off(why), off: true)
        } else if let shield = e.mode?.split(separator: "+").first(where: { ["fanotify", "proc", "scan"].contains($0) }) {
            row("apps", "\(shield) exec shield")  // an older daemon says it in the mode alone
        }
        offs["apps"] = nil
        if let browsers = browsersRow(e) { row("browsers", browsers.text, off: browsers.off) }
        offs["browsers"] = nil
        for (part, why) in offs.sorted(by: { $0.key < $1.key }) { row(Output.clean(part), Output.off(why), off: true) }

        var lines = [heading("Enforcement")] + table(rows)
        if let closed = closedLine(e) { lines.append("  " + closed) }
        if let paths = e.pathRules { lines.append("  Note: \(Output.clean(paths)).") }
        if let next = instant(s.nextTransition) { lines.append("Next change \(at(next)).") }
        // §7 "Truth": say when the configuration in force is not the files, or the
        // state file cannot be saved.
        if let problem = e.configProblem { lines.append(paint("Configuration: \(Output.clean(problem)).", .red)) }
        if let problem = e.stateProblem { lines.append(paint("State file not saved: \(Output.clean(problem)).", .red)) }
        return lines
    }

    /// E5: whether open connections are cut and new ones refused (with the allow-only windows'
    /// rules and a DNS problem); nil when the daemon says nothing of them.
    func connections(_ e: EnforcementReply) -> (text: String, off: Bool)? {
        guard let cut = e.cutSockets, let firewall = e.firewall else { return nil }
        var parts: [String] = []
        var open = cut ? "open ones cut when a block starts (\(e.socketsCut ?? 0) so far)" : "open ones not cut (CutSockets=no)"
        if let problem = e.cutSocketsProblem { open += " (\(Output.clean(problem)))" }
        parts.append(open)
        var new: String
        if firewall.enabled {
            // E5: the addresses DNS taught, not the sink's own, which are refused whatever DNS says.
            let count = firewall.learned ?? 0
            new = "new ones refused through nftables table \(Output.clean(firewall.table ?? "inet blockd")) (\(count) learned address\(count == 1 ? "" : "es")"
            if let until = instant(firewall.until) { new += ", grace \(self.until(until))" }
            new += ")"
        } else {
            new = "new ones not refused"
        }
        if let problem = firewall.problem.map(Output.clean) { new += firewall.enabled ? " (\(problem))" : ": " + problem }
        parts.append(new)
        if let windows = allowOnlyNote(firewall) { parts.append(windows) }
        if let dns = e.dns, let problem = dns.problem {
            parts.append(paint("DNS lookups fail (\(dns.failed ?? 0) of \(dns.lookups ?? 0)): \(Output.clean(problem))", .red))
        }
        return (parts.joined(separator: "; "), !cut && !firewall.enabled)
    }

    /// W2: what the allow-only windows' rules let their users reach, or why connections are
    /// not refused during a window; nil without a window.
    func allowOnlyNote(_ firewall: EnforcementReply.Firewall) -> String? {
        if let problem = firewall.allowOnlyProblem { return Output.clean(problem) }
        guard let windows = firewall.allowOnly, !windows.isEmpty else { return nil }
        let parts = windows.map { w in
            let uids = w.uids.map { String($0) }
            let whose = uids.isEmpty ? "login users reach" : "uid\(uids.count == 1 ? " \(uids[0]) reaches" : "s \(uids.joined(separator: ",")) reach")"
            let hosts = w.hosts ?? 0, addresses = w.addresses.count
            return "\(whose) only \(addresses) address\(addresses == 1 ? "" : "es") of \(hosts) allowed host\(hosts == 1 ? "" : "s")"
        }
        return "allow-only time: " + parts.joined(separator: "; ") + ", DNS and this machine"
    }

    /// E7: which browsers get blockd's policies, or why none do; nil when not said.
    func browsersRow(_ e: EnforcementReply) -> (text: String, off: Bool)? {
        guard let b = e.browserPolicies else { return e.off.first { $0.part == "browsers" }.map { (Output.off(Output.clean($0.why)), true) } }
        if let reason = e.browsersReason { return ("none: \(Output.clean(reason))", true) }
        var line = "policies for \(b.browsers.map(Output.clean).joined(separator: ", "))"
        let files = b.files.map(Output.clean) + (b.firefox.map { [Output.clean($0)] } ?? [])
        if !files.isEmpty { line += " (\(files.joined(separator: ", ")))" }
        // B1: web time and the block page come from the extension.
        if b.extensionInstalled {
            line += "; blockd's extension is installed in them (web time, the block page)"
        } else if let why = b.extensionReason {
            line += "; blockd's extension: \(Output.clean(why))"
        }
        return (line, false)
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
}
