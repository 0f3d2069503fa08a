import FoundationEssentials

/// Per-user blocks at the engine's edges (Scope.swift): names become uids when an activity is
/// accepted, §5 decides who may scope to whom, and what is blocked for whom is derived from
/// the reasons of the union, which itself stays per selection (T5).
extension Core {
    /// A1: a user as texts name them: `kid`, `root`, or `#1001` for a uid without a name.
    public func who(_ uid: UInt32) -> String { users.person(uid).name }

    /// A1: `uid` as a peer with its rank now.
    func peerNow(_ uid: UInt32) -> Peer { users.peer(uid) }

    /// The scope a client's new activity gets: `requested` resolved to uids and checked
    /// against the caller's rights (a plain member of `blockd` gets themselves); a selection
    /// with URL paths cannot be scoped (E8: browser policies are machine-wide).
    func grantedScope(_ requested: Scope?, selections: [String], peer: Peer) throws(CoreError) -> Scope? {
        var asked: Scope?
        if let requested { asked = try users.resolve(requested.names) }
        let scope = try Scope.authorize(asked, peer: peer, own: users.own(peer.uid))
        for name in selections { try config.catalog.resolve(name).checkScopable(scope) }
        return scope
    }

    /// Declared activities with their `Users=` resolved; one whose users cannot be resolved is
    /// not put in force, and the failure says why (T4: never swallowed).
    mutating func resolvingScopes(_ declared: [Activity], now: Date,
                                  problems: inout [(error: CoreError, uid: UInt32?, activity: String?)]) -> [Activity] {
        declared.compactMap { activity in
            guard let scope = activity.scope else { return activity }
            do throws(CoreError) {
                let resolved = try users.resolve(scope.names)
                for name in activity.selections {
                    if let selection = try? config.catalog.resolve(name) { try selection.checkScopable(resolved) }
                }
                return activity.scoped(resolved).defaultingMoreTime(MoreTimePolicy.familyDefault(scope: resolved, setBy: nil))  // A1
            } catch {
                let message = "the configured \(activity.kind.rawValue) '\(activity.name)' is not in force: Users=\(scope.names.joined(separator: " ")): \(error.message)"
                problems.append((CoreError(.invalidConfig, message), nil, activity.name))  // recorded by the caller (T4)
                return nil
            }
        }
    }

    /// The targets to enforce with whom each is blocked for (nil: everyone), from its reasons.
    /// W2: one blocked for some users alone is enforced, for each of them, without what their
    /// `users.d/` files always allow (users named by the same files share one target).
    func scoped(_ targets: [Selection], reasons: (String) -> [Reason]) -> [Selection] {
        targets.flatMap { target -> [Selection] in
            var s = target
            s.users = Core.users(reasons(target.name))
            guard let uids = s.users, !config.userAlwaysAllowed.isEmpty else { return [s] }
            let groups = UserAlwaysAllowed.groups(uids, files: config.userAlwaysAllowed, everyone: config.alwaysAllowed) { name in
                Set((try? users.resolve([name]))?.uids ?? [])  // a name gone from the machine names no one
            }
            return groups.map { group in
                var each = group.always == config.alwaysAllowed ? s : group.always.applied(to: s)
                each.users = group.uids
                return each
            }
        }
    }

    public static func users(_ reasons: [Reason]) -> [UInt32]? {
        Policy.Blocked(selection: "", reasons: reasons, until: nil).users
    }

    /// Whether a selection still blocked is blocked for other people than when last applied
    /// (a machine-wide reason ended and a per-user one stays, ...): enforcement must move it.
    /// Looks only at the selections a reconcile looks at (`candidates`).
    func scopesChanged(_ candidates: Set<String>) -> Bool {
        candidates.contains { name in
            guard let was = applied[name], let now = blockedReasons(name) else { return false }
            return Core.users(now) != Core.users(was)
        }
    }

    // MARK: Who sees what (§5: a member cannot see another user's blocks)

    /// The uid whose view `status` gives (nil: everyone's). Only root and members of
    /// `blockd-admin` see other people's.
    public func viewer(_ view: StatusView, peer: Peer) throws(CoreError) -> UInt32? {
        let admin = peer.isRoot || peer.isAdmin
        switch view {
        case .caller: return peer.uid
        case .allUsers:
            guard admin else { throw Core.othersDenied }
            return nil
        case .user(let name):
            guard !name.hasPrefix("@") else { throw CoreError(.usage, "status --user takes a user name, not a group") }
            let uid = try users.resolve([name]).uids[0]
            guard admin || uid == peer.uid else { throw Core.othersDenied }
            return uid
        }
    }

    /// U2: whose view a `status` gives. Without `--user`, root and administrators see every
    /// user's blocks (a parent's plain `blockc status` shows the child's bedtime, for whom it
    /// is); `--user NAME` gives what NAME sees, their own name included. A member sees theirs.
    public func statusViewer(_ view: StatusView, peer: Peer) throws(CoreError) -> UInt32? {
        if view == .caller && Core.privateView(peer) == nil { return nil }
        return try viewer(view, peer: peer)
    }

    public static let othersDenied = CoreError(.permissionDenied, "only root and members of group 'blockd-admin' may see other users' blocks; 'blockc status' shows yours")

    /// Whether `peer` may see `activity` in lists (schedule list, limit list).
    public func listed(_ activity: Activity, to peer: Peer) -> Bool {
        peer.isRoot || peer.isAdmin || Scope.visible(activity.scope, origin: activity.origin, to: peer.uid)
    }

    /// U2: what `status` shows one user: the selections blocked for them, each with its end as
    /// the activities that apply to them have it; the activities they may see (those blocking
    /// them, or with `all` every one); and of what is applied and not enforced, their selections.
    public struct UserStatus: Equatable, Sendable {
        public var blocked: [Policy.Blocked]
        public var activities: [Activity]
        public var applied: [String]
        public var notEnforced: JSON
        /// Of their selections, those blocked in part, and what is left off.
        public var partial: JSON = .array([])
    }

    public func statusView(for viewer: UInt32, all: Bool, now: Date) -> UserStatus {
        let every = activitiesForDisplay(at: now)
        return statusView(for: viewer, all: all, now: now, every: every, blocked: blocked(at: now, every: every))
    }

    /// `statusView` from every activity and what is blocked for everyone at `now`
    /// (`blocked(at:every:)`), when the caller has them already.
    public func statusView(for viewer: UInt32, all: Bool, now: Date, every: [Activity], blocked: [Policy.Blocked]) -> UserStatus {
        let theirs = every.filter { a in a.scope.map { $0.contains(viewer) } ?? true }
        let desired = blocked.compactMap { $0.seen(by: viewer) { policy.until($0, from: now, activities: theirs) } }
        // M3: what a grant lifts stays active (`liftedActivities`), for its asker too.
        let theirNames = Set(theirs.map(\.name))
        let active = Set(desired.flatMap { $0.reasons.map(\.activity) }).union(liftedActivities.filter(theirNames.contains))
        let mine = Set(desired.map(\.selection))
        return UserStatus(blocked: desired,
                          activities: every.filter { Scope.visible($0.scope, origin: $0.origin, to: viewer) && (all || active.contains($0.name)) }
                              .map { $0.seen(by: viewer) },
                          applied: applied.keys.sorted().filter(mine.contains), notEnforced: notEnforcedJSON(desired.map(\.selection)),
                          partial: partialJSON(desired.map(\.selection)))
    }

    /// T5 with M3: what `every` blocks at `now`, less what grants lift; worked out from the
    /// activities themselves, for the answers that list them all.
    public func blocked(at now: Date, every: [Activity]) -> [Policy.Blocked] {
        policy.lifting(policy.desired(at: now, activities: every), grants: book.grants, at: now)
    }

    /// A1: status's counts as a member sees them: the activities they may see (their own,
    /// those for them and the machine-wide ones), not everyone's.
    public mutating func counts(visibleTo uid: UInt32, now: Date) -> StatusCounts {
        let seen = activitiesForDisplay(at: now).filter { Scope.visible($0.scope, origin: $0.origin, to: uid) }
        registry.advance(to: now)
        let active = seen.filter { a in a.selections.contains { registry.index.reasons(for: $0)?.contains { $0.activity == a.name } ?? false } }
        func n(_ kind: Activity.Kind) -> Int { seen.filter { $0.kind == kind }.count }
        return StatusCounts(activities: seen.count, active: active.count, blocks: n(.block), schedules: n(.schedule), limits: n(.limit))
    }

    /// A1: the uid whose own things a caller sees (a member, or a user in neither group); nil
    /// for root and administrators, who see everyone's.
    public static func privateView(_ peer: Peer) -> UInt32? { peer.rank >= .admin ? nil : peer.uid }
}
