import Foundation
import Testing
@testable import BlockCore

/// T5 and seed 000 bug 5: "unblock everything" also unblocked what should stay blocked.
@Suite("T5: the blocked set is the union of active activities")
struct PolicyTests {
    let policy = Policy(clock: zone("Asia/Tokyo"))
    let bedtime = Activity.schedule(schedule("bedtime", "22:00-07:00", ["instagram", "youtube"]))

    func blocked(_ activities: [Activity], at time: String) -> [String: [String]] {
        var out: [String: [String]] = [:]
        for b in policy.desired(at: at(time), activities: activities) { out[b.selection] = b.reasons.map(\.activity) }
        return out
    }

    @Test("T5: a manual block of X ending inside a schedule that also blocks X leaves X blocked")
    func manualEndsInsideSchedule() {
        let manual = block("instagram", ["instagram"], from: "2026-11-29T23:00:00+09:00", to: "2026-11-29T23:30:00+09:00")
        let acts = [manual, bedtime]
        #expect(blocked(acts, at: "2026-11-29T23:29:59+09:00")["instagram"] == ["instagram", "bedtime"])
        #expect(blocked(acts, at: "2026-11-29T23:30:00+09:00")["instagram"] == ["bedtime"])
        #expect(blocked(acts, at: "2026-11-30T06:59:59+09:00")["instagram"] == ["bedtime"])
        #expect(blocked(acts, at: "2026-11-30T07:00:00+09:00")["instagram"] == nil)
        let status = policy.desired(at: at("2026-11-29T23:10:00+09:00"), activities: acts)
        #expect(status.first { $0.selection == "instagram" }?.until == at("2026-11-30T07:00:00+09:00"))
    }

    @Test("T5: a manual block ending lifts only its own selections; the schedule's stay")
    func manualOfOtherSelection() {
        let manual = block("reddit", ["reddit"], from: "2026-11-29T23:00:00+09:00", to: "2026-11-29T23:30:00+09:00")
        let after = blocked([manual, bedtime], at: "2026-11-29T23:30:00+09:00")
        #expect(after == ["instagram": ["bedtime"], "youtube": ["bedtime"]])
    }

    @Test("T5: a manual block that outlives the schedule keeps X blocked after the window closes")
    func manualOutlivesSchedule() {
        let manual = block("instagram", ["instagram"], from: "2026-11-30T06:00:00+09:00", to: "2026-11-30T08:00:00+09:00")
        let acts = [manual, bedtime]
        #expect(blocked(acts, at: "2026-11-30T07:30:00+09:00") == ["instagram": ["instagram"]])
        #expect(blocked(acts, at: "2026-11-30T08:00:00+09:00") == [:])
    }

    @Test("T5: a repeating schedule carries nothing from one day into the next")
    func nothingCarriedOver() {
        let school = Activity.schedule(schedule("school", "09:00-15:00", days: "mon-fri", ["youtube", "tiktok"]))
        // A manual block during Friday's window ends after it; Saturday is free of both.
        let manual = block("tiktok", ["tiktok"], from: "2026-11-27T14:00:00+09:00", to: "2026-11-27T16:00:00+09:00")
        let acts = [school, manual]
        #expect(blocked(acts, at: "2026-11-27T14:30:00+09:00") == ["tiktok": ["school", "tiktok"], "youtube": ["school"]])
        #expect(blocked(acts, at: "2026-11-27T15:30:00+09:00") == ["tiktok": ["tiktok"]])
        #expect(blocked(acts, at: "2026-11-28T10:00:00+09:00") == [:])
        #expect(blocked(acts, at: "2026-11-29T10:00:00+09:00") == [:])
        #expect(blocked(acts, at: "2026-11-30T10:00:00+09:00") == ["tiktok": ["school"], "youtube": ["school"]])
    }

    @Test("T5: of two overlapping schedules, the one ending leaves the other's selections blocked")
    func overlappingSchedules() {
        let evening = Activity.schedule(schedule("evening", "18:00-23:00", ["instagram", "reddit"]))
        let acts = [evening, bedtime]
        #expect(blocked(acts, at: "2026-11-29T22:30:00+09:00") == ["instagram": ["evening", "bedtime"], "reddit": ["evening"], "youtube": ["bedtime"]])
        #expect(blocked(acts, at: "2026-11-29T23:00:00+09:00") == ["instagram": ["bedtime"], "youtube": ["bedtime"]])
    }

    @Test("T5: 'until' follows back-to-back reasons to the real unlock")
    func untilChains() {
        // The manual block ends exactly when bedtime starts: instagram is blocked until 07:00.
        let manual = block("instagram", ["instagram"], from: "2026-11-29T20:00:00+09:00", to: "2026-11-29T22:00:00+09:00")
        let status = policy.desired(at: at("2026-11-29T21:00:00+09:00"), activities: [manual, bedtime])
        #expect(status.map(\.selection) == ["instagram"])
        #expect(status[0].until == at("2026-11-30T07:00:00+09:00"))
        #expect(status[0].reasons.map(\.until) == [at("2026-11-29T22:00:00+09:00")])
        // An every-day 24-hour schedule never ends: until is nil (no end in sight).
        let always = Activity.schedule(schedule("always", "00:00-00:00", ["reddit"]))
        #expect(policy.desired(at: at("2026-11-29T21:00:00+09:00"), activities: [always])[0].until == nil)
    }

    @Test("T9: the next transition is the earliest start or end of any activity")
    func nextTransition() {
        let manual = block("instagram", ["instagram"], from: "2026-11-29T13:05:00+09:00", to: "2026-11-29T13:35:00+09:00")
        let acts = [bedtime, manual]
        #expect(policy.nextTransition(after: at("2026-11-29T13:05:00+09:00"), activities: acts) == at("2026-11-29T13:35:00+09:00"))
        #expect(policy.nextTransition(after: at("2026-11-29T13:35:00+09:00"), activities: acts) == at("2026-11-29T22:00:00+09:00"))
        #expect(policy.nextTransition(after: at("2026-11-29T22:00:00+09:00"), activities: acts) == at("2026-11-30T07:00:00+09:00"))
        #expect(policy.nextTransition(after: at("2026-11-29T22:00:00+09:00"), activities: [manual]) == nil)
    }

    @Test("T5: desired is the union of the active activities' selections at every ten minutes of a busy day")
    func setAgrees() {
        let acts: [Activity] = [
            bedtime,
            .schedule(schedule("school", "09:00-15:00", days: "mon-fri", ["youtube", "tiktok"])),
            .schedule(schedule("lunch", "12:00-12:00", days: "sun", ["reddit"])),
            block("x", ["x"], from: "2026-11-30T08:00:00+09:00", to: "2026-11-30T09:30:00+09:00"),
        ]
        var t = at("2026-11-29T00:00:00+09:00")
        while t < at("2026-12-01T00:00:00+09:00") {
            let union = acts.filter { $0.activeWindow(at: t, clock: zone("Asia/Tokyo")) != nil }.reduce(into: Set<String>()) { $0.formUnion($1.selections) }
            #expect(Set(policy.desired(at: t, activities: acts).map(\.selection)) == union)
            t += 600
        }
    }
}
