import BlockCore
import Testing

/// A1: who may do what, as a table. Every command must have its row here: a command added to
/// `Command` without one fails `everyCommandHasARow`.
@Suite("A1: the authority table")
struct AuthorityTests {
    typealias Actor = Authority.Actor
    static let outsider = Actor(uid: 1005, rank: .outsider, name: "guest")
    static let member = Actor(uid: 1001, rank: .member, name: "kid")
    static let admin = Actor(uid: 1000, rank: .admin, name: "parent")
    static let root = Actor(uid: 0, rank: .root, name: "root")
    static let actors = [outsider, member, admin, root]

    /// Who may call each command at all: outsider, member, administrator, root.
    static let callers: [Command: String] = [
        .start: "-+++", .stop: "++++", .status: "++++",
        .scheduleAdd: "-+++", .scheduleRemove: "++++", .scheduleList: "++++",
        .selections: "++++", .selectionShow: "++++",
        .failures: "++++", .failuresClear: "-+++",
        .limitAdd: "-+++", .limitRemove: "++++", .limitList: "++++",
        .more: "-+++", .requests: "++++", .approve: "--++", .deny: "--++", .cancel: "++++",
        .stats: "++++", .report: "++++", .watch: "++++", .reload: "--++", .hello: "++++",
        .foreground: "++++",  // R1: anyone's agent, for their own uid only
    ]

    @Test("A1: every command has a row, and the route says who may call it")
    func everyCommandHasARow() {
        for command in Command.allCases {
            guard let row = Self.callers[command] else {
                Issue.record("'\(command)' has no row in the authority table: add it here and in docs/USERS.md")
                continue
            }
            for (actor, mark) in zip(Self.actors, row) {
                let decision = Authority.decide(command, by: actor)
                #expect(decision.isAllowed == (mark == "+"), "\(command) by \(actor.rank): \(decision)")
                if case .refused(let e) = decision { #expect(e.code == .permissionDenied && e.message.contains("'\(command)'")) }
            }
        }
    }

    @Test("A1: the routes that change state are the ones that modify; loosenings are stop, removals and more time")
    func routes() {
        for command in Command.allCases {
            let r = command.route
            #expect(r.modifies == [.start, .stop, .scheduleAdd, .scheduleRemove, .failuresClear, .limitAdd, .limitRemove,
                                   .more, .approve, .deny, .cancel, .reload, .foreground].contains(command), "\(command)")
            #expect((r.loosens == .delayed) == [.stop, .scheduleRemove, .limitRemove].contains(command), "\(command)")
            #expect((r.loosens == .moreTime) == [.more, .approve].contains(command), "\(command)")
            #expect(!(r.snapshot && r.modifies), "a change is never answered from the snapshot: \(command)")
        }
    }

    /// Undoing (stop, schedule remove, limit remove), by actor and owner: `+` allowed, `p`
    /// refused as permission-denied, `l` as locked. Owners: the actor themselves, a member, an
    /// administrator, root, the configuration.
    static let undo: [(Actor, unlocked: String, locked: String)] = [
        //           self member admin root config
        (outsider, "+pppp", "llll-"),
        (member, "+pppp", "llll-"),
        (admin, "++ppp", "l+ll-"),
        (root, "++++p", "l+ll-"),
    ]

    static func owners(of actor: Actor) -> [Authority.Owner] {
        [.user(uid: actor.uid, rank: actor.rank, name: actor.name), .user(uid: 1003, rank: .member, name: "kid2"),
         .user(uid: 1002, rank: .admin, name: "parent2"), .user(uid: 0, rank: .root, name: "root"), .configuration(file: "/etc/blockd/schedules.d/b.conf")]
    }

    static func code(_ d: Authority.Decision) -> Character {
        switch d {
        case .allowed: "+"
        case .refused(let e) where e.code == .permissionDenied: "p"
        case .refused(let e) where e.code == .locked: "l"
        case .refused(let e) where e.code == .exists: "e"
        case .refused: "?"
        }
    }

    @Test("A1: who may stop a block or remove a schedule or limit, locked or not",
          arguments: [Command.stop, .scheduleRemove, .limitRemove])
    func undoing(_ command: Command) {
        for (actor, unlocked, locked) in Self.undo {
            for (i, owner) in Self.owners(of: actor).enumerated() {
                let plain = Authority.decide(command, by: actor, on: .init(name: "b", owner: owner, kind: "block"))
                #expect(Self.code(plain) == Array(unlocked)[i], "\(command) by \(actor.rank) of owner \(owner): \(plain)")
                guard Array(locked)[i] != "-" else { continue }  // configured activities are never locked blocks
                let l = Authority.decide(command, by: actor, on: .init(name: "b", owner: owner, locked: true, kind: "block"))
                #expect(Self.code(l) == Array(locked)[i], "\(command) by \(actor.rank) of locked owner \(owner): \(l)")
            }
        }
    }

    @Test("A1: a new activity never joins one another uid owns, nor takes a configured name",
          arguments: [Command.start, .scheduleAdd, .limitAdd])
    func ownershipNeverMerged(_ command: Command) {
        for actor in [Self.member, Self.admin, Self.root] {
            let codes = String(Self.owners(of: actor).map { Self.code(Authority.decide(command, by: actor, on: .init(name: "youtube", owner: $0, kind: "block"))) })
            let expected = actor.rank == .root ? "+ee+e" : "+eeee"  // root's own is root's
            #expect(codes == expected, "\(command) by \(actor.rank)")
        }
    }

    @Test("A1: a pending request or delayed loosening is cancelled by who asked or an administrator above them")
    func cancelling() {
        for (actor, expected) in [(Self.member, "+ppp"), (Self.admin, "++pp"), (Self.root, "+++" + "+")] {
            let codes = String(Self.owners(of: actor).prefix(4).map { Self.code(Authority.decide(.cancel, by: actor, on: .init(name: "r1", owner: $0, kind: "request"))) })
            #expect(codes == expected, "cancel by \(actor.rank)")
        }
    }

    @Test("A1: refusals say who owns what and what to do instead")
    func sentences() {
        let kidsBlock = Authority.Subject(name: "kid/youtube", owner: .user(uid: 1001, rank: .member, name: "kid"), kind: "block")
        #expect(Authority.decide(.stop, by: Actor(uid: 1003, rank: .member, name: "kid2"), on: kidsBlock)
                == .refused(CoreError(.permissionDenied, "the block 'kid/youtube' belongs to kid; only kid, root or a member of group 'blockd-admin' may stop it")))
        let parents = Authority.Subject(name: "youtube", owner: .user(uid: 1000, rank: .admin, name: "parent"), locked: true, kind: "block")
        #expect(Authority.decide(.stop, by: Self.member, on: parents)
                == .refused(CoreError(.locked, "'youtube' was started with --lock and cannot be stopped early; it ends at its set time")))
        let bedtime = Authority.Subject(name: "bedtime", owner: .configuration(file: "/etc/blockd/schedules.d/bedtime.conf"), kind: "schedule")
        #expect(Authority.decide(.scheduleAdd, by: Self.admin, on: bedtime)
                == .refused(CoreError(.exists, "'bedtime' is the name of the configured schedule in /etc/blockd/schedules.d/bedtime.conf; give yours another name with --name")))
        #expect(Authority.decide(.reload, by: Self.member)
                == .refused(CoreError(.permissionDenied, "only root and members of group 'blockd-admin' may use 'reload'; ask one of them")))
    }
}
