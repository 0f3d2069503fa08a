import BlockCore
import Foundation
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
        .stats: "++++", .report: "++++", .screen: "++++", .watch: "++++", .reload: "--++", .hello: "++++",
        .foreground: "++++",  // R1: anyone's agent, for their own uid only
        .web: "++++",  // B2: anyone's browser, for their own uid only
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
                                   .more, .approve, .deny, .cancel, .reload, .foreground, .web].contains(command), "\(command)")
            #expect((r.loosens == .delayed) == [.stop, .scheduleRemove, .limitRemove].contains(command), "\(command)")
            #expect((r.loosens == .moreTime) == [.more, .approve].contains(command), "\(command)")
            #expect(!(r.snapshot && r.modifies), "a change is never answered from the snapshot: \(command)")
        }
    }

    /// Undoing (stop, schedule remove, limit remove), by actor and owner: `+` allowed, `p`
    /// refused as permission-denied, `l` as locked, `n` as a name nobody holds (A1: what a
    /// refusal may say). Owners: the actor themselves, a member, an administrator, root, the
    /// configuration, and a member's activity for that member alone.
    static let undo: [(Actor, unlocked: String, locked: String)] = [
        //           self member admin root config member-alone
        (outsider, "+ppppn", "llll-n"),
        (member, "+ppppn", "llll-n"),
        (admin, "++ppp+", "l+ll-+"),
        (root, "++++p+", "l+ll-+"),
    ]

    static func owners(of actor: Actor) -> [Authority.Owner] { subjects(of: actor).map(\.owner) }

    /// Each owner with the uids its activity is for (nil: the whole machine).
    static func subjects(of actor: Actor) -> [(owner: Authority.Owner, scope: [UInt32]?)] {
        [(.user(uid: actor.uid, rank: actor.rank, name: actor.name), nil), (.user(uid: 1003, rank: .member, name: "kid2"), nil),
         (.user(uid: 1002, rank: .admin, name: "parent2"), nil), (.user(uid: 0, rank: .root, name: "root"), nil),
         (.configuration(file: "/etc/blockd/schedules.d/b.conf"), nil), (.user(uid: 1003, rank: .member, name: "kid2"), [1003])]
    }

    static func code(_ d: Authority.Decision) -> Character {
        switch d {
        case .allowed: "+"
        case .refused(let e) where e.code == .permissionDenied: "p"
        case .refused(let e) where e.code == .locked: "l"
        case .refused(let e) where e.code == .exists: "e"
        case .refused(let e) where e.code == .notFound: "n"
        case .refused: "?"
        }
    }

    @Test("A1: who may stop a block or remove a schedule or limit, locked or not",
          arguments: [Command.stop, .scheduleRemove, .limitRemove])
    func undoing(_ command: Command) {
        for (actor, unlocked, locked) in Self.undo {
            for (i, (owner, scope)) in Self.subjects(of: actor).enumerated() {
                let plain = Authority.decide(command, by: actor, on: .init(name: "b", owner: owner, kind: "block", scope: scope))
                #expect(Self.code(plain) == Array(unlocked)[i], "\(command) by \(actor.rank) of owner \(owner): \(plain)")
                guard Array(locked)[i] != "-" else { continue }  // configured activities are never locked blocks
                let l = Authority.decide(command, by: actor, on: .init(name: "b", owner: owner, locked: true, kind: "block", scope: scope))
                #expect(Self.code(l) == Array(locked)[i], "\(command) by \(actor.rank) of locked owner \(owner): \(l)")
            }
        }
    }

    @Test("A1: a new activity never joins one another uid owns, nor takes a configured name",
          arguments: [Command.start, .scheduleAdd, .limitAdd])
    func ownershipNeverMerged(_ command: Command) {
        for actor in [Self.member, Self.admin, Self.root] {
            let codes = String(Self.owners(of: actor).map { Self.code(Authority.decide(command, by: actor, on: .init(name: "youtube", owner: $0, kind: "block"))) })
            let expected = actor.rank == .root ? "+ee+ee" : "+eeeee"  // root's own is root's
            #expect(codes == expected, "\(command) by \(actor.rank)")
        }
    }

    @Test("A1, screen time: a screen-time limit may lock or end one's own sessions; suspending or powering off the machine is for administrators and root",
          arguments: [(SessionAction.lock, "+++"), (.logout, "+++"), (.suspend, "p++"), (.poweroff, "p++")])
    func sessionActions(_ action: SessionAction, _ expected: String) {
        let codes = String([Self.member, Self.admin, Self.root].map { Self.code(Authority.mayAct(action, by: $0)) })
        #expect(codes == expected, "limit-add --session --action \(action.rawValue)")
    }

    @Test("A1: a pending request or delayed loosening is cancelled by who asked or an administrator above them")
    func cancelling() {
        for (actor, expected) in [(Self.member, "+ppp"), (Self.admin, "++pp"), (Self.root, "+++" + "+")] {
            let codes = String(Self.owners(of: actor).prefix(4).map { Self.code(Authority.decide(.cancel, by: actor, on: .init(name: "r1", owner: $0, kind: "request"))) })
            #expect(codes == expected, "cancel by \(actor.rank)")
        }
        // What waits is its asker's alone: to another member it is nothing waiting (A1).
        let kid2s = Authority.Subject(name: "r1", owner: .user(uid: 1003, rank: .member, name: "kid2"), kind: "request", scope: [1003])
        #expect(Self.code(Authority.decide(.cancel, by: Self.member, on: kid2s)) == "n")
        #expect(Self.code(Authority.decide(.cancel, by: Self.admin, on: kid2s)) == "+")
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

    /// What a refusal may say (the routes table's last column), tried on the core for every
    /// command as a member, `kid`, against what their sibling `kid2` holds: an activity named
    /// `zzsecret` of each kind for kid2 alone, kid2's pending request, and kid2's names.
    /// `.activity` and `.waiting` routes: the refusal about kid2's is the one about a name
    /// nobody holds. `.newActivity`: the answer is kid's own addition. `.nothing`: the answer
    /// names nothing of kid2's. A command the core does not answer on its own is listed with
    /// the suite that proves its view.
    static let elsewhere: [Command: String] = [
        .status: "answered from the snapshot or the engine per view: UserScopeTests, FamilyEngineTests",
        .failures: "answered from the snapshot per view: FamilyEngineTests",
        .stats: "answered from the snapshot per view: FamilyEngineTests",
        .limitList: "answered from the snapshot or the engine per view: LimitEngineTests",
        .watch: "answered by the connection per view: WatchScopeTests",
    ]

    @Test("A1: what a refusal may say, for every route: nothing of what is neither the member's own nor machine-wide")
    func refusalsForEveryRoute() throws {
        let users = FakeEdge.users(["kid": 1001, "parent": 1000, "kid2": 1003], groups: ["blockd-admin": [1000]])
        let kid = Peer(uid: 1001, mayModify: true), kid2 = Peer(uid: 1003, mayModify: true)
        var parent = Peer(uid: 1000, mayModify: true)
        parent.isAdmin = true
        func fresh() throws -> (FakeEdge, String) {
            var d = FakeEdge(at: "2026-11-29T20:00:00+09:00", users: users)
            for line in [#"start {"selections":["reddit"],"seconds":3600,"name":"zzsecret","lock":true}"#,
                         #"schedule-add {"name":"zzsecret-s","window":"19:00-23:00","selections":["steam"]}"#,
                         #"limit-add {"name":"zzsecret-l","seconds":2700,"selections":["steam"]}"#] {
                _ = try #require(ok(d.run(line, as: kid2)))
            }
            _ = try #require(ok(d.run(#"schedule-add {"name":"zzsecret-p","window":"19:00-23:00","selections":["discord"],"users":["kid2"]}"#, as: parent)))
            let asked = try #require(ok(d.run(#"more {"selection":"discord","seconds":300,"reason":"zzsecret"}"#, as: kid2)))
            return (d, try #require(asked["id"]?.string))
        }
        func text(_ r: Response) -> String {
            switch r {
            case .ok(let o): JSON.object(o).serialized()
            case .error(let e): "\(e.code.rawValue) \(e.message)"
            default: r.line
            }
        }
        for command in Command.allCases {
            var (d, id) = try fresh()
            let route = command.route
            // The request kid sends about kid2's (theirs) and about nothing (none).
            let pair: (theirs: String, none: String)? = switch command {
            case .stop: (#"stop {"name":"zzsecret"}"#, #"stop {"name":"zznone"}"#)
            case .scheduleRemove: (#"schedule-remove {"name":"zzsecret-s"}"#, #"schedule-remove {"name":"zznone"}"#)
            case .limitRemove: (#"limit-remove {"name":"zzsecret-l"}"#, #"limit-remove {"name":"zznone"}"#)
            case .cancel: (#"cancel {"name":"\#(id)"}"#, #"cancel {"name":"mzzzzzzzzzz"}"#)
            case .approve: (#"approve {"id":"\#(id)"}"#, #"approve {"id":"mzzzzzzzzzz"}"#)
            case .deny: (#"deny {"id":"\#(id)"}"#, #"deny {"id":"mzzzzzzzzzz"}"#)
            case .start: (#"start {"selections":["youtube"],"seconds":600,"name":"zzsecret"}"#, "")
            case .scheduleAdd: (#"schedule-add {"name":"zzsecret-s","window":"05:00-06:00","selections":["youtube"]}"#, "")
            case .limitAdd: (#"limit-add {"name":"zzsecret-l","seconds":600,"selections":["discord"]}"#, "")
            case .scheduleList: ("schedule-list", "")
            case .requests: ("requests", "")
            case .report: (#"report {"period":"week"}"#, "")
            case .screen: (#"screen {"user":"kid2"}"#, "")
            case .selections: ("selections", "")
            case .selectionShow: (#"selection-show {"name":"discord"}"#, "")
            case .more: (#"more {"selection":"discord","seconds":300}"#, "")
            case .hello: ("hello", "")
            case .failuresClear: ("failures-clear", "")
            case .foreground: (#"foreground {"app":"/usr/lib/steam/steam"}"#, "")
            case .web: (#"web {"site":"store.steampowered.com"}"#, "")
            case .reload: ("reload", "")
            case .status, .failures, .stats, .limitList, .watch: nil
            }
            guard let pair else {
                #expect(Self.elsewhere[command] != nil, "'\(command)' is neither tried here nor listed with the suite that proves its view")
                continue
            }
            let theirs = text(d.run(pair.theirs, as: kid))
            // What kid typed may be said back; nothing else of kid2's.
            for secret in ["kid2", "1003", "zzsecret\"", "2700", "19:00", id] where !pair.theirs.contains(secret) || secret == "kid2" {
                #expect(!theirs.contains(secret), "'\(command)' tells kid '\(secret)' of kid2's: \(theirs)")
            }
            switch route.target {
            case .activity, .waiting:
                let none = text(d.run(pair.none, as: kid))
                let strip = { (t: String) in t.replacingOccurrences(of: id, with: "ID").replacingOccurrences(of: "mzzzzzzzzzz", with: "ID")
                    .replacingOccurrences(of: "zzsecret-s", with: "NAME").replacingOccurrences(of: "zzsecret-l", with: "NAME")
                    .replacingOccurrences(of: "zzsecret", with: "NAME").replacingOccurrences(of: "zznone", with: "NAME") }
                #expect(strip(theirs) == strip(none), "'\(command)' about kid2's reads otherwise than about nothing: \(theirs) against \(none)")
            case .newActivity:
                #expect(theirs.contains("kid/zzsecret"), "'\(command)': kid's own, under kid's name: \(theirs)")
            case .nothing:
                break
            }
        }
    }
}
