import Foundation
import Testing
@testable import BlockCore

@Suite("T4, T10, §5: the registry")
struct RegistryTests {
    let now = at("2026-11-29T13:05:00+09:00")
    let member = Peer(uid: 1000, mayModify: true)
    let other = Peer(uid: 1001, mayModify: true)
    let outsider = Peer(uid: 1002, mayModify: false)
    /// The cap tests fill it as an administrator: a member has a quota of their own (A1).
    let admin = { var p = Peer(uid: 1004, mayModify: true); p.isAdmin = true; return p }()

    func full(_ cap: Int = Registry.defaultMaxActivities) throws -> Registry {
        var r = Registry(maxActivities: cap)
        for i in 0..<cap {
            if i % 2 == 0 {
                _ = try r.startBlock(name: "b\(i)", selections: ["reddit"], end: now + 3600, locked: false, by: admin, now: now)
            } else {
                try r.addSchedule(schedule("s\(i)", "22:00-07:00", days: "mon,wed,fri"), by: admin, now: now)
            }
        }
        return r
    }

    @Test("T8: the registry names exactly the activities a change touched, for the state log")
    func changesAreNamed() throws {
        var r = Registry()
        _ = try r.startBlock(name: "a", selections: ["reddit"], end: now + 3600, locked: false, by: member, now: now)
        try r.addSchedule(schedule("s", "22:00-07:00"), by: member, now: now)
        #expect(r.takeChanges() == ["a", "s"])
        _ = try r.startBlock(name: "a", selections: ["reddit"], end: now + 60, locked: false, by: member, now: now)
        #expect(r.takeChanges() == [], "an unchanged block (T10: never shortened) is no change")
        _ = try r.startBlock(name: "b", selections: ["x"], end: now + 60, locked: false, by: member, now: now)
        _ = try r.stopBlock(named: "a", by: member, now: now)
        #expect(r.takeChanges() == ["a", "b"])
        #expect(r.expire(now: now + 61).map(\.name) == ["b"])
        _ = try r.removeSchedule(named: "s", by: member)
        #expect(r.takeChanges() == ["b", "s"])

        // §7: a change that cannot be saved is undone from the before-images alone.
        _ = try r.startBlock(name: "c", selections: ["y"], end: now + 3600, locked: false, by: member, now: now)
        try r.addSchedule(schedule("t", "22:00-07:00"), by: member, now: now)
        r.takeChanges()
        let saved = Set(r.activities)
        _ = try r.startBlock(name: "c", selections: ["z"], end: now + 7200, locked: false, by: member, now: now)
        _ = try r.removeSchedule(named: "t", by: member)
        _ = try r.startBlock(name: "d", selections: ["w"], end: now + 60, locked: false, by: member, now: now)
        #expect(r.changed == ["c", "t", "d"])
        r.rollBack()
        #expect(r.changed.isEmpty)
        #expect(Set(r.activities) == saved)
    }

    @Test("T4: the cap is 10,000 by default, blocks and schedules together; the next one is refused with activity-limit")
    func capRefusal() throws {
        #expect(Registry.defaultMaxActivities == 10_000)
        var r = try full()
        #expect(r.activities.count == 10_000)
        do {
            _ = try r.startBlock(name: nil, selections: ["instagram"], end: now + 60, locked: false, by: admin, now: now)
            Issue.record("the 10,001st activity was accepted")
        } catch {
            #expect(error.code == .activityLimit)
            #expect(error.message.contains("10000 of 10000"))
            #expect(error.message.contains("blockc stop"))
            #expect(error.message.contains("blockc schedule remove"))
            #expect(error.message.contains("MaxActivities="))
        }
        do { try r.addSchedule(schedule("late", "01:00-02:00"), by: admin, now: now) } catch {
            #expect(error.code == .activityLimit)
        }
        #expect(r.activities.count == 10_000)
    }

    @Test("T4: a schedule counts once whatever its weekday set", arguments: ["daily", "mon", "mon-fri", "sat,sun"])
    func scheduleCountsOnce(days: String) throws {
        var r = Registry(maxActivities: 1)
        try r.addSchedule(schedule("s", "22:00-07:00", days: days), by: admin, now: now)
        #expect(r.live(at: now).count == 1)
    }

    @Test("T4: the cap is configurable", arguments: [1, 5, 100])
    func configurable(cap: Int) throws {
        var r = try full(cap)
        #expect(throws: CoreError.self) { try r.addSchedule(schedule("one-more", "01:00-02:00"), by: admin, now: now) }
    }

    @Test("T4: ended blocks free their slot")
    func endedBlocksFreeSlots() throws {
        var r = try full(20)
        let later = now + 3601
        _ = try r.startBlock(name: nil, selections: ["instagram"], end: later + 60, locked: false, by: admin, now: later)
        let ended = r.expire(now: later)
        #expect(ended.count == 10)
        #expect(r.activities.count == 11)
    }

    @Test("T4: configured schedules count too, and those past the cap are refused, not dropped silently")
    func configSchedulesCount() throws {
        var r = Registry(maxActivities: 3)
        _ = try r.startBlock(name: nil, selections: ["x"], end: now + 60, locked: false, by: admin, now: now)
        let files = (1...3).map { i in
            Schedule(name: "cfg\(i)", selections: ["reddit"], start: WallTime(hour: 1, minute: 0), end: WallTime(hour: 2, minute: 0),
                     origin: .config(file: "/etc/blockd/schedules.d/cfg\(i).conf"))
        }
        let refused = r.replaceConfigActivities(files.map(Activity.schedule), now: now)
        #expect(r.activities.map(\.name) == ["x", "cfg1", "cfg2"])
        #expect(refused.map(\.error.code) == [.activityLimit])
        #expect(refused[0].error.message.contains("cfg3"))
        // Reloading replaces rather than duplicates.
        #expect(r.replaceConfigActivities(files.prefix(1).map(Activity.schedule), now: now).isEmpty)
        #expect(r.activities.map(\.name) == ["x", "cfg1"])
    }

    @Test("T10: starting a selection that has a block extends it to the later end, never shortens it")
    func extendNeverShorten() throws {
        var r = Registry()
        let first = try r.startBlock(name: nil, selections: ["instagram"], end: now + 1800, locked: false, by: member, now: now)
        #expect(first == .created(first.block))
        let shorter = try r.startBlock(name: nil, selections: ["instagram"], end: now + 600, locked: false, by: member, now: now + 60)
        #expect(shorter == .unchanged(first.block))
        let longer = try r.startBlock(name: nil, selections: ["instagram"], end: now + 3600, locked: false, by: member, now: now + 60)
        guard case .extended(let from, let to) = longer else { Issue.record("not extended: \(longer)"); return }
        #expect(from.end == now + 1800)
        #expect(to.end == now + 3600)
        #expect(to.start == now)
        #expect(r.activities.count == 1)
    }

    @Test("T10: extending works at the cap, because it takes no new slot")
    func extendAtCap() throws {
        var r = try full()
        let outcome = try r.startBlock(name: "b0", selections: ["reddit"], end: now + 7200, locked: false, by: admin, now: now)
        #expect(outcome.block.end == now + 7200)
    }

    @Test("T10: a locked block stays locked when extended without --lock, and --lock on extension locks it")
    func lockIsSticky() throws {
        var r = Registry()
        _ = try r.startBlock(name: nil, selections: ["instagram"], end: now + 600, locked: true, by: member, now: now)
        #expect(try r.startBlock(name: nil, selections: ["instagram"], end: now + 1200, locked: false, by: member, now: now).block.locked)
        _ = try r.startBlock(name: nil, selections: ["reddit"], end: now + 600, locked: false, by: member, now: now)
        #expect(try r.startBlock(name: nil, selections: ["reddit"], end: now + 600, locked: true, by: member, now: now).block.locked)
    }

    @Test("§5: only root and group members start blocks or add schedules")
    func outsidersCannotModify() {
        var r = Registry()
        #expect(throws: CoreError.self) {
            try r.startBlock(name: nil, selections: ["x"], end: now + 60, locked: false, by: outsider, now: now)
        }
        do { try r.addSchedule(schedule("s", "01:00-02:00"), by: outsider, now: now) } catch {
            #expect(error.code == .permissionDenied)
            #expect(error.message.contains("usermod -aG blockd"))
        }
    }

    @Test("§5, A1: a block is stopped early by root or its creator; a member's --lock binds the member, an administrator's binds root too")
    func stopRules() throws {
        var r = Registry()
        r.people = { $0 == 0 ? Person(rank: .root, name: "root") : Person(rank: $0 == 1004 ? .admin : .member, name: "#\($0)") }
        _ = try r.startBlock(name: "mine", selections: ["x"], end: now + 600, locked: false, by: member, now: now)
        _ = try r.startBlock(name: "kidlock", selections: ["x"], end: now + 600, locked: true, by: member, now: now)
        _ = try r.startBlock(name: "locked", selections: ["x"], end: now + 600, locked: true, by: admin, now: now)
        #expect(throws: CoreError.self) { try r.stopBlock(named: "mine", by: other, now: now) }
        #expect(throws: CoreError(.locked, "'locked' was started with --lock and cannot be stopped early; it ends at its set time")) {
            try r.stopBlock(named: "locked", by: .root, now: now)
        }
        #expect(throws: CoreError(.locked, "'kidlock' was started with --lock and cannot be stopped early; it ends at its set time (root or a member of group 'blockd-admin' may stop it)")) {
            try r.stopBlock(named: "kidlock", by: member, now: now)
        }
        #expect(try r.stopBlock(named: "kidlock", by: .root, now: now).name == "kidlock")
        do { _ = try r.stopBlock(named: "nope", by: .root, now: now) } catch { #expect(error.code == .notFound) }
        #expect(try r.stopBlock(named: "mine", by: member, now: now).name == "mine")
        _ = try r.startBlock(name: "theirs", selections: ["x"], end: now + 600, locked: false, by: other, now: now)
        #expect(try r.stopBlock(named: "theirs", by: .root, now: now).name == "theirs")
        #expect(r.activities.map(\.name) == ["locked"])
    }

    @Test("§5: schedules are removed by root or their creator; configured ones only by deleting their file")
    func removeRules() throws {
        var r = Registry()
        try r.addSchedule(schedule("bedtime", "22:00-07:00"), by: member, now: now)
        _ = r.replaceConfigActivities([.schedule(Schedule(name: "school", selections: ["youtube"], start: WallTime(hour: 9, minute: 0),
                                               end: WallTime(hour: 15, minute: 0), origin: .config(file: "/etc/blockd/schedules.d/school.conf")))], now: now)
        do { _ = try r.removeSchedule(named: "bedtime", by: other) } catch { #expect(error.code == .permissionDenied) }
        do { _ = try r.removeSchedule(named: "school", by: .root) } catch {
            #expect(error.code == .permissionDenied)
            #expect(error.message.contains("school.conf"))
        }
        #expect(try r.removeSchedule(named: "bedtime", by: member).name == "bedtime")
    }

    @Test("names are validated and clash-free", arguments: ["", "-x", ".x", "a b", "a\nb", "ä", String(repeating: "a", count: 256)])
    func badNames(name: String) {
        var r = Registry()
        do {
            _ = try r.startBlock(name: name, selections: ["x"], end: now + 60, locked: false, by: member, now: now)
            Issue.record("accepted \(name.debugDescription)")
        } catch {
            #expect(error.code == .invalidName)
        }
    }

    @Test("a block cannot take a schedule's name, and ends must be in the future and within 366 days")
    func otherRefusals() throws {
        var r = Registry()
        try r.addSchedule(schedule("bedtime", "22:00-07:00"), by: member, now: now)
        do { _ = try r.startBlock(name: "bedtime", selections: ["x"], end: now + 60, locked: false, by: member, now: now) } catch {
            #expect(error.code == .exists)
        }
        do { _ = try r.startBlock(name: nil, selections: ["x"], end: now, locked: false, by: member, now: now) } catch {
            #expect(error.code == .invalidTime)
        }
        do { _ = try r.startBlock(name: nil, selections: ["x"], end: now + 367 * 86_400, locked: false, by: member, now: now) } catch {
            #expect(error.code == .invalidDuration)
        }
    }
}
