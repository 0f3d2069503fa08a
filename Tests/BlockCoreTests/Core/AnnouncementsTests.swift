import BlockCore
import Foundation
import Testing

/// What a reconcile tells people, decided in the core (no clock, no engine): the journal line
/// of each report for a selection's outcome after the apply. §7 Truth: never "Blocked" before
/// it is enforced, never "Unblocked" before the unlock has landed. U2: each view is told of its
/// own change, by name. T8: an unlock says which activity ended when, and how late it is.
@Suite("§7, U2, T8: what a reconcile announces")
struct AnnouncementsTests {
    static let now = at("2026-12-01T10:00:00.250Z")
    static let kid: UInt32 = 1001

    static func r(_ name: String, _ kind: Activity.Kind = .block, until: String = "2026-12-01T11:00:00Z", _ uids: [UInt32]? = nil) -> Reason {
        Reason(activity: name, kind: kind, until: at(until), scope: uids.map { Scope(names: $0.map { "u\($0)" }, uids: $0) })
    }
    static let focus = Block(name: "focus", selections: ["youtube"], start: at("2026-12-01T09:30:00Z"), end: at("2026-12-01T10:00:00Z"))
    static let both = Block(name: "both", selections: ["youtube", "reddit"], start: at("2026-12-01T09:00:00Z"), end: at("2026-12-01T10:00:00Z"))

    static var announcements: Announcements {
        Announcements(clock: LocalClock.utc, notes: ["reddit": "block 'r' stopped early by kid"],
                      name: { $0 == kid ? "kid" : nil }, until: { _, _ in at("2026-12-01T11:00:00Z") })
    }

    /// Each report as its journal line, with the fields that say when and how late.
    static func lines(_ reports: [Report]) -> [String] {
        reports.map { report in
            let e = report.entry(clock: LocalClock.utc)
            let late = e.field(.lateMS).map { " [late \($0) ms]" } ?? ""
            return e.message + late
        }
    }

    typealias Outcome = Announcements.Outcome
    static let table: [(String, [String: Outcome], [Block], [String], [String])] = [
        ("a selection blocked and enforced: Blocked, with its reason and end",
         ["youtube": Outcome(before: nil, current: [r("focus")])], [], [],
         ["Blocked youtube: block 'focus', until 2026-12-01T11:00:00.000+00:00"]),
        ("§7 Truth: blocked but not enforced is no news yet",
         ["youtube": Outcome(before: nil, current: [r("focus")], notEnforced: true)], [], [], []),
        ("§7 Truth: an unlock whose write failed is no unlock yet",
         ["youtube": Outcome(before: [r("focus")], current: nil, lingering: true)], [], [], []),
        ("T8: a timed block ended: which one, how long it was, and how late the unlock is",
         ["youtube": Outcome(before: [r("focus")], current: nil)], [focus], ["youtube"],
         ["Unblocked youtube: timed block 'focus' ended (30m) [late 250 ms]"]),
        ("a request lifted it: the request's words",
         ["reddit": Outcome(before: [r("r")], current: nil)], [], ["reddit"],
         ["Unblocked reddit: block 'r' stopped early by kid"]),
        ("a schedule's window ended: its name and end",
         ["news": Outcome(before: [r("evenings", .schedule, until: "2026-12-01T09:59:59Z")], current: nil)], [], ["news"],
         ["Unblocked news: schedule 'evenings' ended [late 1250 ms]"]),
        ("after a restart the reasons are unknown: it says so",
         ["news": Outcome(before: [], current: nil)], [], ["news"], ["Unblocked news: no activity covers it any more"]),
        ("U2: a block for kid only is told as kid's, by name",
         ["games": Outcome(before: nil, current: [r("bedtime", .schedule, [kid])])], [], [],
         ["Blocked games for kid: schedule 'bedtime', until 2026-12-01T11:00:00.000+00:00"]),
        ("a second reason on a blocked selection is no news", ["youtube": Outcome(before: [r("a")], current: [r("a"), r("b")])], [], [], []),
        ("locks come first, then unlocks, each by selection",
         ["b": Outcome(before: [r("x", until: "2026-12-01T10:00:00Z")], current: nil), "a": Outcome(before: nil, current: [r("y")]), "c": Outcome(before: nil, current: [r("z")])], [], ["b"],
         ["Blocked a: block 'y', until 2026-12-01T11:00:00.000+00:00", "Blocked c: block 'z', until 2026-12-01T11:00:00.000+00:00",
          "Unblocked b: block 'x' ended [late 250 ms]"]),
        ("a block that ended before it was ever enforced: nothing to unlock, said so",
         [:], [focus], [], ["Block 'focus' ended at 10:00:00 before it was enforced; nothing to unlock"]),
        ("a block that unlocked its selection is told through that unlock only",
         ["youtube": Outcome(before: [r("focus")], current: nil)], [focus], ["youtube"],
         ["Unblocked youtube: timed block 'focus' ended (30m) [late 250 ms]"]),
    ]

    @Test("§7, U2, T8: each outcome is announced as it is, and only when it is true", arguments: table.indices)
    func announced(_ i: Int) {
        let (why, outcomes, ended, unlocked, expected) = Self.table[i]
        let reports = Self.announcements.reports(outcomes, ended: ended, unlocked: unlocked, applied: { outcomes[$0]?.applied }, now: Self.now)
        #expect(Self.lines(reports) == expected, "\(why)")
    }

    @Test("T8: a block ended while another activity holds its selections: they stay blocked, and by what")
    func endedCovered() {
        let applied: [String: [Reason]] = ["youtube": [AnnouncementsTests.r("evenings", .schedule)], "reddit": [AnnouncementsTests.r("evenings", .schedule)]]
        let all = Self.announcements.endedReport(Self.both, applied: { applied[$0] }, now: Self.now)
        #expect(Self.lines([all]) == ["Block 'both' ended; its selections stay blocked by 'evenings'"])
        let some = Self.announcements.endedReport(Self.both, applied: { $0 == "reddit" ? applied[$0] : nil }, now: Self.now)
        #expect(Self.lines([some]) == ["Block 'both' ended; reddit stay blocked by 'evenings'"])
    }

    @Test("§7 Truth: what is applied after the apply: a failed lock is not applied, a pending unlock still is")
    func applied() {
        let reasons = [AnnouncementsTests.r("focus")]
        #expect(Outcome(before: nil, current: reasons).applied == reasons)
        #expect(Outcome(before: nil, current: reasons, notEnforced: true).applied == nil)
        #expect(Outcome(before: reasons, current: nil, lingering: true).applied == reasons)
        #expect(Outcome(before: reasons, current: nil).applied == nil)
    }

    @Test("U2: whom a change is about, by name, or by uid when the name is not known")
    func whom() {
        #expect(Self.announcements.whom(.everyone) == nil)
        #expect(Self.announcements.whom(Audience(users: [Self.kid, 1002])) == "for kid, #1002")
        #expect(Self.announcements.whom(Audience(users: nil, except: [Self.kid])) == "for everyone but kid")
    }
}
