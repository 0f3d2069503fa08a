import BlockCore
import Foundation
import Testing
@testable import BlockDaemon
import ZoneInfo

/// T5, STYLE 4: reconcile returns what it decided, and every report becomes one journal entry
/// and its watch events in one place (Report), so the two never disagree.
@Suite("Reconcile returns its effects; one report, one journal entry and its events")
struct ReconcileTests {
    @Test("T5: reconcile returns the locks, unlocks, targets and reports it decided, and nothing the second time")
    func effects() throws {
        let h = Harness()
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":60}"#))
        let again = h.run { h.engine.reconcile(now: h.clock.wallNow()) }
        #expect(again.targets == nil && again.locks.isEmpty && again.unlocks.isEmpty && again.reports.isEmpty, "idempotent")

        h.clock.advance(61)
        let ended = h.run { h.engine.reconcile(now: h.clock.wallNow()) }
        #expect(ended.unlocks == ["instagram"] && ended.locks.isEmpty)
        #expect(ended.targets == [], "enforcement is asked for the empty set")
        #expect(ended.reports.count == 1)
        #expect(h.entries(.unlock).count == 1)

        _ = ok(h.send(#"start {"selections":["reddit","youtube"],"seconds":60}"#))
        h.clock.advance(1)
        let quiet = h.run { h.engine.reconcile(now: h.clock.wallNow()) }
        #expect(quiet.reports.isEmpty)
        #expect(h.entries(.lock).map { $0.field(.selection) } == ["instagram", "reddit", "youtube"])
    }

    static let clock = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    static let now = iso("2026-11-29T04:05:00Z")
    static let limit = Limit(name: "games", selections: ["steam", "lutris"], seconds: 3600)
    static let reports: [Report] = [
        .lock(Policy.Blocked(selection: "x", reasons: [Reason(activity: "b", kind: .block, until: now + 60)], until: now + 60)),
        .unlock(selection: "x", why: "timed block 'b' ended (1m)", fields: [(.activity, "b")]),
        .problem(CoreError(.locked, "'b' is locked"), uid: 1000, activity: "b"),
        .problem(CoreError(.internal, "hosts file not written"), uid: nil, activity: nil),
        .hit(ShieldHit(kind: .deniedLaunch, selection: "x", path: "/usr/bin/x", app: "X"), until: nil),
        .hit(ShieldHit(kind: .tamper, selection: "x", path: "/etc/hosts"), until: now + 60),
        .limitReached(limit, until: "2026-11-30T00:00:00.000+09:00"),
        .limitWarning(limit, remaining: "5m", starts: "2026-11-29T13:10:00.000+09:00"),
    ]

    @Test("each report's watch events carry the journal entry's event name and selection", arguments: 0..<reports.count)
    func agree(index: Int) {
        let report = ReconcileTests.reports[index]
        let entry = report.entry(clock: ReconcileTests.clock)
        let events = report.events(clock: ReconcileTests.clock, now: ReconcileTests.now)
        #expect(!events.isEmpty)
        #expect(entry.event == report.logEvent)
        for event in events {
            #expect(event.word == report.logEvent.rawValue)
            #expect(event.time == "2026-11-29T13:05:00.000+09:00")
            if let selection = event.selection { #expect(entry.field(.selection)?.split(separator: " ").contains(Substring(selection)) == true) }
        }
    }
}
