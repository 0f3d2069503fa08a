import BlockCore
import Testing
@testable import BlockDaemon

/// §7: a state-log record holds what changed. Told which selections' applied entry or targets
/// may have changed (the core notes each), it looks at those alone; it must then be the
/// record a whole comparison gives, and a list that does not account for the change is not
/// trusted.
@Suite("§7: a state record looks only at the selections that changed")
struct StateDeltaTests {
    static let pool = (0..<40).map { "s\($0)" }

    static func random(_ r: inout TortureTests.Generator, like base: DaemonState? = nil) -> (DaemonState, Set<String>) {
        var state = base ?? DaemonState()
        var touched: Set<String> = []
        for _ in 0..<(base == nil ? 25 : Int(r.next() % 6)) {
            let name = pool[Int(r.next() % UInt64(pool.count))]
            touched.insert(name)
            var applied = Set(state.applied)
            if r.next() % 2 == 0 { applied.insert(name) } else { applied.remove(name) }
            state.applied = applied.sorted()
            switch r.next() % 3 {
            case 0: state.targets[name] = nil
            case 1: state.targets[name] = Selection(name: name, domains: ["\(name).example"])
            default: state.targets[name] = Selection(name: name, domains: ["\(name).example", "www.\(name).example"])
            }
        }
        return (state, touched)
    }

    @Test("§7: with the changed selections named, the record equals the whole comparison's, and replays to the new state",
          arguments: [1, 2, 3] as [UInt64])
    func namedEqualsWhole(seed: UInt64) throws {
        var r = TortureTests.Generator(state: seed)
        var (old, _) = Self.random(&r)
        for step in 0..<300 {
            let (new, touched) = Self.random(&r, like: old)
            let extra = Set([Self.pool[Int(r.next() % UInt64(Self.pool.count))]])  // named but unchanged: nothing for it
            let named = StateDelta(from: old, to: new, selections: touched.union(extra))
            #expect(named == StateDelta(from: old, to: new), "seed \(seed) step \(step)")
            var replayed = old
            named.apply(to: &replayed)
            #expect(replayed.applied == new.applied && replayed.targets == new.targets, "seed \(seed) step \(step)")
            old = new
        }
    }

    @Test("§7: a list of changed selections that misses one added or removed is not trusted: the parts are compared whole")
    func missedIsCompared() {
        var old = DaemonState()
        old.applied = ["a", "b"]
        old.targets = ["a": Selection(name: "a", domains: ["a.example"])]
        var new = old
        new.applied = ["a", "b", "c"]
        new.targets["c"] = Selection(name: "c", domains: ["c.example"])
        let d = StateDelta(from: old, to: new, selections: ["a"])
        #expect(d.appliedAdd == ["c"] && d.targets?["c"] != nil, "\(d)")
        #expect(d == StateDelta(from: old, to: new))
    }
}
