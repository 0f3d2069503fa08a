import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// T5, STYLE 4: a reconcile returns what it decided, and every report becomes one journal
/// entry and its watch events in one place (Report), so the two never disagree. §7 "Truth"
/// for unlocks: an unlock whose write has not landed is pending, still applied, unannounced.
@Suite("T5, §7: reconcile returns its effects; one report, one journal entry and its events")
struct CoreReconcileTests {
    @Test("T5: a reconcile's effects are the targets to enforce and one journal entry per lock or unlock, and nothing the second time")
    func effects() throws {
        var d = FakeEdge()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":60}"#))
        let again = d.reconcile()
        #expect(Self.enforced(again) == nil && Self.journal(again).isEmpty, "idempotent: \(again)")

        d.pass(61)
        let ended = d.reconcile()
        #expect(Self.enforced(ended) == [], "enforcement is asked for the empty set")
        #expect(Self.journal(ended).map(\.event) == [.unlock] && Self.journal(ended).first?.field(.selection) == "instagram")
        #expect(ended.contains(.reconciled(looked: ["instagram"])), "the published view follows what it looked at")
        #expect(d.entries(.unlock).count == 1)

        _ = ok(d.run(#"start {"selections":["reddit","youtube"],"seconds":60}"#))
        d.pass(1)
        let quiet = d.reconcile()
        #expect(Self.journal(quiet).isEmpty)
        #expect(d.entries(.lock).map { $0.field(.selection) } == ["instagram", "reddit", "youtube"])
    }

    /// The selections a batch of effects asks enforcement to hold (nil: it does not ask).
    static func enforced(_ effects: [Effect]) -> [String]? {
        for case .enforce(let targets, _) in effects { return targets.map(\.name) }
        return nil
    }

    static func journal(_ effects: [Effect]) -> [JournalEntry] {
        effects.compactMap { if case .journal(let e) = $0 { e } else { nil } }
    }

    static let clock = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    static let now = at("2026-11-29T04:05:00Z")
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

    @Test("T5: each report's watch events carry the journal entry's event name and selection", arguments: 0..<reports.count)
    func agree(index: Int) {
        let report = CoreReconcileTests.reports[index]
        let entry = report.entry(clock: CoreReconcileTests.clock)
        let events = report.events(clock: CoreReconcileTests.clock, now: CoreReconcileTests.now)
        #expect(!events.isEmpty)
        #expect(entry.event == report.logEvent)
        for event in events {
            #expect(event.word == report.logEvent.rawValue)
            #expect(event.time == "2026-11-29T13:05:00.000+09:00")
            if let selection = event.selection { #expect(entry.field(.selection)?.split(separator: " ").contains(Substring(selection)) == true) }
        }
    }

    @Test("§7: a stop that cannot be written is 'unblock pending', not 'Unblocked', until the write lands")
    func pendingUntilItLands() throws {
        var d = FakeEdge()
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":600}"#)))
        d.stuck = ["reddit": "cannot write /etc/hosts: No space left on device"]
        _ = try #require(ok(d.run(#"stop {"name":"reddit"}"#)))
        #expect(d.entries(.unlock).isEmpty, "no 'Unblocked' while the lines are still in the file: \(d.entries(.unlock).map(\.message))")
        #expect(d.core.applied.keys.sorted() == ["reddit"], "still in force")
        #expect(d.core.lingering == ["reddit": "cannot write /etc/hosts: No space left on device"], "status says unblock pending")
        #expect(d.core.blockedNow("reddit") == nil, "no longer wanted")
        // Space is freed; the enforcer's retry lands and tells the engine.
        d.stuck = [:]
        d.enforcementChanged()
        #expect(d.entries(.unlock).count == 1 && d.entries(.unlock)[0].message.hasPrefix("Unblocked reddit"), "\(d.entries(.unlock).map(\.message))")
        #expect(d.core.applied.isEmpty && d.core.lingering.isEmpty)
    }

    @Test("§6: the journal and watch name instants as people read them: the time to the second today, the day before it otherwise, the year when it is another; the exact instant stays in the fields",
          arguments: [
              ("2026-11-29T13:35:00.400+09:00", "13:35:00"),
              ("2026-11-29T13:35:00.600+09:00", "13:35:01"),
              ("2026-11-30T07:00:00+09:00", "Mon 30 Nov 07:00:00"),
              ("2027-01-02T07:00:00+09:00", "Sat 2 Jan 2027 07:00:00"),
          ])
    func spokenInstants(instant: String, says: String) throws {
        let now = try TimeText.parseISO8601WithOffset("2026-11-29T13:05:00+09:00")
        #expect(CoreReconcileTests.clock.spoken(try TimeText.parseISO8601WithOffset(instant), from: now) == says)
    }
}
