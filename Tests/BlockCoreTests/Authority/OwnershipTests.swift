import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// A1 in the registry: names are per owner, ownership is never merged away, configured names
/// are the configuration's, and a member's quota leaves room for everyone else. Each case was
/// reproduced on a family machine (kid, kid2 members of blockd, parent of blockd-admin).
@Suite("A1: ownership and quotas in the registry")
struct OwnershipTests {
    let now = at("2026-11-29T13:05:00+09:00")
    static let kid = Peer(uid: 1001, mayModify: true)
    static let kid2 = Peer(uid: 1003, mayModify: true)
    static let parent = { var p = Peer(uid: 1000, mayModify: true); p.isAdmin = true; return p }()
    static let people: @Sendable (UInt32) -> Person = { uid in
        switch uid {
        case 0: Person(rank: .root, name: "root")
        case 1000: Person(rank: .admin, name: "parent")
        case 1001: Person(rank: .member, name: "kid")
        case 1003: Person(rank: .member, name: "kid2")
        default: Person(rank: .member, name: "#\(uid)")
        }
    }

    func registry(cap: Int = Registry.defaultMaxActivities, perMember: Int = Registry.defaultMaxPerMember) -> Registry {
        var r = Registry(maxActivities: cap)
        r.people = Self.people
        r.maxPerMember = perMember
        return r
    }

    @Test("A1: a parent's block on a name kid holds is the parent's; kid's moves aside and kid's stop stops only kid's")
    func parentTakesTheName() throws {
        var r = registry()
        _ = try r.startBlock(name: "youtube", selections: ["junk.example"], end: now + 366 * 86_400, locked: false, by: Self.kid, now: now)
        let outcome = try r.startBlock(name: nil, selections: ["youtube"], end: now + 7200, locked: false,
                                       users: Scope(names: ["kid"], uids: [1001]), by: Self.parent, now: now)
        guard case .created(let block) = outcome else { Issue.record("the parent's block joined kid's: \(outcome)"); return }
        #expect(block.name == "youtube" && block.origin == .client(uid: 1000) && block.selections == ["youtube"])
        #expect(r.activity(named: "kid/youtube")?.selections == ["junk.example"], "kid's goes on under kid's name")
        #expect(r.takeMoves() == [Move(from: "youtube", to: "kid/youtube", owner: "kid", reason: "parent's block 'youtube'")])
        // kid's `blockc stop youtube` means kid's own.
        #expect(r.resolve("youtube", for: Self.kid) == "kid/youtube")
        _ = try r.stopBlock(named: r.resolve("youtube", for: Self.kid), by: Self.kid, now: now)
        #expect(r.activity(named: "youtube") != nil, "the parent's block is untouched")
        #expect(throws: CoreError(.permissionDenied, "the block 'youtube' belongs to parent; only parent or root may stop it")) {
            try r.stopBlock(named: "youtube", by: Self.kid, now: now)
        }
    }

    @Test("A1: two members' names never clash, and neither refuses the other")
    func membersHaveTheirOwnNames() throws {
        var r = registry()
        _ = try r.startBlock(name: nil, selections: ["youtube"], end: now + 600, locked: false, by: Self.kid, now: now)
        let second = try r.startBlock(name: nil, selections: ["youtube"], end: now + 1200, locked: false, by: Self.kid2, now: now)
        #expect(second.block.name == "kid2/youtube" && r.activity(named: "youtube")?.origin == .client(uid: 1001))
        // T10 within one owner: kid2 starting youtube again extends kid2's.
        let again = try r.startBlock(name: nil, selections: ["youtube"], end: now + 1800, locked: false, by: Self.kid2, now: now)
        #expect(again.block.name == "kid2/youtube" && again.block.end == now + 1800)
        #expect(r.activity(named: "youtube")?.asBlock?.end == now + 600, "kid's is neither extended nor shortened")
        #expect(r.activities.count == 2)
    }

    @Test("A1: a name held by root, another administrator or the configuration is refused to an administrator")
    func administratorsShareNames() throws {
        var r = registry()
        _ = try r.startBlock(name: "focus", selections: ["x"], end: now + 600, locked: false, by: .root, now: now)
        #expect(throws: CoreError(.exists, "'focus' is root's block, which only root can extend; give yours another name with --name")) {
            try r.startBlock(name: "focus", selections: ["x"], end: now + 1200, locked: false, by: Self.parent, now: now)
        }
        #expect(r.activity(named: "focus")?.asBlock?.end == now + 600)
    }

    @Test("A1: a configured name wins at reload; the member's activity goes on under the member's name, and reload says so")
    func configuredNamesWin() throws {
        var r = registry()
        try r.addSchedule(Schedule(name: "bedtime", selections: ["junk.example"], start: WallTime(hour: 3, minute: 0), end: WallTime(hour: 3, minute: 1)),
                          by: Self.kid, now: now)
        var bedtime = Schedule(name: "bedtime", selections: ["youtube"], start: WallTime(hour: 21, minute: 0), end: WallTime(hour: 7, minute: 0),
                               origin: .config(file: "/etc/blockd/schedules.d/bedtime.conf"))
        bedtime.users = Scope(names: ["kid"], uids: [1001])
        let said = r.replaceConfigActivities([.schedule(bedtime)], now: now)
        #expect(r.activity(named: "bedtime")?.origin == .config(file: "/etc/blockd/schedules.d/bedtime.conf"), "the configured bedtime is in force")
        #expect(r.activity(named: "kid/bedtime")?.selections == ["junk.example"])
        #expect(said.map(\.error.message) == ["the configured schedule 'bedtime' takes its name from kid's schedule, which goes on as 'kid/bedtime'"])
        #expect(said.map(\.uid) == [1001], "kid's news, not kid2's")
        // A member asking for a configured name gets their own.
        try r.addSchedule(Schedule(name: "bedtime", selections: ["x"], start: WallTime(hour: 1, minute: 0), end: WallTime(hour: 2, minute: 0)),
                          by: Self.kid2, now: now)
        #expect(r.activity(named: "kid2/bedtime") != nil)
    }

    @Test("A1: a member's quota and the members' half of the cap leave root room; root removes a member's locked blocks")
    func quota() throws {
        var r = registry(cap: 40, perMember: 15)
        for i in 0..<15 {
            _ = try r.startBlock(name: "k\(i)", selections: ["junk\(i).example"], end: now + 366 * 86_400, locked: true, by: Self.kid, now: now)
        }
        #expect(throws: CoreError.self) { try r.startBlock(name: "k15", selections: ["j"], end: now + 60, locked: true, by: Self.kid, now: now) }
        for i in 0..<5 {
            _ = try r.startBlock(name: "m\(i)", selections: ["junk\(i).example"], end: now + 366 * 86_400, locked: true, by: Self.kid2, now: now)
        }
        do {
            _ = try r.startBlock(name: "m5", selections: ["j"], end: now + 60, locked: true, by: Self.kid2, now: now)
            Issue.record("members took more than half the cap")
        } catch {
            #expect(error.code == .activityLimit && error.message.contains("members of group 'blockd' together use 20 of the 20"))
        }
        // Root, the parent and the configuration still have the other half.
        _ = try r.startBlock(name: "focus", selections: ["youtube"], end: now + 600, locked: false, by: .root, now: now)
        try r.addSchedule(Schedule(name: "bedtime", selections: ["youtube"], start: WallTime(hour: 21, minute: 0), end: WallTime(hour: 7, minute: 0)),
                          by: Self.parent, now: now)
        #expect(r.replaceConfigActivities([.schedule(Schedule(name: "school", selections: ["x"], start: WallTime(hour: 9, minute: 0),
                                                              end: WallTime(hour: 15, minute: 0), origin: .config(file: "/etc/blockd/schedules.d/school.conf")))],
                                          now: now).isEmpty)
        // A lock binds the member who set it, not the administrator.
        #expect(try r.stopBlock(named: "k0", by: Self.parent, now: now).name == "k0")
        #expect(throws: CoreError.self) { try r.stopBlock(named: "k1", by: Self.kid, now: now) }
    }
}

/// A1 with M3: a grant lifts the asker's own view, and nobody else's.
@Suite("A1: more time lifts the asker's view only")
struct GrantViewTests {
    let now = at("2026-11-29T20:00:00+09:00")

    @Test("A1: kid's grant over bedtime for @kids leaves it for kid2; an administrator's grant over a block for everyone lifts it")
    func liftsOwnViewOnly() {
        let kids = Scope(names: ["@kids"], uids: [1001, 1003])
        let bedtime = Reason(activity: "bedtime", kind: .schedule, until: now + 3600, scope: kids)
        let blocked = Policy.Blocked(selection: "youtube", reasons: [bedtime], until: now + 3600)
        let grant = Grant(id: "m1", selection: "youtube", start: now, end: now + 600, activities: ["bedtime"], uid: 1001)
        let policy = Policy(clock: LocalClock(SystemTimeZone.named("Asia/Tokyo")!))
        let lifted = policy.lifting([blocked], grants: [grant], at: now + 1)
        #expect(lifted.count == 1 && lifted[0].reasons.map(\.scope?.uids) == [[1003]], "kid2 keeps bedtime: \(lifted)")
        #expect(lifted[0].seen(by: 1001) == nil && lifted[0].seen(by: 1003) != nil)
        // Over a reason for everyone (an administrator's own grant) the whole reason goes.
        let focus = Reason(activity: "focus", kind: .block, until: now + 3600)
        let wide = Policy.Blocked(selection: "youtube", reasons: [focus], until: now + 3600)
        let adminGrant = Grant(id: "m2", selection: "youtube", start: now, end: now + 600, activities: ["focus"], uid: 1000)
        #expect(policy.lifting([wide], grants: [adminGrant], at: now + 1).isEmpty)
        #expect(policy.lifting([blocked], grants: [grant], at: now + 601) == [blocked], "the grant's end gives bedtime back to kid")
    }
}

extension Activity {
    var asBlock: Block? { if case .block(let b) = self { b } else { nil } }
}
