import Foundation
@testable import BlockCore

/// A random history of registry changes and clock movements for ActivityIndexTests, checked
/// against `Policy` (the full recomputation) after every look.
struct History {
    var rng: SplitMix64
    var registry: Registry
    var now: Date
    let zones: [LocalClock]
    var seen: [String: [Reason]] = [:]
    let peer = Peer(uid: 1000, mayModify: true)
    static let selections = ["instagram", "reddit", "youtube", "x.com", "news", "games", "chat", "mail"]

    init(seed: UInt64, zone: String, start: Date) {
        rng = SplitMix64(seed: seed)
        zones = [zone, "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"].map(BlockCoreTests.zone)
        registry = Registry(maxActivities: 40, clock: zones[0])
        now = start
    }

    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }

    mutating func someSelections() -> [String] {
        (0..<Int.random(in: 1...3, using: &rng)).map { _ in pick(History.selections) }
    }

    mutating func wallTime() -> WallTime {
        WallTime(hour: pick([0, 1, 2, 3, 7, 13, 22, 23]), minute: pick([0, 5, 30]))
    }

    /// One random change or clock movement; returns what it did.
    mutating func step() -> String {
        let roll = Int.random(in: 0..<100, using: &rng)
        switch roll {
        case 0..<22:
            let seconds = pick([1.0, 59, 1800, 7200, 32_400, Double.random(in: 1...43_200, using: &rng)])
            let name = chance(0.3) ? nil : "b\(Int.random(in: 0..<12, using: &rng))"
            _ = try? registry.startBlock(name: name, selections: someSelections(), end: now + seconds, locked: false, by: peer, now: now)
            return "start \(name ?? "default") for \(seconds) s"
        case 22..<30:
            let name = "b\(Int.random(in: 0..<12, using: &rng))"
            _ = try? registry.stopBlock(named: name, by: .root, now: now)
            return "stop \(name)"
        case 30..<40:
            // Mostly a few days: a week of windows that tile time makes every `until` walk its
            // 400-day horizon (correct, but slow for thousands of steps).
            let days = chance(0.02) ? WeekdaySet.all : WeekdaySet([pick(Weekday.allCases), pick(Weekday.allCases)])
            let s = Schedule(name: "s\(Int.random(in: 0..<8, using: &rng))", selections: someSelections(), days: days,
                             start: wallTime(), end: wallTime())
            try? registry.addSchedule(s, by: peer, now: now)
            return "schedule add \(s.name) \(s.rule)"
        case 40..<46:
            let name = "s\(Int.random(in: 0..<8, using: &rng))"
            _ = try? registry.removeSchedule(named: name, by: .root)
            return "schedule remove \(name)"
        case 46..<50:
            let l = Limit(name: "l\(Int.random(in: 0..<3, using: &rng))", selections: someSelections(), seconds: 3600)
            try? registry.addLimit(l, by: peer, now: now)
            return "limit add \(l.name)"
        case 50..<52:
            let name = "l\(Int.random(in: 0..<3, using: &rng))"
            _ = try? registry.removeLimit(named: name, by: .root)
            return "limit remove \(name)"
        case 52..<58: return exhaustLimits()
        case 58..<80: return moveClock()
        case 80..<86:
            return "expire \(registry.expire(now: now).map(\.name))"
        case 86..<90:
            if chance(0.5) {
                registry.rollBack()
                return "roll back"
            }
            registry.takeChanges()
            return "take changes"
        case 90..<93:
            registry.clock = pick(zones)
            return "time zone \(registry.clock.zone.identifier)"
        case 93..<97: return reload()
        default:
            now -= pick([0.5, 1, 3600, 7200])
            return "wall clock stepped back"
        }
    }

    /// A limit's usage ran out (or not): its window is what the engine's refresh would give.
    mutating func exhaustLimits() -> String {
        let reach = now + pick([-3600.0, -1, 0, 1, 600, 5400])
        let dayEnd = registry.clock.instant(registry.clock.civil(of: now).date.adding(days: 1), secondsOfDay: 0)
        let clear = chance(0.3)
        let day = registry.clock.civil(of: now).date
        registry.updateLimits { l in
            var l = l
            var state = LimitState(day: day, used: 0, remaining: 0, running: !clear)
            if !clear && reach < dayEnd { state.window = Window(start: reach, end: dayEnd) }
            state.recheckAt = clear ? nil : now + 60
            l.state = state
            return l
        }
        return clear ? "limits cleared" : "limits reach their allowance at \(reach)"
    }

    mutating func moveClock() -> String {
        if chance(0.5), let next = registry.index.nextTransition {
            now = chance(0.8) ? next : next - 0.001  // exactly on a boundary, or just before it
            return "to the next transition"
        }
        now += pick([1.0, 60, 600, 3600, 4 * 3600, Double.random(in: 0...86_400, using: &rng)])
        return "clock forward"
    }

    /// A reload: configured schedules are replaced, and sometimes the whole index is rebuilt.
    mutating func reload() -> String {
        let declared = (0..<Int.random(in: 0...2, using: &rng)).map { i in
            Activity.schedule(Schedule(name: "cfg\(i)", selections: someSelections(), days: WeekdaySet(rawValue: 0b0101010),
                                       start: wallTime(), end: wallTime(), origin: .config(file: "/etc/blockd/schedules.d/cfg\(i).conf")))
        }
        _ = registry.replaceConfigActivities(declared, now: now)
        if chance(0.5) {
            registry = Registry(maxActivities: registry.maxActivities, activities: registry.activities, clock: registry.clock)
            return "reload with \(declared.count) configured schedules, rebuilt"
        }
        return "reload with \(declared.count) configured schedules"
    }

    /// Brings the index to `now` and compares it with the full recomputation; nil when equal.
    mutating func check() -> String? {
        // As the engine does: a rebuild (a fresh registry, time going back) does not know what
        // was blocked before it, so every selection is looked at again.
        let rebuilds = registry.index.evaluatedAt.map { now < $0 } ?? true
        registry.advance(to: now)
        var touched = registry.takeTouchedSelections()
        if rebuilds { touched.formUnion(seen.keys) }
        let policy = Policy(clock: registry.clock)
        let activities = registry.activities
        let want = policy.desired(at: now, activities: activities)
        let got = registry.index.desired()
        if got != want { return "union differs:\n  index     \(got)\n  reference \(want)" }
        let wantNext = policy.nextTransition(after: now, activities: activities)
        if registry.index.nextTransition != wantNext {
            return "next transition \(String(describing: registry.index.nextTransition)), reference \(String(describing: wantNext))"
        }
        if registry.liveCount(at: now) != registry.live(at: now).count {
            return "live count \(registry.liveCount(at: now)), reference \(registry.live(at: now).count)"
        }
        let activeWant = activities.filter { $0.activeWindow(at: now, clock: registry.clock) != nil }.count
        if registry.index.activeCount != activeWant { return "active count \(registry.index.activeCount), reference \(activeWant)" }
        for kind in [Activity.Kind.block, .schedule, .limit] {
            let n = activities.filter { $0.kind == kind }.count
            if registry.index.kindCounts[kind, default: 0] != n { return "\(kind) count \(registry.index.kindCounts[kind, default: 0]), reference \(n)" }
        }
        var current: [String: [Reason]] = [:]
        for b in want { current[b.selection] = b.reasons }
        let changed = Set(current.keys).union(seen.keys).filter { current[$0] != seen[$0] }
        let seenBefore = seen
        seen = current
        if !changed.isSubset(of: touched) {
            return "changed selections \(changed.sorted()) not all reported as touched \(touched.sorted()): " + changed.subtracting(touched).map { "\($0) was \(String(describing: seenBefore[$0])) now \(String(describing: current[$0]))" }.joined(separator: "; ")
        }
        return nil
    }
}
