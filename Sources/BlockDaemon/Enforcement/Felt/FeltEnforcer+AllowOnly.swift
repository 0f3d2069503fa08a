import BlockCore
import Dispatch
import FoundationEssentials

/// W2's network part in E5's table: while an allow-only window is active, its users'
/// connections to anything but DNS to the machine's nameservers, the machine itself and its
/// allowed sites' learned addresses are refused (`AllowOnlyNet` decides;
/// `NftScript.windowLines` renders).
///
/// The allowed hosts are looked up with E5's own machinery (the workers and `LookupQueue`,
/// in the window's lane) when the window starts and every `windowRefreshSeconds` while it lasts,
/// so the set follows sites whose addresses rotate; what was learned stays until no window
/// allows the host.
extension FeltEnforcer {
    /// How often a window's hosts are asked again: browsers keep an answer about a minute
    /// (Chromium's host cache, Firefox's `network.dnsCacheExpiration`), so an address they
    /// connect to is learned about as soon as they can ask for it, for a few queries per host
    /// a minute.
    static let windowRefreshSeconds = 60

    /// The windows now (nil table: none, `noteUnrefused` says so). Returns the lookups of the
    /// names newly allowed, windows for everyone first; arms or stops the refresh.
    func updateWindows(_ windows: [AllowOnlyNet.Window]) -> [LookupQueue.Job] {
        dispatchPrecondition(condition: .onQueue(queue))
        let newly = Set(net.update(windows: table == nil ? [] : windows))
        if !net.windows.isEmpty { net.nameservers = nameservers() }
        armRefresh()
        return FeltEnforcer.windowJobs(net.windows, only: newly)
    }

    /// The lookups of `windows`' names (those in `only`, when given), each in the lane of the
    /// first window asking for it: a window for everyone's go first (`LookupQueue`).
    static func windowJobs(_ windows: [AllowOnlyNet.Window], only: Set<String>? = nil) -> [LookupQueue.Job] {
        var seen = Set<String>(), jobs: [LookupQueue.Job] = []
        for window in windows.filter({ $0.users == nil }) + windows.filter({ $0.users != nil }) {
            for name in window.names where only?.contains(name) != false && seen.insert(name).inserted {
                jobs.append(LookupQueue.Job(name, users: window.users))
            }
        }
        return jobs
    }

    func armRefresh() {
        guard net.windows.isEmpty || refresh == nil else { return }
        refresh?.cancel()
        refresh = nil
        guard !net.windows.isEmpty else { return }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + refreshSeconds, repeating: refreshSeconds)
        t.setEventHandler { [weak self] in
            guard let self else { return }
            let servers = nameservers()
            if Array(Set(servers)).sorted() != net.nameservers {  // resolv.conf changed: DNS follows it
                net.nameservers = servers
                converge()
            }
            _ = lookupQueue.add(FeltEnforcer.windowJobs(net.windows))
            startLookups()
        }
        t.resume()
        refresh = t
    }

    /// Firewall=no or nftables unusable: the windows' connections are not refused (their names
    /// still are, by the NSS module). Logged once per set of windows, shown in status.
    func noteUnrefused(_ windows: [AllowOnlyNet.Window]) {
        guard table == nil else { return }
        let names = windows.map(\.name)
        let changed: Bool = queue.sync {
            defer { windowsUnrefused = names }
            return names != windowsUnrefused
        }
        guard changed, !names.isEmpty else { return }
        let next = settings.firewall ? "" : "; set Firewall=yes in blockd.conf's [Daemon] to refuse them"
        log.log(JournalEntry("Allow-only time does not refuse connections to other sites' addresses, only their names: \(firewallProblem ?? "no nftables table")\(next)",
                         priority: .warning, event: .failure, fields: [(.selection, names.joined(separator: " "))]))
    }

    /// One `firewall` journal line per change of the window rules.
    func logWindows(was: [AllowOnlyNet.Rule]) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !windowRules.isEmpty else {
            log.log(JournalEntry("The nftables table inet blockd no longer holds allow-only windows", priority: .info, event: .firewall))
            return
        }
        let parts = windowRules.map { rule in
            let whose = rule.users.map { "uid\($0.count == 1 ? "" : "s") \($0.map(String.init).joined(separator: ","))" } ?? "login users"
            return "\(whose) to all but \(rule.allowed.count) address\(rule.allowed.count == 1 ? "" : "es") of \(rule.hosts) allowed host\(rule.hosts == 1 ? "" : "s")"
        }
        let list = Set(windowRules.flatMap(\.allowed)).sorted().map(\.description).joined(separator: " ")
        log.log(JournalEntry("The nftables table inet blockd now refuses the connections of \(parts.joined(separator: "; ")) (allow-only time; DNS and this machine's own addresses pass)",
                         priority: .info, event: .firewall, fields: [(.addresses, list)]))
    }

    /// status: `firewall.allowOnly`, one object per window the table holds (`selection`, `uids`
    /// absent for login users, `hosts`, `addresses` allowed); `firewall.allowOnlyProblem` when
    /// windows are active but the table cannot hold them.
    func windowNotes(_ firewall: inout JSONObject) {
        dispatchPrecondition(condition: .onQueue(queue))
        if !windowRules.isEmpty {
            firewall["allowOnly"] = .array(zip(net.windows, windowRules).map { window, rule in
                var o: JSONObject = ["selection": .string(window.name), "hosts": .int(Int64(rule.hosts)),
                                     "addresses": .array(rule.allowed.map { .string($0.description) })]
                if let uids = rule.users { o["uids"] = .array(uids.map { .int(Int64($0)) }) }
                return .object(o)
            })
        }
        if !windowsUnrefused.isEmpty {
            firewall["allowOnlyProblem"] = .string("allow-only time refuses only names, not connections to other addresses: \(firewallProblem ?? "no nftables table")")
        }
    }
}
