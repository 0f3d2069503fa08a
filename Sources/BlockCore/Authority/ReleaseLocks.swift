import FoundationEssentials

/// E4: the `--lock` blocks that stand in the way of `blockd --release`, each judged as
/// `blockc stop` would judge it for root (A1, `Authority.decide`): a member's lock root and
/// administrators may stop, so `--force-members` may release past it; a lock that root or an
/// administrator set binds root too, and nothing releases past it before it ends.
public enum ReleaseLocks {
    public struct Held: Equatable, Sendable {
        public var name: String
        /// The owner's user name (`#UID` without one), or the file of a configured block.
        public var owner: String
        public var end: Date
        /// Root may stop it (a member's lock), so `--force-members` may release past it.
        public var member: Bool

        public init(name: String, owner: String, end: Date, member: Bool) {
            (self.name, self.owner, self.end, self.member) = (name, owner, end, member)
        }
    }

    /// The locked blocks still running at `now`, in the state's order.
    public static func held(in state: DaemonState, now: Date, users: UsersTable) -> [Held] {
        let root = Authority.Actor(uid: 0, rank: .root, name: "root")
        var out: [Held] = []
        for case .block(let b) in state.activities where b.locked && b.end > now {
            let owner = Authority.Owner(b.origin, people: users.person)
            let subject = Authority.Subject(name: b.name, owner: owner, locked: true, kind: "block")
            out.append(Held(name: b.name, owner: owner.shown, end: b.end, member: Authority.decide(.stop, by: root, on: subject).isAllowed))
        }
        return out
    }

    /// What `--release` says (each line after `blockd: `), and whether it goes ahead: refused
    /// while any lock holds, unless every one is a member's and `forceMembers` is given. Ends
    /// are said in local time, as from `now`.
    public static func judge(_ held: [Held], forceMembers: Bool, clock: LocalClock, now: Date) -> (lines: [String], proceed: Bool) {
        guard !held.isEmpty else { return ([], true) }
        let binding = held.filter { !$0.member }
        if forceMembers && binding.isEmpty {
            return (held.map { "releasing despite the --lock of the block '\($0.name)' of \($0.owner) (until \(clock.spoken($0.end, from: now))): --force-members; it stays registered, and blockd enforces it again when it starts" }, true)
        }
        var lines = held.map { h in
            "refusing to release: the block '\(h.name)' of \(h.owner) was started with --lock and lasts until \(clock.spoken(h.end, from: now))"
                + (h.member ? "" : "; a lock that root or an administrator set binds root too, so it must end first")
        }
        let members = held.filter(\.member)
        if !members.isEmpty {
            let stops = members.map { "'blockc stop \($0.name)'" }.joined(separator: ", ")
            lines.append("root or an administrator may stop a member's locked block: start blockd, run \(stops), stop blockd, then run blockd --release again; "
                + "or run 'blockd --release --force-members' to release despite members' locks"
                + (binding.isEmpty ? "" : " (it still waits for \(binding.map { "'\($0.name)'" }.joined(separator: ", ")))"))
        }
        return (lines, false)
    }
}
