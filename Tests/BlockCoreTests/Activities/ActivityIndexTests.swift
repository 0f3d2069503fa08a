import Foundation
import Testing
@testable import BlockCore

/// The index keeps the union (T5) and the next transition (T9) incrementally; `Policy` is the
/// full recomputation it must always agree with.
@Suite("T5, T9: the activity index")
struct ActivityIndexTests {
    let member = Peer(uid: 1000, mayModify: true)

    @Test("T5: a manual block ending inside bedtime leaves instagram blocked until bedtime ends")
    func unionOutlivesOneActivity() throws {
        var r = Registry(clock: zone("Asia/Tokyo"))
        let now = at("2026-11-29T23:00:00+09:00")
        try r.addSchedule(schedule("bedtime", "22:00-07:00"), by: member, now: now)
        _ = try r.startBlock(name: "manual", selections: ["instagram"], end: at("2026-11-29T23:30:00+09:00"), locked: false,
                             by: member, now: now)
        r.advance(to: now)
        #expect(r.index.reasons(for: "instagram")?.map(\.activity) == ["bedtime", "manual"], "reasons in registration order")
        #expect(r.index.blocked("instagram")?.until == at("2026-11-30T07:00:00+09:00"))
        #expect(r.index.nextTransition == at("2026-11-29T23:30:00+09:00"), "T9: one timer, at the earliest boundary")
        #expect(r.takeTouchedSelections() == ["instagram"])

        r.advance(to: at("2026-11-29T23:30:00+09:00"))
        #expect(r.index.reasons(for: "instagram")?.map(\.activity) == ["bedtime"])
        #expect(r.takeTouchedSelections() == ["instagram"])
        r.advance(to: at("2026-11-30T07:00:00+09:00"))
        #expect(r.index.reasons(for: "instagram") == nil)
        #expect(r.index.nextTransition == at("2026-11-30T22:00:00+09:00"))
    }

    @Test("T4: a block past its end stops counting against the cap at once, before it is expired")
    func liveCount() throws {
        var r = Registry(maxActivities: 3)
        let now = at("2026-11-29T13:00:00+09:00")
        for i in 0..<3 {
            _ = try r.startBlock(name: "b\(i)", selections: ["x"], end: now + Double(60 * (i + 1)), locked: false, by: .root, now: now)  // a member's quota is A1's
        }
        #expect(r.liveCount(at: now + 60) == 2)
        #expect(r.liveCount(at: now + 180) == 0)
        _ = try r.startBlock(name: "late", selections: ["y"], end: now + 600, locked: false, by: member, now: now + 61)
        #expect(r.liveCount(at: now + 61) == 3, "b0 ended and no longer counts, so 'late' took its slot")
        #expect(r.expire(now: now + 121).map(\.name) == ["b0", "b1"], "in registration order")
        #expect(r.liveCount(at: now + 121) == 2)
    }

    /// DST nights the randomized histories run through (T7), with a day of margin either side.
    static let nights: [(zone: String, start: String)] = [
        ("America/New_York", "2026-03-07T12:00:00-05:00"),  // spring forward, 2026-03-08 02:00
        ("Europe/Berlin", "2026-10-24T12:00:00+02:00"),  // fall back, 2026-10-25 03:00
        ("Europe/Berlin", "2026-03-28T12:00:00+01:00"),  // spring forward, 2026-03-29 02:00
        ("America/New_York", "2026-10-31T12:00:00-04:00"),  // fall back, 2026-11-01 02:00
    ]

    @Test("T5, T9: on randomized histories the kept union, each until and the next transition equal the full recomputation",
          arguments: 0..<4)
    func randomized(run: Int) {
        let seed = 0xb10c_0000 + UInt64(run)
        let night = ActivityIndexTests.nights[run % ActivityIndexTests.nights.count]
        var h = History(seed: seed, zone: night.zone, start: at(night.start))
        for step in 0..<1500 {
            let action = h.step()
            if step % 4 == 3 { continue }  // sometimes several changes come before one look
            if let problem = h.check() {
                Issue.record("seed \(seed) in \(night.zone) from \(night.start), step \(step) (\(action)): \(problem)")
                return
            }
        }
    }
}
