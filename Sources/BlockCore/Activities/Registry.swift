import FoundationEssentials

/// Who is asking (§5). The daemon fills this from SO_PEERCRED; `mayModify` is true for
/// root and members of group `blockd`.
public struct Peer: Hashable, Sendable {
    public var uid: UInt32
    public var mayModify: Bool
    /// M1: root or a member of group `blockd-admin`: may approve and deny more-time requests.
    public var isAdmin = false
    /// B2: the connection it speaks on (the server's number for it; nil: none known), so that
    /// what a browser reported over one connection ends with it.
    public var connection: UInt64?
    public init(uid: UInt32, mayModify: Bool) {
        self.uid = uid
        self.mayModify = mayModify
    }
    public static let root = { var p = Peer(uid: 0, mayModify: true); p.isAdmin = true; return p }()
    public var isRoot: Bool { uid == 0 }
}

/// The registered activities under the cap (T4). Pure: every method takes `now`.
///
/// Blocks whose end has passed no longer count and are dropped by `expire(now:)`; the daemon
/// calls it on every wake-up and logs each one it returns as an unlock.
///
/// The activities live in an `ActivityIndex`: a change costs O(log n) whatever their number,
/// including the cap's count. `activities` lists them in registration order, for listings.
public struct Registry: Sendable {
    public internal(set) var index: ActivityIndex
    /// Every activity in registration order. O(n log n): for listings, never per change.
    public var activities: [Activity] { index.activities }
    /// Names of the activities added, replaced or removed since the last `takeChanges()`:
    /// what the state log must record for this change (T8), whatever the number of others.
    public var changed: Set<String> { Set(before.keys) }
    /// Each changed name's activity as it was before the first change since `takeChanges()`
    /// (nil: there was none), so that a change that cannot be saved is undone in O(changes).
    public private(set) var before: [String: Activity?] = [:]
    public var maxActivities: Int
    /// T4, M3: slots taken by more-time grants and requests, which count toward the cap.
    public var reserved = 0
    /// Where to raise the cap, named in the refusal message.
    public var configPath: String
    /// A1: a member's own activities, grants and requests count against this quota
    /// (`MaxActivitiesPerUser=`), and members together take at most half the cap, so that the
    /// rest stays for root, administrators and the configuration.
    public var maxPerMember: Int = Registry.defaultMaxPerMember
    /// A1: each member's grants and requests (uid → count), which take slots of their quota.
    public var reservedBy: [UInt32: Int] = [:]
    /// A1: who a uid is now (rank and name): the daemon asks the user database; without one,
    /// uid 0 is root and everyone else a member.
    public var people: @Sendable (UInt32) -> Person = Registry.anonymous
    /// A1: activities moved aside since the last `takeMoves()` (the engine fixes what refers
    /// to them and says so).
    public internal(set) var moves: [Move] = []

    public static let defaultMaxPerMember = 100

    public static let defaultMaxActivities = 10_000

    /// `clock` is the local time schedules follow (T7); the daemon passes the system's zone.
    public init(maxActivities: Int = Registry.defaultMaxActivities, configPath: String = "/etc/blockd/blockd.conf",
                activities: [Activity] = [], clock: LocalClock = .utc) {
        self.maxActivities = maxActivities
        self.configPath = configPath
        self.index = ActivityIndex(clock: clock, activities: activities)
    }

    public func activity(named name: String) -> Activity? { index.activity(named: name) }

    /// T7: schedules follow another time zone from the next `advance(to:)` on.
    public var clock: LocalClock {
        get { index.clock }
        set { index.setClock(newValue) }
    }

    /// Brings the kept union (T5) and the next transition (T9) to `now`.
    public mutating func advance(to now: Date) { index.advance(to: now) }

    /// The selections whose reasons may have changed since the last call.
    public mutating func takeTouchedSelections() -> Set<String> { index.takeTouched() }

    /// Activities that still count at `now` (schedules always; blocks until their end).
    public func live(at now: Date) -> [Activity] {
        activities.filter { if case .block(let b) = $0 { return b.end > now } else { return true } }
    }

    /// How many activities count at `now` (`live(at:).count` without the walk).
    public func liveCount(at now: Date) -> Int { index.count - index.endedBlockCount(by: now) }

    /// Removes and returns the blocks that have ended by `now`, in registration order.
    public mutating func expire(now: Date) -> [Block] {
        let ended = index.removeEndedBlocks(by: now)
        for b in ended where before[b.name] == nil { before[b.name] = .some(.block(b)) }
        return ended
    }

    /// The activities moved aside since the last call, and forgets them.
    public mutating func takeMoves() -> [Move] {
        defer { moves = [] }
        return moves
    }

    /// The names changed since the last call, and forgets them.
    @discardableResult
    public mutating func takeChanges() -> Set<String> {
        defer { before = [:] }
        return changed
    }

    /// Puts back every activity changed since the last `takeChanges()` (§7: a change
    /// that could not be saved is not made). Restored activities move to the end of the order,
    /// by name.
    public mutating func rollBack() {
        let prior = before
        before = [:]
        moves = []
        for name in prior.keys { index.remove(name) }
        for case let (_, activity?) in prior.sorted(by: { $0.key < $1.key }) { index.put(activity) }
    }

    /// Records `name`'s activity before its first change since the last `takeChanges()`.
    mutating func noteChange(_ name: String) {
        guard before[name] == nil else { return }
        before[name] = .some(activity(named: name))
    }

    public enum BlockOutcome: Equatable, Sendable {
        case created(Block)
        /// T10: an existing block of that name now ends at the later of the two ends.
        case extended(from: Block, to: Block)
        /// T10: the existing block already ends later; nothing was shortened.
        case unchanged(Block)

        public var block: Block {
            switch self {
            case .created(let b), .extended(_, let b), .unchanged(let b): b
            }
        }
    }

    /// Starts a block, or extends the block of the same name (T10). Without an explicit name
    /// the block is named after its selections (`defaultBlockName`), so starting the same
    /// selections again extends it rather than taking another slot.
    public mutating func startBlock(name explicitName: String?, selections: [String], end: Date, locked: Bool,
                                    moreTime: MoreTimePolicy? = nil, users: Scope? = nil, by peer: Peer, now: Date) throws(CoreError) -> BlockOutcome {
        let actor = actor(peer)
        try Registry.check(Authority.decide(.start, by: actor))
        let selections = Registry.unique(selections)
        let typed = explicitName ?? Registry.defaultBlockName(for: selections)
        try Request.StartArguments(selections: selections, name: typed).validate()
        let (name, displace) = try place(typed, command: .start, by: actor)  // A1: names are per owner
        guard end > now else {
            throw CoreError(.invalidTime, "the end of the block is not in the future; give a later time or a duration")
        }
        guard end.timeIntervalSince(now) <= TimeInterval(DurationText.maximum) + 1 else {
            throw CoreError(.invalidDuration, "a block can last at most 366 days; give an earlier end")
        }

        if displace == nil, let found = activity(named: name) {
            try Registry.check(Authority.decide(.start, by: actor, on: subject(found)))  // A1: never joins another's
            guard case .block(var existing) = found else {
                throw CoreError(.exists, "'\(name)' is a \(found.kind.rawValue); choose another name with --name")
            }
            if existing.end <= now {
                // The old block has ended but not been expired yet: this is a new block.
                noteChange(name)
                index.remove(name)
            } else {
                try Registry.checkSameScope(existing, users)  // per-user blocks (Scope.swift)
                let before = existing
                existing.selections = Registry.unique(existing.selections + selections)
                existing.end = max(existing.end, end)
                existing.locked = existing.locked || locked
                if let p = moreTime { existing.moreTime = MoreTimePolicy.strictest([existing.moreTime ?? .standard, p]) }  // M1: only tightened
                if existing != before {
                    noteChange(name)
                    index.put(.block(existing))
                }
                return existing == before ? .unchanged(existing) : .extended(from: before, to: existing)
            }
        }
        try checkCap(adding: "block '\(name)'", by: actor, now: now)
        if let displace { moveAside(displace, for: "\(actor.name)'s block '\(name)'") }
        var block = Block(name: name, selections: selections, start: now, end: end, locked: locked,
                          origin: .client(uid: peer.uid))
        block.moreTime = moreTime
        block.users = users
        noteChange(name)
        index.put(.block(block))
        return .created(block)
    }

    /// Adds a schedule. It counts once against the cap whatever its weekday set (T4). Returns
    /// the schedule as added: under the key it was given (A1: `kid/NAME` when another holds NAME).
    @discardableResult
    public mutating func addSchedule(_ schedule: Schedule, by peer: Peer, now: Date) throws(CoreError) -> Schedule {
        let actor = actor(peer)
        try Registry.check(Authority.decide(.scheduleAdd, by: actor))
        try schedule.validate()
        var s = schedule
        let displace: Activity?
        (s.name, displace) = try vacantKey(for: schedule.name, command: .scheduleAdd, by: actor)
        try checkCap(adding: "schedule '\(s.name)'", by: actor, now: now)
        if let displace { moveAside(displace, for: "\(actor.name)'s schedule '\(s.name)'") }
        s.selections = Registry.unique(s.selections)
        s.origin = .client(uid: peer.uid)
        noteChange(s.name)
        index.put(.schedule(s))
        return s
    }

    /// Adds a daily usage limit (§9). It is an activity: it counts against the cap (T4).
    /// Returns the limit as added, under its key (A1, as `addSchedule`).
    @discardableResult
    public mutating func addLimit(_ limit: Limit, by peer: Peer, now: Date) throws(CoreError) -> Limit {
        let actor = actor(peer)
        try Registry.check(Authority.decide(.limitAdd, by: actor))
        try limit.validate()
        var l = limit
        let displace: Activity?
        (l.name, displace) = try vacantKey(for: limit.name, command: .limitAdd, by: actor)
        try checkCap(adding: "limit '\(l.name)'", by: actor, now: now)
        if let displace { moveAside(displace, for: "\(actor.name)'s limit '\(l.name)'") }
        l.selections = Registry.unique(l.selections)
        l.origin = .client(uid: peer.uid)
        noteChange(l.name)
        index.put(.limit(l))
        return l
    }

    /// Removes a limit a client added: root or the uid that added it.
    public mutating func removeLimit(named name: String, by peer: Peer) throws(CoreError) -> Limit {
        guard let found = known(name, to: actor(peer)) else {
            throw Authority.unknown("limit", name, near: nearest(name, kind: .limit, to: actor(peer)))
        }
        guard case .limit(let limit) = found else {
            throw CoreError(.usage, "'\(name)' is a \(found.kind.rawValue), not a limit")
        }
        try Registry.check(Authority.decide(.limitRemove, by: actor(peer), on: subject(found)))
        noteChange(name)
        index.remove(name)
        return limit
    }

    /// Replaces the limits' usage-derived state (the engine refreshes it before every look).
    /// O(limits), not O(activities).
    public mutating func updateLimits(_ transform: (Limit) -> Limit) {
        for l in index.limits {
            let updated = transform(l)
            guard updated != l else { continue }
            if before[l.name] == nil { before[l.name] = .some(.limit(l)) }
            index.put(.limit(updated))
        }
    }

    /// Ends a block early (§5): root or the uid that started it, and never a `--lock` block.
    public mutating func stopBlock(named name: String, by peer: Peer, now: Date) throws(CoreError) -> Block {
        guard let found = known(name, to: actor(peer)) else {
            throw Authority.unknown("block", name, near: nearest(name, kind: .block, to: actor(peer), now: now))
        }
        guard case .block(let block) = found, block.end > now else {
            if case .schedule = found {
                throw CoreError(.usage, "'\(name)' is a schedule; remove it with 'blockc schedule remove \(name)'")
            }
            throw CoreError(.notFound, "the block '\(name)' has already ended")
        }
        try Registry.check(Authority.decide(.stop, by: actor(peer), on: subject(found)))
        noteChange(name)
        index.remove(name)
        return block
    }

    /// Removes a schedule a client added: root or the uid that added it. Schedules from
    /// `schedules.d/` belong to the configuration and are removed by deleting their file.
    public mutating func removeSchedule(named name: String, by peer: Peer) throws(CoreError) -> Schedule {
        guard let found = known(name, to: actor(peer)) else {
            throw Authority.unknown("schedule", name, near: nearest(name, kind: .schedule, to: actor(peer)))
        }
        guard case .schedule(let schedule) = found else {
            throw CoreError(.usage, "'\(name)' is a block, not a schedule; stop it with 'blockc stop \(name)'")
        }
        try Registry.check(Authority.decide(.scheduleRemove, by: actor(peer), on: subject(found)))
        noteChange(name)
        index.remove(name)
        return schedule
    }

    /// Replaces the activities declared in files (schedules.d, limits.d) with `declared`, on
    /// start-up and reload. Client activities keep their slots; declared ones beyond the cap,
    /// or clashing with a client activity's name, are refused and returned as errors (T4:
    /// never swallowed).
    public mutating func replaceConfigActivities(_ declared: [Activity], now: Date) -> [Refusal] {
        for old in activities {
            guard case .config = old.origin else { continue }
            if before[old.name] == nil { before[old.name] = .some(old) }
            index.remove(old.name)
        }
        var refused: [Refusal] = []
        for activity in declared {
            let what = "configured \(activity.kind.rawValue) '\(activity.name)'"
            // A1: a configured name is reserved; a client activity holding it moves aside.
            if let clash = self.activity(named: activity.name) {
                let error = moveAside(clash, for: what)
                let held = self.activity(named: activity.name) != nil
                refused.append(Refusal(error, about: clash.origin, moved: !held))
                if held { continue }
            }
            do throws(CoreError) {
                try checkCap(adding: what, by: nil, now: now)
                noteChange(activity.name)
                index.put(activity)
            } catch {
                refused.append(Refusal(error))
            }
        }
        return refused
    }

    /// What a reload could not put in force as written, and whose business it is: the owner of
    /// a client activity that moved aside (A1: only they and administrators see it), else
    /// nobody's in particular.
    public struct Refusal: Equatable, Sendable {
        public var error: CoreError
        public var uid: UInt32?
        /// A client activity moved aside and the configured one is in force: news for its
        /// owner, not a condition that lasts (T4: kept until cleared, never resolved).
        public var moved: Bool
        public init(_ error: CoreError, about origin: Origin? = nil, moved: Bool = false) {
            self.error = error
            self.moved = moved
            if case .client(let uid)? = origin { self.uid = uid }
        }
    }

    /// T4 and A1: the cap for everyone, and a member's quota (`by`: nil for the configuration).
    public func checkCap(adding what: String, by actor: Authority.Actor?, now: Date) throws(CoreError) {
        let count = liveCount(at: now) + reserved
        guard count < maxActivities else {
            throw CoreError(.activityLimit,
                "cannot add \(what): \(count) of \(maxActivities) activities are in use (MaxActivities=\(maxActivities)). "
                + "Free a slot with 'blockc stop NAME' or 'blockc schedule remove NAME' ('blockc status' lists them), "
                + "or raise MaxActivities= in \(configPath) and run 'blockc reload'")
        }
        if let actor, actor.rank <= .member { try checkQuota(adding: what, by: actor) }
    }
}
