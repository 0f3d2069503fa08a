/// A1 for people: the authority table of docs/USERS.md, rendered from the routes and from
/// `Authority.decide` itself, so the page cannot say what the daemon does not do (a test
/// compares the two).
public enum AuthorityTable {
    /// Every command: who may call it, whether it loosens, whether the snapshot answers it,
    /// what it acts on, whether a member sees only their own in the answer, and what a refusal
    /// may tell a member.
    public static var routes: String {
        var lines = ["| command | who may call it | loosens | answered from the snapshot | acts on | a member sees | what a refusal may say to a member |",
                     "|---|---|---|---|---|---|---|"]
        for command in Command.allCases {
            let r = command.route
            let who = switch r.callers {
            case .anyone: "anyone who can connect"
            case .members: "members of `blockd`, administrators, root"
            case .admins: "administrators (`blockd-admin`), root"
            }
            let loosens = switch r.loosens {
            case .no: "no"
            case .delayed: "yes: `--lock` refuses, `Delay=` waits"
            case .moreTime: "yes: `MoreTime=` decides"
            }
            let target = switch r.target {
            case .nothing: "—"
            case .newActivity: "a new activity (never another's)"
            case .activity: "an existing activity: see below"
            case .waiting: "a pending request or delayed loosening"
            }
            lines.append("| `\(command)` | \(who) | \(loosens) | \(r.snapshot ? "yes" : "no") | \(target) | \(r.perView ? "their own and the machine-wide" : r.modifies ? "—" : "everything") | \(refusal(r)) |")
        }
        return lines.joined(separator: "\n")
    }

    /// A1, what a refusal may say: what a member (or a user in neither group) is told of
    /// things that are not theirs. Nothing that is neither theirs nor machine-wide is named:
    /// it is answered as a name nobody holds (`Registry.known`).
    static func refusal(_ r: Route) -> String {
        if r.callers == .admins { return "only that it is not theirs to call" }
        switch r.target {
        case .nothing: return r.perView ? "nothing of another's: the answer is their view" : "—"
        case .newActivity: return "nothing of another's: a name another holds becomes theirs (`kid/NAME`), the answer is what was added"
        case .activity: return "of another's that is not machine-wide, as of a name nobody holds"
        case .waiting: return "of another's request or delayed stop, as of nothing waiting by that name"
        }
    }

    /// Who may stop a block or remove a schedule or limit, by the actor's rank and the owner,
    /// unlocked and with `--lock`: what `Authority.decide` answers.
    public static var owners: String {
        let columns: [(String, (Authority.Actor) -> Authority.Owner, [UInt32]?)] = [
            ("their own", { .user(uid: $0.uid, rank: $0.rank, name: $0.name) }, nil),
            ("a member's", { _ in .user(uid: 1001, rank: .member, name: "kid") }, nil),
            ("another administrator's", { _ in .user(uid: 1002, rank: .admin, name: "parent2") }, nil),
            ("root's", { _ in .user(uid: 0, rank: .root, name: "root") }, nil),
            ("configured", { _ in .configuration(file: "/etc/blockd/schedules.d/x.conf") }, nil),
            ("a member's, for them alone", { _ in .user(uid: 1001, rank: .member, name: "kid") }, [1001]),
        ]
        var lines = ["| who asks | " + columns.map(\.0).joined(separator: " | ") + " |",
                     "|---|" + String(repeating: "---|", count: columns.count)]
        let actors: [(String, Authority.Actor)] = [
            ("a member", Authority.Actor(uid: 1003, rank: .member, name: "kid2")),
            ("an administrator", Authority.Actor(uid: 1000, rank: .admin, name: "parent")),
            ("root", Authority.Actor(uid: 0, rank: .root, name: "root")),
        ]
        for (label, actor) in actors {
            var cells: [String] = []
            for (_, owner, scope) in columns {
                let o = owner(actor)
                if case .user(0, _, _) = o, actor.rank == .root { cells.append("= their own"); continue }
                let plain = Authority.decide(.stop, by: actor, on: Authority.Subject(name: "x", owner: o, kind: "block", scope: scope))
                let locked = Authority.decide(.stop, by: actor, on: Authority.Subject(name: "x", owner: o, locked: true, kind: "block", scope: scope))
                cells.append(cell(plain, locked, configured: { if case .configuration = o { true } else { false } }()))
            }
            lines.append("| \(label) | " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    static func cell(_ plain: Authority.Decision, _ locked: Authority.Decision, configured: Bool) -> String {
        if configured { return plain.isAllowed ? "yes" : "no: delete its file" }
        if case .refused(let e) = plain, e.code == .notFound { return "no: told no such name" }
        switch (plain.isAllowed, locked.isAllowed) {
        case (true, true): return "yes, locked too"
        case (true, false): return "yes; locked: no"
        default: return "no"
        }
    }
}
