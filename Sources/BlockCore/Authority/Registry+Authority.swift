import FoundationEssentials

/// A1 in the registry: who acts (`actor`), what they act on (`subject`), whose names are whose
/// (`key`, `resolve`) and a member's quota. The decisions themselves are `Authority.decide`.

/// Who a uid is now: their rank and the name used in sentences and in their activities' names.
public struct Person: Hashable, Sendable {
    public var rank: Rank
    public var name: String
    public init(rank: Rank, name: String) {
        (self.rank, self.name) = (rank, name)
    }
}

extension Registry {
    /// Without a user database: uid 0 is root, everyone else a member known by `#uid`.
    public static let anonymous: @Sendable (UInt32) -> Person = { uid in
        uid == 0 ? Person(rank: .root, name: "root") : Person(rank: .member, name: "#\(uid)")
    }

    /// The peer as the authority table sees it: its own rank (from its credentials, now) and
    /// its name.
    public func actor(_ peer: Peer) -> Authority.Actor {
        Authority.Actor(uid: peer.uid, rank: peer.rank, name: people(peer.uid).name)
    }

    /// The owner of an activity, with the owner's rank now.
    public func owner(_ origin: Origin) -> Authority.Owner { Authority.Owner(origin, people: people) }

    /// An existing activity as the subject of a command.
    public func subject(_ activity: Activity) -> Authority.Subject {
        let locked = if case .block(let b) = activity { b.locked } else { false }
        return Authority.Subject(name: activity.name, owner: owner(activity.origin), locked: locked, kind: activity.kind.rawValue,
                                 scope: activity.scope?.uids)
    }

    /// The same settings (cap, quota, people, reservations) over other activities: what a
    /// roll-back or a clock step rebuilds.
    public func rebuilt(_ activities: [Activity]) -> Registry {
        var r = Registry(maxActivities: maxActivities, configPath: configPath, activities: activities, clock: clock)
        (r.maxPerMember, r.people, r.reserved, r.reservedBy) = (maxPerMember, people, reserved, reservedBy)
        return r
    }

    static func check(_ decision: Authority.Decision) throws(CoreError) {
        if case .refused(let error) = decision { throw error }
    }

    /// A1: where a new activity named `typed` by `actor` goes. Names are per owner: a plain
    /// name nobody holds, or the actor's own, is used as is; a member whose name someone else
    /// holds gets their own qualified one (`kid/youtube`), so a member is never refused a name
    /// and never shadows anyone; an administrator's or root's name held by a member is theirs,
    /// and the member's activity moves aside to its qualified name (returned as `displace`,
    /// moved once every check has passed). A name another administrator, root or the
    /// configuration holds is refused. (`/` is not a name character, so a qualified name can
    /// only come from here.)
    func place(_ typed: String, command: Command, by actor: Authority.Actor) throws(CoreError) -> (key: String, displace: Activity?) {
        guard let found = activity(named: typed), !owns(found, actor.uid) else { return (typed, nil) }
        let holderIsMember = if case .client(let uid) = found.origin { people(uid).rank <= .member } else { false }
        if actor.rank <= .member {
            let own = Names.qualified(owner: actor.name, typed)
            if let mine = activity(named: own), !owns(mine, actor.uid) {
                try Registry.check(Authority.decide(command, by: actor, on: subject(mine)))
            }
            return (own, nil)
        }
        guard holderIsMember, !typed.contains("/") else {
            try Registry.check(Authority.decide(command, by: actor, on: subject(found)))
            return (typed, nil)
        }
        guard case .client(let holder) = found.origin else { return (typed, nil) }
        let aside = Names.qualified(owner: people(holder).name, typed)
        guard activity(named: aside) == nil else {
            try Registry.check(Authority.decide(command, by: actor, on: subject(found)))
            return (typed, nil)
        }
        return (typed, found)
    }

    /// A1, what a refusal may say: the activity named `name` if `actor` may know of it
    /// (`Authority.mayKnow`); else nil, and it is answered as a name nobody holds, before any
    /// other check could say whose it is, that it is locked or what kind it is.
    func known(_ name: String, to actor: Authority.Actor) -> Activity? {
        activity(named: name).flatMap { Authority.mayKnow(subject($0), by: actor) ? $0 : nil }
    }

    /// A1, did you mean: the name of a `kind` nearest to `typed` among the activities `actor`
    /// may know of (as `known` finds them), written as they would type it: a member's own
    /// `kid/youtube` as `youtube`, which `resolve` takes back to it. Blocks count while they
    /// run (`now`). Nil when none is close. O(activities), on a refusal's path only.
    func nearest(_ typed: String, kind: Activity.Kind, to actor: Authority.Actor, now: Date? = nil) -> String? {
        let own = actor.rank <= .member ? Names.qualified(owner: actor.name, "") : nil
        let names = index.entries.values.lazy.compactMap { entry -> String? in
            let a = entry.activity
            guard a.kind == kind, Authority.mayKnow(self.subject(a), by: actor) else { return nil }
            if case .block(let b) = a, let now, b.end <= now { return nil }
            if let own, a.name.hasPrefix(own) { return String(a.name.dropFirst(own.count)) }
            return a.name
        }
        return Suggest.closest(to: typed, amongUnordered: names)
    }

    func owns(_ activity: Activity, _ uid: UInt32) -> Bool {
        if case .client(let owner) = activity.origin { owner == uid } else { false }
    }

    /// The key for a new schedule or limit: it must be free, or the refusal says whose it is.
    func vacantKey(for name: String, command: Command, by actor: Authority.Actor) throws(CoreError) -> (String, Activity?) {
        let (key, displace) = try place(name, command: command, by: actor)
        guard displace == nil, let found = activity(named: key) else { return (key, displace) }
        try Registry.check(Authority.decide(command, by: actor, on: subject(found)))
        let remove = found.kind == .block ? "blockc stop \(name)" : "blockc \(found.kind.rawValue) remove \(name)"
        throw CoreError(.exists, "you already have a \(found.kind.rawValue) named '\(key)'; to change it, remove it first ('\(remove)') and add it again, or choose another name")
    }

    /// The activity a name typed by `peer` means: a qualified name as given; otherwise, for a
    /// member, their own of that name when they have one, else the plain name. A name that
    /// matches nothing as typed is taken in lower case when that matches (`stop Pinterest`
    /// after `start Pinterest`, whose block is named after the selection, `pinterest`).
    public func resolve(_ typed: String, for peer: Peer) -> String {
        let exact = resolveExactly(typed, for: peer)
        let folded = typed.lowercased()
        guard activity(named: exact) == nil, folded != typed else { return exact }
        let lower = resolveExactly(folded, for: peer)
        return activity(named: lower) != nil ? lower : exact
    }

    private func resolveExactly(_ typed: String, for peer: Peer) -> String {
        guard !typed.contains("/") else { return typed }
        let actor = actor(peer)
        guard actor.rank <= .member else { return typed }
        let own = Names.qualified(owner: actor.name, typed)
        return activity(named: own) != nil ? own : typed
    }

    /// A1: a member's own activities, grants and requests stay within `maxPerMember`, and all
    /// members' together within half the cap: whatever members do, root, administrators and
    /// the configuration keep room.
    func checkQuota(adding what: String, by actor: Authority.Actor) throws(CoreError) {
        let mine = index.ownerCounts[actor.uid, default: 0] + reservedBy[actor.uid, default: 0]
        guard mine < maxPerMember else {
            throw CoreError(.activityLimit,
                "cannot add \(what): you have \(mine) of your \(maxPerMember) activities, grants and requests in use (MaxActivitiesPerUser=\(maxPerMember)); "
                + "stop a block or remove a schedule of yours ('blockc status --all' lists them), or ask an administrator")
        }
        let share = maxActivities / 2
        var members = 0
        for (uid, n) in index.ownerCounts where people(uid).rank <= .member { members += n }
        for (uid, n) in reservedBy where people(uid).rank <= .member { members += n }
        guard members < share else {
            throw CoreError(.activityLimit,
                "cannot add \(what): members of group 'blockd' together use \(members) of the \(share) activities they may have (half of MaxActivities=\(maxActivities)); "
                + "the rest is kept for root, administrators and the configuration. Stop a block of yours, or ask an administrator")
        }
    }

    /// A1: the configuration wins a name. The client activity holding it goes on under its
    /// owner's qualified name; the returned error says so (reload reports it). When even
    /// that name is taken, the clash is refused and the configured one is not put in force.
    @discardableResult
    mutating func moveAside(_ clash: Activity, for what: String) -> CoreError {
        guard case .client(let uid) = clash.origin else {
            return CoreError(.exists, "the \(what) has the name of another configured activity; rename one of them")
        }
        let person = people(uid)
        let moved = Names.qualified(owner: person.name, clash.name)
        guard !clash.name.contains("/"), activity(named: moved) == nil else {
            return CoreError(.exists, "the \(what) has the name of \(person.name)'s \(clash.kind.rawValue) '\(clash.name)'; rename the file's activity")
        }
        noteChange(clash.name)
        noteChange(moved)
        index.remove(clash.name)
        index.put(clash.renamed(moved))
        moves.append(Move(from: clash.name, to: moved, owner: person.name, reason: what))
        return CoreError(.exists, "the \(what) takes its name from \(person.name)'s \(clash.kind.rawValue), which goes on as '\(moved)'")
    }
}

/// A1: a client activity that gave its plain name up to a configured one or an
/// administrator's, and goes on under its owner's qualified name.
public struct Move: Hashable, Sendable {
    public var from: String
    public var to: String
    public var owner: String
    /// What took the name: "configured schedule 'bedtime'", "parent's block 'youtube'".
    public var reason: String
}

extension Names {
    /// `kid/youtube`: a member's own name.
    public static func qualified(owner: String, _ name: String) -> String { "\(owner)/\(name)" }

    /// A name given to stop, remove or cancel: a plain name, or `owner/name` for one of a
    /// member's own (`kid/youtube`).
    public static func validateReference(_ reference: String, what: String) throws(CoreError) {
        let parts = reference.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return try validate(reference, what: what) }
        let owner = parts[0]
        guard let first = owner.utf8.first, first != UInt8(ascii: "."), first != UInt8(ascii: "-"), owner.utf8.count <= 32,
              owner.utf8.allSatisfy({ Scope.isNameByte($0) || $0 == UInt8(ascii: "#") }) else {
            throw CoreError(.invalidName, "'\(reference)' is not a valid \(what): before the '/' comes a user name, as in kid/youtube")
        }
        try validate(String(parts[1]), what: what)
    }
}

extension Activity {
    /// The same activity under another name.
    func renamed(_ name: String) -> Activity {
        switch self {
        case .block(var b): b.name = name; return .block(b)
        case .schedule(var s): s.name = name; return .schedule(s)
        case .limit(var l): l.name = name; return .limit(l)
        }
    }
}
