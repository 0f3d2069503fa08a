import BlockCore
import Foundation
import Testing

/// U2 per user: whom a lock or an unlock is about when a selection's reasons change. Users an
/// activity names have a view of their own; everyone else sees the machine-wide reasons only.
@Suite("U2: each user's view of a selection changes on its own")
struct ViewChangeTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let kid: UInt32 = 1001, kid2: UInt32 = 1004

    static func r(_ name: String, _ uids: [UInt32]? = nil) -> Reason {
        Reason(activity: name, kind: .block, until: t0 + 3600, scope: uids.map { Scope(names: $0.map { "u\($0)" }, uids: $0) })
    }

    /// A change in words: `lock M for everyone but 1001`, `unlock K for 1001, 1004`.
    static func words(_ c: ViewChange) -> String {
        let whom = c.audience.users.map { "for " + $0.map(String.init).joined(separator: ", ") }
            ?? (c.audience.except.isEmpty ? "for everyone" : "for everyone but " + c.audience.except.map(String.init).joined(separator: ", "))
        return "\(c.kind == .lock ? "lock" : "unlock") \(c.reasons.map(\.activity).joined(separator: " ")) \(whom)"
    }

    static let table: [(String, [Reason]?, [Reason]?, [String])] = [
        ("no scope anywhere: blocked for everyone", nil, [r("M")], ["lock M for everyone"]),
        ("no scope anywhere: lifted for everyone", [r("M")], nil, ["unlock M for everyone"]),
        ("a second reason on a blocked selection is no news", [r("M")], [r("M"), r("N")], []),
        ("one reason of two ends: still blocked, no news", [r("M"), r("N")], [r("N")], []),
        ("kid's bedtime starts: kid only", nil, [r("K", [kid])], ["lock K for 1001"]),
        ("a machine-wide block over kid's bedtime: news for everyone but kid",
         [r("K", [kid])], [r("K", [kid]), r("M")], ["lock M for everyone but 1001"]),
        ("the machine-wide block ends, kid's bedtime holds: lifted for everyone but kid",
         [r("K", [kid]), r("M")], [r("K", [kid])], ["unlock M for everyone but 1001"]),
        ("a block narrowed from everyone to kid: lifted for everyone else",
         [r("M")], [r("M", [kid])], ["unlock M for everyone but 1001"]),
        ("kid's and kid2's own blocks: each told only of their own",
         nil, [r("K", [kid]), r("K2", [kid2])], ["lock K for 1001", "lock K2 for 1004"]),
        ("one block for the group: told together", nil, [r("G", [kid, kid2])], ["lock G for 1001, 1004"]),
        ("both end together: told together", [r("G", [kid, kid2])], nil, ["unlock G for 1001, 1004"]),
        ("everything starts at once: the machine-wide view and kid's own",
         nil, [r("M"), r("K", [kid])], ["lock M for everyone but 1001", "lock M K for 1001"]),
        ("a lock and an unlock in one change: locks first",
         [r("K", [kid])], [r("K2", [kid2])], ["lock K2 for 1004", "unlock K for 1001"]),
        ("applied before a restart, reasons unknown, now lifted: for everyone", [], nil, ["unlock  for everyone"]),
        ("applied before a restart, now kid's only: lifted for everyone else",
         [], [r("K", [kid])], ["unlock  for everyone but 1001"]),
    ]

    @Test("U2: what changed for whom", arguments: table)
    func changes(_ name: String, _ before: [Reason]?, _ after: [Reason]?, _ expected: [String]) {
        let changes = Policy.viewChanges(before: before, after: after) { _ in nil }
        #expect(changes.map(Self.words) == expected, "\(name)")
    }

    @Test("U2: each lock carries the end of its own view")
    func untilPerView() {
        let kidsEnd = Self.t0 + 7200, othersEnd = Self.t0 + 600
        let changes = Policy.viewChanges(before: nil, after: [Self.r("M"), Self.r("K", [Self.kid])]) { $0 == Self.kid ? kidsEnd : othersEnd }
        #expect(changes.map(\.until) == [othersEnd, kidsEnd])
        let audience = changes[0].audience
        #expect(!audience.contains(Self.kid) && audience.contains(Self.kid2) && audience.contains(0))
        #expect(changes[1].audience.contains(Self.kid) && !changes[1].audience.contains(Self.kid2))
    }

    @Test("U2: users whose views end at different instants are told apart")
    func differentEnds() {
        let changes = Policy.viewChanges(before: nil, after: [Self.r("G", [Self.kid, Self.kid2])]) { $0 == Self.kid ? Self.t0 + 60 : Self.t0 + 120 }
        #expect(changes.map(Self.words) == ["lock G for 1001", "lock G for 1004"])
    }
}
