import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// E5 "felt at once": when a selection becomes blocked, what is already open is cut and new
/// connections to the domains' old addresses are refused, and blocked names point at a sink
/// that refuses at once (`HostsFile.Sink.reject`).
///
/// The hosts write never waits on any of it: `apply` (after the hosts enforcer's, in the
/// composite) cuts the addresses already known and rewrites the table, which takes
/// milliseconds; the DNS lookups run on other threads and cut what they learn when they
/// answer. All state lives on `queue`; the pure bookkeeping is `CutPlan` and, for the order of
/// the lookups (machine-wide first, then each user's in turn, within a budget per user),
/// `LookupQueue`.
///
/// T9: a loosening (names or allow-only windows only dropped, the rest as it was) is carried
/// out after `enforce` returns, as the browser policies are (`LooseningOrder`): an unlock's
/// hosts file and its journal entry do not wait for libnftables, and the table refuses an
/// address a few milliseconds longer, never less.
public final class FeltEnforcer: Enforcer, @unchecked Sendable {
    public let settings: DaemonConfig.FeltSettings
    /// Nil when `Firewall=no` or nftables is not usable (`firewallProblem` says why).
    let table: (any FirewallTable)?
    public let firewallProblem: String?
    /// Where blocked names point: the refusing sink when the table can hold its rule.
    public let sink: HostsFile.Sink
    let log: any LogSink
    let lookup: @Sendable (String) -> DNSClient.Lookup
    /// W2: the machine's nameservers now (`DNSClient.inUse`), read when windows change and at
    /// each refresh, so a new DHCP lease's server is followed.
    let nameservers: @Sendable () -> [IPAddress]
    let cutter: @Sendable ([IPAddress], CutPlan.Owners) -> SocketCutter.Result
    let monotonic: @Sendable () -> Double
    let onChange: @Sendable () -> Void
    let queue = DispatchQueue(label: "blockd.felt")
    /// What `enforce` was last asked for, to tell a loosening from the rest (T9); under `lock`,
    /// as it is read before `queue` is reached.
    private var asked: Ask?
    private let lock = Lock()
    /// Bumped by every property `notes` is made of.
    public let notesVersion = NotesVersion()
    var plan: CutPlan { didSet { notesVersion.bump() } }
    var timer: DispatchSourceTimer?
    var rejecting: [CutPlan.Rule] = [] { didSet { notesVersion.bump() } }
    var socketsCut = 0 { didSet { notesVersion.bump() } }
    var cutProblem: String? { didSet { notesVersion.bump() } }
    var tableProblem: String? { didSet { notesVersion.bump() } }
    /// E5's DNS lookups: how many ran, how many no server answered, and the last reason, kept
    /// until a lookup works again (logged once per reason, shown in status).
    var lookups = 0 { didSet { notesVersion.bump() } }
    var lookupsFailed = 0 { didSet { notesVersion.bump() } }
    var lookupProblem: String? { didSet { notesVersion.bump() } }
    /// W2's network part (FeltEnforcer+AllowOnly.swift): the windows, what they learned, the
    /// window rules the table holds, the refresh timer, and the windows the table cannot hold.
    var net = AllowOnlyNet() { didSet { notesVersion.bump() } }
    var windowRules: [AllowOnlyNet.Rule] = [] { didSet { notesVersion.bump() } }
    var refresh: DispatchSourceTimer?
    var refreshSeconds = Double(FeltEnforcer.windowRefreshSeconds)
    var windowsUnrefused: [String] = [] { didSet { notesVersion.bump() } }

    public init(settings: DaemonConfig.FeltSettings, log: any LogSink,
                table: (table: (any FirewallTable)?, problem: String?)? = nil,
                lookup: (@Sendable (String) -> DNSClient.Lookup)? = nil,
                nameservers: (@Sendable () -> [IPAddress])? = nil,
                cutter: @escaping @Sendable ([IPAddress], CutPlan.Owners) -> SocketCutter.Result = { SocketCutter().cut($0, owners: $1) },
                monotonic: @escaping @Sendable () -> Double = { Double(blockd_clock_ns(1)) / 1e9 },
                onChange: @escaping @Sendable () -> Void = {}) {
        self.settings = settings
        self.onChange = onChange
        self.log = log
        let opened: (table: (any FirewallTable)?, problem: String?)
        if !settings.firewall {
            opened = (nil, "turned off (Firewall=no)")
        } else if let table {
            opened = table
        } else {
            let system = NftablesTable.open()
            opened = (system.table, system.problem)
        }
        self.table = opened.table
        self.firewallProblem = opened.problem
        self.sink = opened.table == nil ? .unspecified : .reject
        let dns = DNSClient(resolvConf: settings.resolvConf)
        self.lookup = lookup ?? { dns.lookup($0) }
        self.nameservers = nameservers ?? { dns.inUse() }
        self.cutter = cutter
        self.monotonic = monotonic
        self.plan = CutPlan(grace: Double(settings.connectGraceSeconds))
        if let problem = opened.problem, settings.firewall {
            log.warning("Blocked sites point at 0.0.0.0 and :: and new connections to their old addresses are not refused: \(problem)")
        }
    }

    public var mode: String { "cut" }
    /// E5 does nothing with CutSockets=no and no table (Firewall=no or nftables unusable).
    public var off: String? {
        guard !settings.cutSockets, table == nil else { return nil }
        return "CutSockets=no, and new connections are not refused: \(firewallProblem ?? "no nftables table")"
    }

    /// Failures here name no selection: cutting and refusing make a block felt at once, while
    /// the hosts file is what makes it enforced (§7 "Truth").
    public func enforce(blocked: [Selection]) -> EnforcementReport {
        let windows = AllowOnlyNet.windows(blocked)
        noteUnrefused(windows)
        // CutSockets=no and no table (Firewall=no, or nftables unusable): nothing here acts on
        // what is blocked, so neither the plan nor a lookup is worth doing.
        guard settings.cutSockets || table != nil else { return EnforcementReport() }
        let wanted = FeltEnforcer.blocks(blocked)
        let ask = Ask(blocks: wanted, windows: windows)
        let loosens = lock.withLock {
            defer { asked = ask }
            return asked.map(ask.loosens) ?? false
        }
        guard let (jobs, dropped, failure) = LooseningOrder.carryOut(loosening: loosens, on: queue, failed: { $0.failure != nil },
                                                                     onChange: onChange, { [self] in update(to: ask) }) else {
            return EnforcementReport()
        }
        if dropped.overChange > 0 {
            log.log(JournalEntry("\(jobs.count) domains became blocked at once; the open connections of the first \(FeltEnforcer.maxLookups) are looked up and cut, the others' end as they reconnect to the sink",
                             priority: .notice, fields: [(.lookupsDropped, "\(dropped.overChange)")]))
        }
        for (uids, count) in dropped.overBudget.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let whose = "uid\(uids.count == 1 ? "" : "s") \(uids.map(String.init).joined(separator: ","))"
            log.log(JournalEntry("The blocks of \(whose) already have \(FeltEnforcer.lookupLimits.perUserQueued) DNS lookups waiting; the open connections of \(count) more of their domains are not looked up and cut, and end as they reconnect to the sink",
                             priority: .notice, fields: [(.users, uids.map(String.init).joined(separator: " ")), (.lookupsDropped, "\(count)")]))
        }
        return EnforcementReport(failures: failure.map { [$0] } ?? [])
    }

    /// What `enforce` is asked to hold: the blocked names with their scopes, and W2's windows.
    struct Ask {
        var blocks: [String: CutPlan.Block]
        var windows: [AllowOnlyNet.Window]

        /// Whether going from `before` to this only drops names or windows (T9: an unlock),
        /// every one kept as it was; nothing dropped is not a loosening.
        func loosens(from before: Ask) -> Bool {
            guard blocks.count + windows.count < before.blocks.count + before.windows.count,
                  windows.allSatisfy(before.windows.contains) else { return false }
            return blocks.allSatisfy { name, block in before.blocks[name] == block }
        }
    }

    /// Makes the plan, the table and the lookups hold `ask`, on `queue`: what `enforce` does,
    /// at once or, for a loosening, after it returned.
    private func update(to ask: Ask) -> (jobs: [LookupQueue.Job], dropped: LookupQueue.Dropped, failure: EnforcementFailure?) {
        dispatchPrecondition(condition: .onQueue(queue))
        let before = plan.blocked
        let (newly, cuts) = plan.update(blocks: ask.blocks, at: monotonic())
        let windowJobs = updateWindows(ask.windows)
        // Refuse first, then cut: a browser's immediate reconnect meets the reject.
        let failure = converge()
        for c in cuts { cut(c, reason: "already known when the block started") }
        let jobs = FeltEnforcer.jobs(newly: newly, before: before, now: ask.blocks)
        let names = Set(net.names)
        lookupQueue.retain { ask.blocks[$0] != nil || names.contains($0) }
        let dropped = lookupQueue.add(jobs)
        _ = lookupQueue.add(windowJobs)  // a few names per window, well within the bounds
        startLookups()
        return (jobs, dropped, failure)
    }

    /// E5 at scale: a block of a 100,000-name list must not send 100,000 DNS queries at once
    /// (at most `perChange` names are looked up per change, by `workers` threads); with per-user
    /// blocks (U3), a member's backlog must not delay anyone else's (`LookupQueue`).
    static let lookupLimits = LookupQueue.Limits.standard
    static var maxLookups: Int { lookupLimits.perChange }
    /// Serial queues, so each has a thread of its own whatever the cores (a lookup blocks for
    /// up to a second), and those without a lookup now.
    let lookupWorkers = (0..<lookupLimits.workers).map { DispatchQueue(label: "blockd.felt.lookup\($0)") }
    var idleWorkers = Array(0..<lookupLimits.workers)
    var lookupQueue = LookupQueue(limits: lookupLimits)

    /// The lookups a change asks for: each newly blocked domain for its scope, and a domain
    /// that was blocked for some users and is now blocked for everyone (its lookup, if still
    /// waiting in a user's lane, moves to the front). Machine-wide first, each group sorted.
    static func jobs(newly: [String], before: [String: CutPlan.Block], now: [String: CutPlan.Block]) -> [LookupQueue.Job] {
        let fresh = newly.map { LookupQueue.Job($0, users: now[$0]?.users?.sorted()) }
        let widened = now.filter { $0.value.users == nil && before[$0.key].map { $0.users != nil } == true }.keys.sorted()
        return fresh.filter { $0.users == nil } + widened.map { LookupQueue.Job($0) } + fresh.filter { $0.users != nil }
    }

    public func release() -> [EnforcementFailure] {
        lock.withLock { asked = nil }
        return queue.sync {
            plan = CutPlan(grace: plan.grace)
            lookupQueue.retain { _ in false }  // the running ones finish and find nothing blocked
            timer?.cancel()
            timer = nil
            _ = updateWindows([])
            return converge(anyBlocked: false).map { [$0] } ?? []
        }
    }

    /// Starts the lookups `lookupQueue` says are next, each on an idle worker off the queue
    /// (never delaying the hosts write); each answer is cut and rejected, and frees its worker
    /// for the next.
    func startLookups() {
        dispatchPrecondition(condition: .onQueue(queue))
        for job in lookupQueue.start() {
            let worker = idleWorkers.removeLast()  // LookupQueue runs at most `workers` at once
            lookupWorkers[worker].async { [self] in
                let answer = lookup(job.domain)
                queue.async { [self] in
                    lookupQueue.finish(job)
                    idleWorkers.append(worker)
                    learned(answer, for: job.domain)
                    startLookups()
                }
            }
        }
    }

    func learned(_ answer: DNSClient.Lookup, for domain: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        noteLookup(answer, domain: domain)
        let allowed = net.learned(answer.addresses, for: domain)  // W2: an allowed host's answer
        let fresh = plan.learnedCut(answer.addresses, for: domain)
        guard fresh != nil || allowed else { return }
        if let failure = converge() { log.log(JournalEntry(failure.message, priority: .error, event: .failure)) }
        if let fresh { cut(fresh, reason: "DNS answered for \(domain)") }
    }

    /// Counts a lookup; a failure is logged when its reason is new, and the recovery once.
    func noteLookup(_ answer: DNSClient.Lookup, domain: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        lookups += 1
        guard let problem = answer.problem else {
            if lookupProblem != nil {
                log.log(JournalEntry("DNS lookups for blocked sites work again (\(domain) answered); open connections to them are cut again", priority: .notice))
            }
            lookupProblem = nil
            return
        }
        lookupsFailed += 1
        if problem != lookupProblem {
            log.log(JournalEntry("Cannot learn the addresses of blocked sites, so open connections to them are not cut and only the sink is refused: \(problem)",
                             priority: .warning, event: .failure, fields: [(.domain, domain)]))
        }
        lookupProblem = problem
    }

    /// Destroys the open sockets of `c.users` (everyone's when nil) to `c.addresses`
    /// (CutSockets=yes), logs and counts what it did.
    func cut(_ c: CutPlan.Cut, reason: String) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard settings.cutSockets, !c.addresses.isEmpty, c.users?.isEmpty != true else { return }
        let result = cutter(c.addresses, c.users)
        socketsCut += result.destroyed
        let list = c.addresses.map(\.description).joined(separator: " ")
        let whose = c.users.map { " of uid\($0.count == 1 ? "" : "s") \($0.sorted().map(String.init).joined(separator: ","))" } ?? ""
        if let problem = result.problem {
            if cutProblem != problem { log.log(JournalEntry("Cannot cut open connections to blocked sites: \(problem)", priority: .warning, event: .failure)) }
            cutProblem = problem
        } else {
            cutProblem = nil
        }
        guard result.matched > 0 else { return }
        log.log(JournalEntry("Cut \(result.destroyed) open connection\(result.destroyed == 1 ? "" : "s")\(whose) to \(list) (\(reason))",
                         priority: .notice, event: .socketsCut,
                         fields: [(.addresses, list), (.socketsCut, "\(result.destroyed)")]))
    }

    /// Makes the table reject exactly the plan's addresses, plus the sink while anything is
    /// blocked; removes it when nothing is left. Arms the timer for the next grace end.
    @discardableResult
    func converge(anyBlocked: Bool? = nil) -> EnforcementFailure? {
        dispatchPrecondition(condition: .onQueue(queue))
        _ = plan.expire(at: monotonic())
        armTimer()
        guard let table else { return nil }
        // W2: the NSS module answers a window's other names with the sink: refused too.
        let blocked = anyBlocked ?? (!plan.blocked.isEmpty || !net.windows.isEmpty)
        let wanted = FeltEnforcer.withSink(plan.rules, sink: blocked ? sink.addresses : [])
        let windows = net.rules
        guard wanted != rejecting || windows != windowRules || tableProblem != nil else { return nil }
        if let problem = table.apply(rules: wanted, windows: windows) {
            tableProblem = problem
            return EnforcementFailure(selection: nil, message: "cannot update the nftables table inet blockd: \(problem)")
        }
        tableProblem = nil
        let (was, wereWindows) = (rejecting, windowRules)
        (rejecting, windowRules) = (wanted, windows)
        if wanted != was { logTable(was: was) }
        if windows != wereWindows { logWindows(was: wereWindows) }
        return nil
    }

    func logTable(was: [CutPlan.Rule]) {
        let now = rejecting.flatMap(\.addresses), before = was.flatMap(\.addresses)
        let list = now.map(\.description).joined(separator: " ")
        let message: String
        if now.isEmpty && windowRules.isEmpty {
            message = "Removed the nftables table inet blockd: nothing is refused any more"
        } else if now.isEmpty {
            message = "The nftables table inet blockd refuses no blocked site's address; it holds allow-only windows only"
        } else {
            // The sink's own addresses are not a site's: the count says what DNS taught.
            let sinks = Set(sink.addresses)
            let learned = Set(now).subtracting(sinks), sinkRefused = now.contains { sinks.contains($0) }
            let added = learned.subtracting(before).count, removed = Set(before).subtracting(sinks).subtracting(now).count
            let some = rejecting.filter { $0.users != nil }.flatMap(\.addresses).count
            let scoped = some == 0 ? "" : ", \(some) of them for some users only"
            let what = "\(learned.count) learned address\(learned.count == 1 ? "" : "es") of blocked sites\(sinkRefused ? " and the sink" : "")"
            message = "The nftables table inet blockd now refuses connections to \(what) (\(added) added, \(removed) removed\(scoped))"
        }
        log.log(JournalEntry(message, priority: .info, event: .firewall, fields: [(.addresses, list)]))
    }

    func armTimer() {
        timer?.cancel()
        timer = nil
        guard let next = plan.nextExpiry else { return }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + max(0, next - monotonic()) + 0.01)
        t.setEventHandler { [weak self] in self?.converge() }
        t.resume()
        timer = t
    }

    /// For `status`'s enforcement object (E5). `iso` formats a wall-clock instant. Made only of
    /// `settings`, `sink`, the table's presence and the properties that bump `notesVersion`.
    public func notes(wallNow: Date, iso: (Date) -> String) -> JSONObject {
        queue.sync {
            var firewall: JSONObject = ["enabled": .bool(table != nil), "table": .string("\(NftScript.family) \(NftScript.table)"),
                                        "addresses": .array(rejecting.flatMap(\.addresses).map { .string($0.description) }),
                                        "learned": .int(Int64(Set(rejecting.flatMap(\.addresses)).subtracting(sink.addresses).count))]
            let scoped = rejecting.filter { $0.users != nil }
            if !scoped.isEmpty {
                firewall["perUser"] = .array(scoped.map { rule in
                    .object(["uids": .array((rule.users ?? []).map { .int(Int64($0)) }),
                             "addresses": .array(rule.addresses.map { .string($0.description) })])
                })
            }
            if let until = plan.until { firewall["until"] = .string(iso(wallNow.addingTimeInterval(until - monotonic()))) }
            if let problem = tableProblem ?? firewallProblem { firewall["problem"] = .string(problem) }
            windowNotes(&firewall)
            var notes: JSONObject = ["sink": .string(sink.description), "cutSockets": .bool(settings.cutSockets),
                                     "socketsCut": .int(Int64(socketsCut)), "firewall": .object(firewall),
                                     "resolvConf": .string(settings.resolvConf), "connectGrace": .int(Int64(settings.connectGraceSeconds))]
            if let cutProblem { notes["cutSocketsProblem"] = .string(cutProblem) }
            var dns: JSONObject = ["lookups": .int(Int64(lookups)), "failed": .int(Int64(lookupsFailed))]
            if let lookupProblem { dns["problem"] = .string(lookupProblem) }
            notes["dns"] = .object(dns)
            return notes
        }
    }

    /// `blockd --release` (E4): removes the table whatever is in it.
    public static func releaseTable(settings: DaemonConfig.FeltSettings) -> String? {
        guard settings.firewall else { return nil }
        let opened = NftablesTable.open()
        guard let table = opened.table else { return nil }  // nothing of ours can be there
        return table.apply(rules: [])
    }

    /// The blocked domains of `selections` with their scope: a domain blocked for everyone by
    /// any selection is blocked for everyone, else for the union of its selections' users.
    /// `Firewall=yes` on any of them holds the reject for the whole block.
    static func blocks(_ selections: [Selection]) -> [String: CutPlan.Block] {
        var out: [String: CutPlan.Block] = [:]
        for selection in selections where selection.users?.isEmpty != true {
            let users = selection.users.map(Set.init)
            // W1: every name the hosts file lists, common prefixes included, is looked up.
            let names = selection.domains.flatMap { raw in
                (try? Domain.normalize(raw)).map(Site.hostsNames) ?? []  // the hosts enforcer reports a bad one
            }
            for d in names {
                guard let was = out[d] else {
                    out[d] = CutPlan.Block(whole: selection.firewall == true, users: users)
                    continue
                }
                out[d] = CutPlan.Block(whole: was.whole || selection.firewall == true,
                                       users: CutPlan.union(was.users, users))
            }
        }
        return out
    }

    /// The plan's rules with the sink refused for everyone (merged into the machine-wide rule).
    static func withSink(_ rules: [CutPlan.Rule], sink: [IPAddress]) -> [CutPlan.Rule] {
        guard !sink.isEmpty else { return rules }
        var out = rules
        if let i = out.firstIndex(where: { $0.users == nil }) {
            out[i].addresses = (out[i].addresses + sink).sorted()
        } else {
            out.insert(CutPlan.Rule(addresses: sink), at: 0)
        }
        return out
    }
}
