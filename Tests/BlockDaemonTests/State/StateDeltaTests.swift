import BlockCore
import Foundation
import Testing
@testable import BlockDaemon
import ZoneInfo

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
            // T5: told each target's value before (the core's undo log), with `old` holding no
            // targets at all (the engine keeps none beside the core's), the record is the same.
            var before: [String: Selection?] = [:]
            for name in touched.union(extra) { before[name] = .some(old.targets[name]) }
            #expect(StateDelta(from: old.withoutLogged, to: new, selections: touched.union(extra), targetsBefore: before) == named,
                    "seed \(seed) step \(step)")
            #expect(StateDelta(from: old.withoutLogged, to: new, targetsBefore: before) == named, "seed \(seed) step \(step): compared whole")
            var replayed = old
            named.apply(to: &replayed)
            #expect(replayed.applied == new.applied && replayed.targets == new.targets, "seed \(seed) step \(step)")
            old = new
        }
    }

    @Test("T4, §7: the failure list replays to what it was: appended (over the bound too), resolved in place, cleared in part",
          arguments: ["append", "appendOverBound", "resolve", "clearOwn"])
    func failuresReplay(change: String) {
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        func failure(_ i: Int, uid: UInt32? = nil) -> FailureRecord {
            FailureRecord(time: t + Double(i), code: "internal", message: "f\(i)", uid: uid, cause: i % 2 == 0 ? "config" : nil)
        }
        var old = DaemonState()
        old.failures = (0..<(change == "appendOverBound" ? FailureRecord.limit : 5)).map { failure($0, uid: $0 == 3 ? 1000 : nil) }
        var new = old
        switch change {
        case "append", "appendOverBound": new.failures = FailureRecord.bounded(new.failures + [failure(200), failure(201)])
        case "resolve": new.failures[2].resolved = t + 500  // used to be taken for five appended records: a duplicated list
        default: new.failures.removeAll { $0.uid == 1000 }  // a member's failures --clear
        }
        let delta = StateDelta(from: old, to: new)
        var replayed = old
        delta.apply(to: &replayed)
        #expect(replayed.failures == new.failures)
        #expect((delta.failuresAdd != nil) == change.hasPrefix("append"), "appended records are written alone; any other change whole")
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

    @Test("R1: the report's open intervals: with the keys the ledger touched, the record equals the whole comparison's and replays to the new state",
          arguments: [1, 2, 3] as [UInt64])
    func touchedIntervalsEqualWhole(seed: UInt64) {
        var r = TortureTests.Generator(state: seed)
        let clock = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
        var t = Date(timeIntervalSince1970: 1_796_000_000)
        var old = DaemonState()
        for step in 0..<300 {
            var new = old
            new.history.resetTouched()
            let logged = new.history.openUndo.end
            for _ in 0..<Int(r.next() % 5) {
                t = t.addingTimeInterval(Double(r.next() % 600))
                let what = UsageHistory.Open(r.next() % 2 == 0 ? .blocked : .running, user: ["all", "kid"][Int(r.next() % 2)],
                                             name: Self.pool[Int(r.next() % 12)])
                switch r.next() % 7 {
                case 0: new.history.checkpoint([.blocked], at: t, clock: clock)
                case 1, 2, 3: new.history.set(what, true, at: t, clock: clock)
                default: new.history.set(what, false, at: t, clock: clock)
                }
            }
            let delta = StateDelta(from: old, to: new, intervals: new.history.touched)
            #expect(delta == StateDelta(from: old, to: new), "seed \(seed) step \(step)")
            // Told each interval's value before (the ledger's undo log), with `old` holding none.
            #expect(StateDelta(from: old.withoutLogged, to: new, openBefore: new.history.openUndo.before(since: logged)) == delta,
                    "seed \(seed) step \(step): from the undo log")
            var replayed = old
            delta.apply(to: &replayed)
            #expect(replayed.history == new.history, "seed \(seed) step \(step)")
            old = new
        }
    }

    @Test("R1: a ledger whose touched keys miss an interval opened is not trusted: the intervals are compared whole")
    func missedIntervalIsCompared() {
        let clock = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
        let t = Date(timeIntervalSince1970: 1_796_000_000)
        let old = DaemonState()
        var new = old
        new.history.set(.init(.blocked, user: "all", name: "a"), true, at: t, clock: clock)  // touched unknown: not noted
        new.history.resetTouched()
        new.history.set(.init(.blocked, user: "all", name: "b"), true, at: t, clock: clock)
        let d = StateDelta(from: old, to: new, intervals: new.history.touched)
        #expect(d.historyOpen?.count == 2, "\(d)")
    }

    @Test("R1, §7: the report's open intervals, saved by what changed, come back as they were after a restart")
    func intervalsSurviveRestart() throws {
        let h = Harness()
        for name in ["instagram", "reddit", "youtube"] {
            #expect(ok(h.send(#"start {"selections":["\#(name)"],"seconds":\#(name == "youtube" ? 1200 : 600),"name":"\#(name)"}"#)) != nil)
        }
        #expect(ok(h.send(#"stop {"name":"reddit"}"#)) != nil)
        // 13:05 in Tokyo: at 13:15 instagram's block ends and the schedule begins, in one
        // reconcile: one interval closed and one opened, so their count stays the same.
        #expect(ok(h.send(#"schedule-add {"name":"later","window":"13:15-13:30","selections":["x"]}"#)) != nil)
        h.advance(600)
        let before = h.run { h.engine.core.state.history }
        #expect(before.open.keys.map { $0.split(separator: " ").last.map(String.init) ?? "" }.sorted() == ["x", "youtube"],
                "\(before.open.keys.sorted())")
        h.engine = h.makeEngine()
        h.run { h.engine.startUp() }
        let after = h.run { h.engine.core.state.history }
        #expect(after.open == before.open)
        #expect(after.days == before.days)
    }
}
