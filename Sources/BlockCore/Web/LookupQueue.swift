/// E5 with per-user blocks (U3): which DNS lookups of newly blocked domains run next, as pure
/// state. The daemon's workers ask `start()` for work and report each lookup with `finish`;
/// nothing here reads a clock or does I/O.
///
/// The order is the rule: a lookup for a machine-wide block starts before every queued
/// per-user one, and per-user lookups take turns between users (round robin over their
/// lanes), so no member's backlog delays a block for everyone or another member's block.
/// Each user's lane has its own budget: at most `perUserRunning` of its lookups run at once
/// and `perUserQueued` wait; what is beyond is dropped and counted, for one notice. Per-user
/// lookups together leave `reserved` workers free, so a machine-wide lookup finds a worker at
/// once even while every member's resolver hangs.
public struct LookupQueue: Equatable, Sendable {
    public struct Limits: Equatable, Sendable {
        /// Lookups running at once, in all.
        public var workers: Int
        /// Workers that per-user lookups never take (kept for machine-wide ones).
        public var reserved: Int
        /// One lane's lookups running at once.
        public var perUserRunning: Int
        /// One lane's lookups waiting.
        public var perUserQueued: Int
        /// Lookups queued by one change (a 100,000-name list is not 100,000 queries).
        public var perChange: Int

        public init(workers: Int, reserved: Int, perUserRunning: Int, perUserQueued: Int, perChange: Int) {
            precondition(workers > reserved && reserved >= 0 && perUserRunning > 0 && perUserQueued >= 0 && perChange >= 0,
                         "lookup limits must leave per-user lookups a worker")
            self.workers = workers
            self.reserved = reserved
            self.perUserRunning = perUserRunning
            self.perUserQueued = perUserQueued
            self.perChange = perChange
        }

        /// Four workers, one kept for machine-wide lookups; a user runs two and queues 256.
        public static let standard = Limits(workers: 4, reserved: 1, perUserRunning: 2, perUserQueued: 256, perChange: 1024)
    }

    /// One lookup: the domain, and whose block it is for (nil: everyone's; else the sorted
    /// uids of the domain's scope, its lane).
    public struct Job: Hashable, Sendable {
        public var domain: String
        public var users: [UInt32]?
        public init(_ domain: String, users: [UInt32]? = nil) {
            self.domain = domain
            self.users = users
        }
    }

    /// What `add` left out: past the change's bound, and past each lane's budget.
    public struct Dropped: Equatable, Sendable {
        public var overChange = 0
        public var overBudget: [[UInt32]: Int] = [:]
        public init(overChange: Int = 0, overBudget: [[UInt32]: Int] = [:]) {
            self.overChange = overChange
            self.overBudget = overBudget
        }
    }

    public let limits: Limits
    /// Machine-wide lookups waiting, first first.
    public private(set) var everyone: [String] = []
    /// Per-user lookups waiting, per lane, first first.
    public private(set) var lanes: [[UInt32]: [String]] = [:]
    /// The lanes with lookups waiting, in the order they came.
    public private(set) var turns: [[UInt32]] = []
    /// When each lane in the rotation last had a turn, counted in turns (not a clock): the
    /// lane whose turn is longest ago goes next, one that has had none first of all.
    var lastTurn: [[UInt32]: Int] = [:]
    var turnCount = 0
    /// Lookups running, per lane (nil: machine-wide).
    public private(set) var running: [[UInt32]?: Int] = [:]
    /// Where each waiting domain waits, and the domains being looked up: never twice at once.
    var waiting: [String: [UInt32]?] = [:]
    var inFlight: Set<String> = []

    public init(limits: Limits = .standard) { self.limits = limits }

    public var queued: Int { waiting.count }
    public var runningCount: Int { running.values.reduce(0, +) }
    var perUserRunningCount: Int { running.filter { $0.key != nil }.values.reduce(0, +) }

    /// Queues one change's lookups. Machine-wide ones go first, then per-user ones one lane at
    /// a time in turn, until the change's bound; a lane past its budget drops the rest of its
    /// own. A domain already waiting or being looked up is not queued again, except that a
    /// machine-wide job moves a domain waiting in a user's lane to the front queue (its block
    /// is for everyone now).
    public mutating func add(_ jobs: [Job]) -> Dropped {
        var dropped = Dropped()
        var admitted = 0
        func admit() -> Bool {
            guard admitted < limits.perChange else { dropped.overChange += 1; return false }
            admitted += 1
            return true
        }
        for job in jobs where job.users == nil && !inFlight.contains(job.domain) {
            switch waiting[job.domain] {
            case .some(.none): continue  // already waiting in front
            case .some(.some(let lane)):
                remove(job.domain, from: lane)
                everyone.append(job.domain)
                waiting[job.domain] = .some(nil)
            case .none:
                guard admit() else { continue }
                everyone.append(job.domain)
                waiting[job.domain] = .some(nil)
            }
        }
        var byLane: [[UInt32]: [String]] = [:]
        for job in jobs {
            guard let lane = job.users, waiting[job.domain] == nil, !inFlight.contains(job.domain) else { continue }
            byLane[lane, default: []].append(job.domain)
        }
        // In turn, so that one change covering several users (a restart) is fair to each.
        var order = byLane.keys.sorted { $0.lexicographicallyPrecedes($1) }
        var next = [[UInt32]: Int]()
        while !order.isEmpty {
            var still: [[UInt32]] = []
            for lane in order {
                let list = byLane[lane]!, i = next[lane, default: 0]
                guard i < list.count else { continue }
                next[lane] = i + 1
                still.append(lane)
                if waiting[list[i]] != nil { continue }  // listed twice in this change
                guard lanes[lane, default: []].count < limits.perUserQueued else {
                    dropped.overBudget[lane, default: 0] += 1
                    continue
                }
                guard admit() else { continue }
                if lanes[lane] == nil { turns.append(lane) }
                lanes[lane, default: []].append(list[i])
                waiting[list[i]] = .some(lane)
            }
            order = still
        }
        return dropped
    }

    /// The lookups to start now, taken off the queues and counted as running: machine-wide
    /// ones while any worker is free, then per-user ones in turn within their budgets.
    public mutating func start() -> [Job] {
        var out: [Job] = []
        while runningCount < limits.workers {
            if !everyone.isEmpty {
                let domain = everyone.removeFirst()
                out.append(begin(domain, users: nil))
                continue
            }
            guard perUserRunningCount < limits.workers - limits.reserved, let lane = nextLane() else { break }
            let domain = lanes[lane]!.removeFirst()
            lastTurn[lane] = turnCount
            turnCount += 1
            out.append(begin(domain, users: lane))
            if lanes[lane]!.isEmpty { leave(lane) }
        }
        return out
    }

    /// A lookup `start` handed out has answered (or failed).
    public mutating func finish(_ job: Job) {
        precondition(running[job.users, default: 0] > 0 && inFlight.contains(job.domain), "finished a lookup that was not running: \(job)")
        running[job.users]! -= 1
        if running[job.users] == 0 {
            running[job.users] = nil
            if let lane = job.users, lanes[lane] == nil { lastTurn[lane] = nil }  // out of the rotation
        }
        inFlight.remove(job.domain)
    }

    /// The waiting lane below its running budget whose last turn is longest ago (never: first;
    /// ties in the order the lanes came).
    func nextLane() -> [UInt32]? {
        var best: (lane: [UInt32], turn: Int)?
        for lane in turns where running[lane, default: 0] < limits.perUserRunning {
            let turn = lastTurn[lane] ?? -1
            if best == nil || turn < best!.turn { best = (lane, turn) }
        }
        return best?.lane
    }

    /// `lane` has nothing waiting any more; it keeps its last turn while lookups of it run, so
    /// that refilling it at once does not put it ahead of the lanes that waited.
    mutating func leave(_ lane: [UInt32]) {
        lanes[lane] = nil
        turns.removeAll { $0 == lane }
        if running[lane] == nil { lastTurn[lane] = nil }
    }

    /// Drops the waiting lookups of domains no longer blocked (running ones finish).
    public mutating func retain(_ blocked: (String) -> Bool) {
        let gone = Set(waiting.keys.filter { !blocked($0) })
        guard !gone.isEmpty else { return }
        for domain in gone { waiting[domain] = nil }
        everyone.removeAll { gone.contains($0) }
        for lane in Array(lanes.keys) {
            lanes[lane]!.removeAll { gone.contains($0) }
            if lanes[lane]!.isEmpty { leave(lane) }
        }
    }

    mutating func begin(_ domain: String, users: [UInt32]?) -> Job {
        waiting[domain] = nil
        inFlight.insert(domain)
        running[users, default: 0] += 1
        return Job(domain, users: users)
    }

    mutating func remove(_ domain: String, from lane: [UInt32]) {
        lanes[lane]?.removeAll { $0 == domain }
        if lanes[lane]?.isEmpty == true { leave(lane) }
    }
}
