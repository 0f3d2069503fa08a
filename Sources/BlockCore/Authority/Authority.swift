/// A1: who may do what, decided in one place. Every command has one route (`Route.of`): who
/// may call it, whether it changes state, whether it loosens a block, whether the published
/// snapshot may answer it and what it acts on. One pure function (`Authority.decide`) then
/// judges an actor against a command and, for a command that acts on something that exists,
/// against that thing's owner and lock.
///
/// The family model: root and members of `blockd-admin` (parents) set blocks for others;
/// members of `blockd` (children) set blocks for themselves and may undo only their own; a
/// lock binds the member who set it, not an administrator above them.

/// How far a user is trusted, lowest first.
public enum Rank: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
    /// Connected, but in neither group (or no longer): reads their own view, and may still undo
    /// what they set while they were a member.
    case outsider
    /// Group `blockd`: blocks for themselves.
    case member
    /// Group `blockd-admin` (and the daemon's own user in an unprivileged sandbox): blocks for
    /// anyone, answers more-time requests, undoes a member's activities.
    case admin
    case root

    public static func < (a: Rank, b: Rank) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .outsider: "a user in neither group"
        case .member: "a member of group 'blockd'"
        case .admin: "a member of group 'blockd-admin'"
        case .root: "root"
        }
    }
}

extension Peer {
    /// The peer's rank, from its credentials.
    public var rank: Rank { isRoot ? .root : isAdmin ? .admin : mayModify ? .member : .outsider }
}

/// What a command is, for the authority decision and the server.
public struct Route: Equatable, Sendable {
    public enum Callers: String, Sendable {
        /// Everyone who can connect; what they see is their own view, and a command that acts
        /// on something decides by its owner.
        case anyone
        /// Members of `blockd` and above.
        case members
        /// Members of `blockd-admin` and root.
        case admins
    }

    /// Whether the command can make something less blocked.
    public enum Loosening: String, Sendable {
        case no
        /// A stop or a removal: `--lock` refuses it and `Delay=` (M2) makes it wait.
        case delayed
        /// More time: the activities' `MoreTime=` policies decide (M1, M3); a lock means no.
        case moreTime
    }

    /// What the command acts on, besides the request's own arguments.
    public enum Target: String, Sendable {
        case nothing
        /// A new activity, which must not take a name someone else holds.
        case newActivity
        /// An existing activity, by name.
        case activity
        /// A pending loosening or more-time request, by name or id.
        case waiting
    }

    public var callers: Callers
    public var modifies: Bool
    public var loosens: Loosening
    /// Whether the published snapshot may answer it, off the engine queue.
    public var snapshot: Bool
    /// Whether a member sees only their own and machine-wide things in the answer.
    public var perView: Bool
    public var target: Target

    /// The route of each command. A switch, so that a new command does not compile until it
    /// has one (and the authority table test then wants its row).
    public static func of(_ command: Command) -> Route {
        switch command {
        case .hello: Route(callers: .anyone, modifies: false, loosens: .no, snapshot: false, perView: false, target: .nothing)
        case .status, .failures, .stats, .limitList:
            Route(callers: .anyone, modifies: false, loosens: .no, snapshot: true, perView: true, target: .nothing)
        case .scheduleList, .requests, .watch, .report, .screen:
            Route(callers: .anyone, modifies: false, loosens: .no, snapshot: false, perView: true, target: .nothing)
        case .selections, .selectionShow:
            Route(callers: .anyone, modifies: false, loosens: .no, snapshot: false, perView: false, target: .nothing)
        case .start, .scheduleAdd, .limitAdd:
            Route(callers: .members, modifies: true, loosens: .no, snapshot: false, perView: false, target: .newActivity)
        case .stop, .scheduleRemove, .limitRemove:
            Route(callers: .anyone, modifies: true, loosens: .delayed, snapshot: false, perView: false, target: .activity)
        case .failuresClear:
            Route(callers: .members, modifies: true, loosens: .no, snapshot: false, perView: true, target: .nothing)
        case .more: Route(callers: .members, modifies: true, loosens: .moreTime, snapshot: false, perView: true, target: .nothing)
        case .approve: Route(callers: .admins, modifies: true, loosens: .moreTime, snapshot: false, perView: false, target: .waiting)
        case .deny: Route(callers: .admins, modifies: true, loosens: .no, snapshot: false, perView: false, target: .waiting)
        case .cancel: Route(callers: .anyone, modifies: true, loosens: .no, snapshot: false, perView: false, target: .waiting)
        // R1: anyone's agent reports their own foreground (the caller's uid, never another's).
        case .foreground: Route(callers: .anyone, modifies: true, loosens: .no, snapshot: false, perView: false, target: .nothing)
        // B2: anyone's browser reports their own web time (the caller's uid, never another's).
        case .web: Route(callers: .anyone, modifies: true, loosens: .no, snapshot: false, perView: false, target: .nothing)
        case .reload: Route(callers: .admins, modifies: true, loosens: .no, snapshot: false, perView: false, target: .nothing)
        }
    }
}

extension Command {
    public var route: Route { Route.of(self) }
}

/// The judge of A1.
public enum Authority {
    /// Who asks: their uid, their rank and the name to use in a sentence.
    public struct Actor: Hashable, Sendable {
        public var uid: UInt32
        public var rank: Rank
        public var name: String
        public init(uid: UInt32, rank: Rank, name: String) {
            (self.uid, self.rank, self.name) = (uid, rank, name)
        }
    }

    /// Who owns an existing thing: a user (with their rank now), or the configuration files.
    public enum Owner: Hashable, Sendable {
        case user(uid: UInt32, rank: Rank, name: String)
        case configuration(file: String)

        /// Who owns what came from `origin`, with their rank now (`people` says who a uid is).
        public init(_ origin: Origin, people: (UInt32) -> Person) {
            switch origin {
            case .config(let file): self = .configuration(file: file)
            case .client(let uid):
                let p = people(uid)
                self = .user(uid: uid, rank: p.rank, name: p.name)
            }
        }

        /// The name used in sentences: the user's, or the file's.
        public var shown: String {
            switch self {
            case .user(_, _, let name): name
            case .configuration(let file): file
            }
        }
    }

    /// The existing thing a command acts on: an activity, or a pending loosening or request.
    public struct Subject: Hashable, Sendable {
        public var name: String
        public var owner: Owner
        public var locked: Bool
        /// What it is, for the sentence: "block", "schedule", "limit", "request", "delayed stop".
        public var kind: String
        /// The uids it is for (nil: the whole machine); a request or delayed stop is its
        /// asker's alone. What a member may be told of it follows (`mayKnow`).
        public var scope: [UInt32]?
        public init(name: String, owner: Owner, locked: Bool = false, kind: String, scope: [UInt32]? = nil) {
            (self.name, self.owner, self.locked, self.kind, self.scope) = (name, owner, locked, kind, scope)
        }
    }

    public enum Decision: Equatable, Sendable {
        case allowed
        case refused(CoreError)

        public var isAllowed: Bool { self == .allowed }
    }

    /// Whether `actor` may run `command` on `subject` (nil: it acts on nothing that exists, or
    /// on a name nobody holds yet). Pure; the refusal says who owns what and what to do.
    public static func decide(_ command: Command, by actor: Actor, on subject: Subject? = nil) -> Decision {
        let route = command.route
        switch route.callers {
        case .anyone: break
        case .members where actor.rank < .member:
            return .refused(CoreError(.permissionDenied, "only root and members of group 'blockd' may use '\(command)'; ask an administrator to run 'usermod -aG blockd \(actor.name)', then log in again"))
        case .admins where actor.rank < .admin:
            return .refused(CoreError(.permissionDenied, "only root and members of group 'blockd-admin' may use '\(command)'; ask one of them"))
        case .members, .admins: break
        }
        guard let subject else { return .allowed }
        if route.target != .newActivity, !mayKnow(subject, by: actor) { return .refused(unknown(subject.kind, subject.name)) }
        switch route.target {
        case .nothing: return .allowed
        case .newActivity: return taken(subject, by: actor)
        case .activity: return undo(command, subject, by: actor)
        case .waiting: return answerWaiting(command, subject, by: actor)
        }
    }

    /// A1 with screen time: a screen-time limit or allowed hours that suspend or power off the
    /// machine act on everyone at it, so only root and administrators add them; a member's may
    /// lock or end their own sessions only.
    public static func mayAct(_ action: SessionAction, by actor: Actor) -> Decision {
        switch action {
        case .lock, .logout: return .allowed
        case .suspend, .poweroff:
            guard actor.rank < .admin else { return .allowed }
            return .refused(CoreError(.permissionDenied, "--action \(action.rawValue) acts on the whole machine, everyone at it: only root and members of group 'blockd-admin' may add a screen-time limit or allowed hours that do it; use --action lock or logout for your own sessions"))
        }
    }

    /// A1, what a refusal may say: a member (or a user in neither group) is told nothing of
    /// what is neither theirs nor machine-wide; administrators and root see everything. The
    /// same rule as a member's views (`Scope.visible`).
    public static func mayKnow(_ subject: Subject, by actor: Actor) -> Bool {
        guard actor.rank < .admin, let scope = subject.scope else { return true }
        if case .user(let uid, _, _) = subject.owner, uid == actor.uid { return true }
        return scope.contains(actor.uid)
    }

    /// The refusal for a name nobody holds, by kind: also what a member is told of what they
    /// may not know of (`mayKnow`), so the two cannot be told apart. `near` is the name the
    /// caller may have meant, found among those they may know of only (`Registry.nearest`):
    /// the suggestion tells nobody of another's activity.
    public static func unknown(_ kind: String, _ name: String, near: String? = nil) -> CoreError {
        let meant = near.map { "; did you mean '\($0)'?" } ?? ";"
        return switch kind {
        case "block": CoreError(.notFound, "no block named '\(name)'\(meant) 'blockc status' lists the active ones")
        case "schedule": CoreError(.notFound, "no schedule named '\(name)'\(meant) 'blockc schedule list' lists them")
        case "limit": CoreError(.notFound, "no limit named '\(name)'\(meant) 'blockc limit list' lists them")
        default: CoreError(.notFound, "nothing named '\(name)' is waiting: no delayed stop or removal and no pending request\(meant) 'blockc status' shows what waits")
        }
    }

    /// A new activity never joins or extends one that someone else owns (T10 extends one's
    /// own only), and never takes a configured name.
    static func taken(_ subject: Subject, by actor: Actor) -> Decision {
        switch subject.owner {
        case .configuration(let file):
            return .refused(CoreError(.exists, "'\(subject.name)' is the name of the configured \(subject.kind) in \(file); give yours another name with --name"))
        case .user(let uid, _, let name):
            guard uid != actor.uid else { return .allowed }
            return .refused(CoreError(.exists, "'\(subject.name)' is \(name)'s \(subject.kind), which only \(name) can extend; give yours another name with --name"))
        }
    }

    /// Stopping a block or removing a schedule or limit: its owner, or someone ranked above the
    /// owner who is root or an administrator. A lock binds its owner and their peers; it binds
    /// an administrator only when an administrator or root set it.
    static func undo(_ command: Command, _ subject: Subject, by actor: Actor) -> Decision {
        let verb = command == .stop ? "stop" : "remove"
        guard case .user(let uid, let ownerRank, let ownerName) = subject.owner else {
            guard case .configuration(let file) = subject.owner else { return .allowed }
            return .refused(CoreError(.permissionDenied, "the \(subject.kind) '\(subject.name)' comes from \(file); delete that file and run 'blockc reload'"))
        }
        let own = uid == actor.uid
        let above = actor.rank >= .admin && actor.rank > max(ownerRank, .member)
        if subject.locked && !(above && ownerRank <= .member) {
            let who = ownerRank <= .member ? " (root or a member of group 'blockd-admin' may stop it)" : ""
            return .refused(CoreError(.locked, "'\(subject.name)' was started with --lock and cannot be stopped early; it ends at its set time\(who)"))
        }
        if own || above { return .allowed }
        let others = ownerRank <= .member ? "\(ownerName), root or a member of group 'blockd-admin'" : ownerRank == .admin ? "\(ownerName) or root" : "root"
        return .refused(CoreError(.permissionDenied, "the \(subject.kind) '\(subject.name)' belongs to \(ownerName); only \(others) may \(verb) it"))
    }

    /// Cancelling a delayed loosening or withdrawing a request: who asked, or an administrator
    /// above them. Approving and denying: any administrator (the callers' check).
    static func answerWaiting(_ command: Command, _ subject: Subject, by actor: Actor) -> Decision {
        guard command == .cancel, case .user(let uid, let ownerRank, let ownerName) = subject.owner else { return .allowed }
        if uid == actor.uid || (actor.rank >= .admin && actor.rank > max(ownerRank, .member)) { return .allowed }
        return .refused(CoreError(.permissionDenied, "the \(subject.kind) '\(subject.name)' was asked for by \(ownerName); only \(ownerName), root or a member of group 'blockd-admin' may cancel it"))
    }
}
