import Foundation
import Testing
@testable import BlockCore

/// T5 and §7 at scale: the targets a reconcile hands to enforcement are worked out
/// for the selections it looked at, and kept for the rest. After any sequence of changes the
/// kept table must be what working them all out from scratch gives, and the selections said to
/// have changed must cover every one whose targets did.
@Suite("T5: the targets kept from one reconcile to the next equal those worked out from scratch")
struct CoreTargetsTests {
    static let names = ["video", "a.example", "b.example", "c.example", "d.example"]
    static let people: [[String]?] = [nil, nil, ["kid"], ["kid2"], ["parent", "kid"]]
    /// Local windows in the hours the sequence runs through (it starts at 13:05 in Tokyo).
    static let windows = ["13:06-13:20", "13:15-13:40", "13:50-14:30", "14:00-14:05", "15:00-16:00", "16:30-17:30"]

    /// The configuration with and without `video` (its blocks then keep their recorded targets, §7).
    static func config(withVideo: Bool) throws -> ConfigSet {
        var config = try CoreUserAlwaysAllowedTests.config()
        if !withVideo {
            let kids = ConfigSource(path: "/etc/blockd/users.d/kids.conf", text: "[Users]\nUsers=@kids\nAlwaysAllowed=edu.video.example\n")
            config = try ConfigSet.load(daemonFile: nil, selectionFiles: [], scheduleFiles: [], userFiles: [kids])
        }
        return config
    }

    /// One random step: a start (some for some users), a stop, a schedule added or removed,
    /// time passing, an enforcer's news, a reload that removes or brings back `video`, or an
    /// unlock that cannot land.
    static func step(_ d: inout FakeEdge, _ rng: inout SplitMix64, serial: inout Int, live: inout [String],
                     schedules: inout [String]) throws {
        switch rng.next() % 12 {
        case 10:
            serial += 1
            let window = windows[Int(rng.next() % UInt64(windows.count))]
            let selection = names[Int(rng.next() % UInt64(names.count))]
            if case .ok = d.run(#"schedule-add {"name":"s\#(serial)","window":"\#(window)","selections":["\#(selection)"]}"#) { schedules.append("s\(serial)") }
        case 11:
            guard !schedules.isEmpty else { return }
            let name = schedules.remove(at: Int(rng.next() % UInt64(schedules.count)))
            _ = d.run(#"schedule-remove {"name":"\#(name)"}"#)
        case 0...3:
            serial += 1
            let picked = names.filter { _ in rng.next() % 3 == 0 }
            let selections = picked.isEmpty ? [names[Int(rng.next() % UInt64(names.count))]] : picked
            let users = people[Int(rng.next() % UInt64(people.count))]
            let scope = users.map { #","users":[\#($0.map { "\"\($0)\"" }.joined(separator: ","))]"# } ?? ""
            let line = #"start {"name":"b\#(serial)","selections":[\#(selections.map { "\"\($0)\"" }.joined(separator: ","))],"seconds":\#(60 + rng.next() % 900)\#(scope)}"#
            if case .ok = d.run(line) { live.append("b\(serial)") }
        case 4, 5:
            guard !live.isEmpty else { return }
            let name = live.remove(at: Int(rng.next() % UInt64(live.count)))
            _ = d.run(#"stop {"name":"\#(name)"}"#)
        case 6, 7:
            d.advance(TimeInterval(1 + rng.next() % 400))
        case 8:
            d.files = .success(try config(withVideo: rng.next() % 2 == 0))
            _ = d.run("reload")
        default:
            if rng.next() % 2 == 0 {
                d.stuck = [names[Int(rng.next() % UInt64(names.count))]: "No space left on device"]
            } else {
                d.stuck = [:]
            }
            d.enforcementChanged()
        }
    }

    @Test("T5, §7, W2: after random starts, stops, ends, reloads and failed unlocks, the kept targets equal a from-scratch apply",
          arguments: [1, 2, 3, 4] as [UInt64])
    func randomChanges(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var d = FakeEdge(config: try Self.config(withVideo: true), users: CoreUserScopeTests.users)
        var serial = 0
        var live: [String] = []
        var schedules: [String] = []
        var checked = 0
        var saved = d.core.state  // what the engine last saved
        _ = d.core.takeUnsavedSelections()
        var hinted = 0
        var undone = 0
        var openChanged = 0
        for round in 0..<250 {
            let calls = d.enforcements.count
            try Self.step(&d, &rng, serial: &serial, live: &live, schedules: &schedules)
            // What was handed over is what was kept.
            if d.enforcements.count > calls { #expect(d.enforcements.last == d.core.enforcing.all, "seed \(seed) round \(round)") }
            // The selections said to have changed cover every one whose targets did.
            for call in calls..<d.enforcements.count {
                guard let changed = d.changes[call] else { continue }
                let previous = call == 0 ? [] : d.enforcements[call - 1]
                let differ = Self.differing(previous, d.enforcements[call])
                #expect(differ.isSubset(of: changed), "seed \(seed) round \(round): \(differ.subtracting(changed)) changed unannounced")
            }
            // From scratch: the same core, every blocked selection worked out again.
            var fresh = d.core
            fresh.mustApply = true
            let plan = fresh.planReconcile(now: d.now)
            #expect(plan.changed == nil, "a from-scratch apply says everything may have changed")
            #expect(plan.targets == d.core.enforcing.all, "seed \(seed) round \(round): kept targets differ from scratch")
            #expect(fresh.state.targets == d.core.state.targets,
                    "seed \(seed) round \(round): recorded targets differ from scratch: \(Self.keys(fresh.state.targets, d.core.state.targets))")
            // §7: every selection whose applied entry or recorded targets changed since the
            // last save is among those the core says are unsaved (the save looks at those alone).
            if let unsaved = d.core.unsavedSelections {
                let differ = Self.differing(saved, d.core.state)
                #expect(differ.isSubset(of: unsaved), "seed \(seed) round \(round): \(differ.subtracting(unsaved)) changed unnoted")
                hinted += 1
            }
            // §7, T5: the undo log says each target changed since the save as it was then (what
            // the save writes instead of comparing copies of the whole table).
            let before = d.core.targetsBeforeSave
            for name in Set(saved.targets.keys).union(d.core.state.targets.keys) where saved.targets[name] != d.core.state.targets[name] {
                #expect(before[name] == .some(saved.targets[name]), "seed \(seed) round \(round): \(name) changed since the save, the log says \(String(describing: before[name]))")
            }
            for (name, was) in before { #expect(was == saved.targets[name], "seed \(seed) round \(round): \(name) was not so at the save") }
            // R1: the same for the report's open intervals (each block opens and closes some).
            let openBefore = d.core.openBeforeSave
            let (openThen, openNow) = (saved.history.open, d.core.state.history.open)
            for key in Set(openThen.keys).union(openNow.keys) where openThen[key] != openNow[key] {
                #expect(openBefore[key] == .some(openThen[key]), "seed \(seed) round \(round): interval \(key) changed unlogged")
            }
            for (key, was) in openBefore { #expect(was == openThen[key], "seed \(seed) round \(round): interval \(key) was not so at the save") }
            openChanged += openBefore.isEmpty ? 0 : 1
            // §7: a change put back from its mark leaves the targets as they were, also from
            // an older mark behind a newer one (a failed group commit).
            // (On a copy, with its own random numbers: the sequence itself goes on unchanged.)
            var side = SplitMix64(seed: seed &* 7_919 &+ UInt64(round))
            if side.next() % 4 == 0 {
                var (probe, s, l, sc) = (d, serial, live, schedules)
                _ = probe.core.registry.takeChanges()
                let (outer, atOuter, openOuter) = (probe.core.mark(), probe.core.state.targets, probe.core.state.history.open)
                try Self.step(&probe, &side, serial: &s, live: &l, schedules: &sc)
                let (inner, atInner, openInner) = (probe.core.mark(), probe.core.state.targets, probe.core.state.history.open)
                try Self.step(&probe, &side, serial: &s, live: &l, schedules: &sc)
                probe.core.restore(inner)
                #expect(probe.core.state.targets == atInner, "seed \(seed) round \(round): \(Self.keys(probe.core.state.targets, atInner))")
                #expect(probe.core.state.history.open == openInner, "seed \(seed) round \(round): open intervals")
                probe.core.restoreBatch(outer)
                #expect(probe.core.state.targets == atOuter, "seed \(seed) round \(round): \(Self.keys(probe.core.state.targets, atOuter))")
                #expect(probe.core.state.history.open == openOuter, "seed \(seed) round \(round): open intervals")
                undone += 1
            }
            if rng.next() % 3 == 0 {
                saved = d.core.state
                _ = d.core.takeUnsavedSelections()
                d.core.forgetSavedChanges()
            }
            checked += 1
        }
        #expect(hinted > 200, "the unsaved selections must be known most of the time: \(hinted)")
        #expect(checked == 250)
        #expect(undone > 30, "marks must be put back often: \(undone)")
        #expect(openChanged > 50, "the open intervals must change often: \(openChanged)")
        #expect(d.enforcements.count > 100, "the sequence must reach enforcement often: \(d.enforcements.count)")
        #expect(d.changes.contains { $0 != nil && !$0!.isEmpty }, "some applies must be incremental")
    }

    /// The names recorded differently in two tables.
    static func keys(_ a: [String: Selection], _ b: [String: Selection]) -> [String] {
        Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted().map { "\($0): \(a[$0].map { "\($0.domains)" } ?? "-") / \(b[$0].map { "\($0.domains)" } ?? "-")" }
    }

    /// The selections applied in one state and not the other, or recorded with other targets.
    static func differing(_ a: DaemonState, _ b: DaemonState) -> Set<String> {
        let applied = Set(a.applied).symmetricDifference(b.applied)
        return applied.union(Set(a.targets.keys).union(b.targets.keys).filter { a.targets[$0] != b.targets[$0] })
    }

    /// The names whose targets differ between two hand-overs.
    static func differing(_ a: [Selection], _ b: [Selection]) -> Set<String> {
        let left = Dictionary(grouping: a, by: \.name), right = Dictionary(grouping: b, by: \.name)
        return Set(left.keys).union(right.keys).filter { left[$0] != right[$0] }
    }

    @Test("T5: the table keeps its selections sorted and says when a set changed it")
    func table() {
        var t = TargetTable()
        let a = Selection(name: "a", domains: ["a.example"]), b = Selection(name: "b", domains: ["b.example"])
        let added = [t.set("b", [b]), t.set("a", [a])]
        #expect(added == [true, true] && t.names == ["a", "b"] && t.all == [a, b])
        let again = t.set("a", [a])
        #expect(!again, "the same targets again change nothing")
        let removed = [t.set("a", nil), t.set("a", nil)]
        #expect(removed == [true, false] && t.all == [b] && t["b"] == [b] && t["a"] == nil)
    }
}
