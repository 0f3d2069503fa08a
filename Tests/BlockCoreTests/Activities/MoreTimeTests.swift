import Foundation
import Testing
@testable import BlockCore

/// M1-M3 in the pure core: the strictest policy, grant ∩ reasons, the day's allowance (T7),
/// "one more minute", Delay=.
@Suite("M1-M3: more time")
struct MoreTimeTests {
    let tokyo = zone("Asia/Tokyo")

    func withPolicy(_ s: Schedule, _ mode: MoreTimeMode, delay: Int = 0, perDay: Int = 1800) -> Activity {
        var s = s
        s.moreTime = MoreTimePolicy(mode: mode, delay: delay, perDay: perDay)
        return .schedule(s)
    }

    func blocked(_ selection: String, _ activities: [Activity], at t: Date, clock: LocalClock) -> Policy.Blocked {
        Policy(clock: clock).desired(at: t, activities: activities).first { $0.selection == selection }!
    }

    @Test("M1, T5: the strictest policy of every reason wins", arguments: [
        ([MoreTimeMode.selfService, .selfService], MoreTimeMode.selfService),
        ([.selfService, .approval], .approval),
        ([.approval, .no], .no),
        ([.selfService, .no, .approval], .no),
    ])
    func strictest(modes: [MoreTimeMode], expected: MoreTimeMode) {
        let p = MoreTimePolicy.strictest(modes.enumerated().map { MoreTimePolicy(mode: $1, delay: $0 * 60, perDay: 1800 - $0 * 60) })
        #expect(p.mode == expected)
        #expect(p.delay == (modes.count - 1) * 60)
        #expect(p.perDay == 1800 - (modes.count - 1) * 60)
    }

    @Test("M1: a --lock block refuses more time whatever else covers the selection, naming it")
    func locked() throws {
        let t = at("2026-11-29T13:00:00+09:00")
        let acts = [block("work", ["instagram"], from: "2026-11-29T12:00:00+09:00", to: "2026-11-29T15:00:00+09:00", locked: true),
                    withPolicy(schedule("day", "09:00-17:00"), .selfService)]
        let b = blocked("instagram", acts, at: t, clock: tokyo)
        #expect(throws: CoreError.self) { try MoreTimeBook().decide(b, seconds: 300, activities: acts, now: t, clock: tokyo) }
        do { _ = try MoreTimeBook().decide(b, seconds: 300, activities: acts, now: t, clock: tokyo) } catch {
            #expect(error.code == .locked)
            #expect(error.message.contains("block 'work'"))
        }
    }

    @Test("M1, M2: self grants after Delay=; approval waits until RequestTimeout= or the block's end")
    func modes() throws {
        let t = at("2026-11-29T13:00:00+09:00")
        let selfish = [withPolicy(schedule("day", "09:00-17:00"), .selfService, delay: 120)]
        let d1 = try MoreTimeBook().decide(blocked("instagram", selfish, at: t, clock: tokyo), seconds: 300, activities: selfish, now: t, clock: tokyo)
        #expect(d1 == .grant(start: t + 120, end: t + 420, oneMoreMinute: false))
        let strict = [withPolicy(schedule("day", "09:00-13:30"), .approval)]
        let d2 = try MoreTimeBook().decide(blocked("instagram", strict, at: t, clock: tokyo), seconds: 300, activities: strict, now: t, clock: tokyo)
        #expect(d2 == .pending(expires: at("2026-11-29T13:30:00+09:00")))
    }

    @Test("M1: one more minute once per limit/schedule per day, at once, whatever the Delay= or approval")
    func oneMoreMinute() throws {
        let t = at("2026-11-29T13:00:00+09:00")
        let acts = [withPolicy(schedule("day", "09:00-17:00"), .approval, delay: 600)]
        let b = blocked("instagram", acts, at: t, clock: tokyo)
        var book = MoreTimeBook()
        let d = try book.decide(b, seconds: 60, activities: acts, now: t, clock: tokyo)
        #expect(d == .grant(start: t, end: t + 60, oneMoreMinute: true))
        book.charge(Grant(id: "m1", selection: "instagram", start: t, end: t + 60, activities: ["day"], uid: 1000),
                    oneMoreMinute: true, activities: acts, now: t, clock: tokyo)
        #expect(try book.decide(b, seconds: 60, activities: acts, now: t + 120, clock: tokyo) == .pending(expires: t + 120 + 3600))
        // The next local day it is there again (T7).
        let tomorrow = at("2026-11-30T13:00:00+09:00")
        let b2 = blocked("instagram", acts, at: tomorrow, clock: tokyo)
        #expect(try book.decide(b2, seconds: 60, activities: acts, now: tomorrow, clock: tokyo) == .grant(start: tomorrow, end: tomorrow + 60, oneMoreMinute: true))
    }

    @Test("M1, T7: MoreTimePerDay= is per activity per local day, and renews at local midnight")
    func allowance() throws {
        let t = at("2026-11-29T22:00:00+09:00")
        let acts = [withPolicy(schedule("night", "21:00-07:00"), .selfService, perDay: 600)]
        var book = MoreTimeBook()
        let b = blocked("instagram", acts, at: t, clock: tokyo)
        guard case .grant(let s, let e, _) = try book.decide(b, seconds: 500, activities: acts, now: t, clock: tokyo) else {
            Issue.record("expected a grant"); return
        }
        book.charge(Grant(id: "m1", selection: "instagram", start: s, end: e, activities: ["night"], uid: 1000), oneMoreMinute: false,
                    activities: acts, now: t, clock: tokyo)
        #expect(throws: CoreError.self) { try book.decide(b, seconds: 200, activities: acts, now: t + 900, clock: tokyo) }
        #expect(try book.decide(b, seconds: 100, activities: acts, now: t + 900, clock: tokyo) == .grant(start: t + 900, end: t + 1000, oneMoreMinute: false))
        let after = at("2026-11-30T00:10:00+09:00")
        let b2 = blocked("instagram", acts, at: after, clock: tokyo)
        #expect(try book.decide(b2, seconds: 600, activities: acts, now: after, clock: tokyo) == .grant(start: after, end: after + 600, oneMoreMinute: false))
    }

    @Test("M1, T7: more time ends with the local day; --today on a 23-hour DST day lasts until local midnight")
    func endOfDay() throws {
        let ny = zone("America/New_York")
        let t = at("2026-03-08T00:30:00-05:00")  // spring forward at 02:00: this day has 23 hours
        var limit = Limit(name: "games", selections: ["steam"], seconds: 60)
        limit.moreTime = MoreTimePolicy(mode: .selfService, perDay: 86_400)
        limit.state = LimitState(day: ny.civil(of: t).date, used: 60, remaining: 0, running: false)
        limit.state?.window = Window(start: t - 10, end: at("2026-03-09T00:00:00-04:00"))
        let acts = [Activity.limit(limit)]
        let b = blocked("steam", acts, at: t, clock: ny)
        let d = try MoreTimeBook().decide(b, seconds: nil, activities: acts, now: t, clock: ny)
        #expect(d == .grant(start: t, end: at("2026-03-09T00:00:00-04:00"), oneMoreMinute: false))
        #expect(at("2026-03-09T00:00:00-04:00").timeIntervalSince(t) == 22.5 * 3600)
        let longer = try MoreTimeBook().decide(b, seconds: 23 * 3600, activities: acts, now: t, clock: ny)
        #expect(longer == .grant(start: t, end: at("2026-03-09T00:00:00-04:00"), oneMoreMinute: false),
                "an ask past the day's end gets the rest of the day")
    }

    @Test("M1, M4: 15 more minutes asked near midnight gets the rest of the day; the button still asks under approval")
    func nearMidnight() throws {
        let t = at("2026-12-05T23:56:00+09:00")
        var limit = Limit(name: "web", selections: ["limited"], seconds: 20)
        limit.state = LimitState(day: tokyo.civil(of: t).date, used: 20, remaining: 0, running: false)
        limit.state?.window = Window(start: t - 10, end: at("2026-12-06T00:00:00+09:00"))
        for (mode, offer) in [(MoreTimeMode.approval, MoreTimeOffer.ask), (.selfService, .grant)] {
            limit.moreTime = MoreTimePolicy(mode: mode, perDay: 1800)
            let acts = [Activity.limit(limit)]
            let b = blocked("limited", acts, at: t, clock: tokyo)
            #expect(MoreTimeBook().offer(b, activities: acts, now: t, clock: tokyo) == offer,
                    "four minutes before midnight the button is still '\(offer)', not only one more minute")
            if mode == .selfService {
                let d = try MoreTimeBook().decide(b, seconds: MoreTimeOffer.buttonSeconds, activities: acts, now: t, clock: tokyo)
                #expect(d == .grant(start: t, end: at("2026-12-06T00:00:00+09:00"), oneMoreMinute: false))
            }
        }
    }

    @Test("M3: a grant lifts a selection only while every reason is one it was given over, and only in its window")
    func grantIntersectsReasons() {
        let t = at("2026-11-29T13:00:00+09:00")
        let policy = Policy(clock: tokyo)
        let day = Activity.schedule(schedule("day", "09:00-17:00"))
        let g = Grant(id: "m1", selection: "instagram", start: t, end: t + 300, activities: ["day"], uid: 1000)
        #expect(policy.lifting(policy.desired(at: t + 10, activities: [day]), grants: [g], at: t + 10).isEmpty)
        #expect(policy.lifting(policy.desired(at: t + 300, activities: [day]), grants: [g], at: t + 300).map(\.selection) == ["instagram"],
                "blocked again at the grant's exact end")
        let later = block("focus", ["instagram"], from: "2026-11-29T13:01:00+09:00", to: "2026-11-29T14:00:00+09:00")
        #expect(policy.lifting(policy.desired(at: t + 120, activities: [day, later]), grants: [g], at: t + 120).map(\.selection) == ["instagram"],
                "a reason that began after the grant is not lifted by it")
    }

    @Test("M3, T9: the grant's start and end, a request's expiry and a delayed stop are boundaries")
    func boundaries() {
        let t = at("2026-11-29T13:00:00+09:00")
        var book = MoreTimeBook()
        book.grants = [Grant(id: "m1", selection: "x", start: t + 120, end: t + 420, activities: [], uid: 1)]
        book.requests = [MoreTimeRequest(id: "m2", selection: "y", seconds: 60, activities: [], uid: 1, reason: nil, asked: t, expires: t + 90)]
        book.loosenings = [PendingLoosening(kind: .stop, name: "w", uid: 1, asked: t, due: t + 100)]
        #expect(book.nextBoundary(after: t) == t + 90)
        #expect(book.nextBoundary(after: t + 90) == t + 100)
        #expect(book.nextBoundary(after: t + 100) == t + 120)
        #expect(book.nextBoundary(after: t + 120) == t + 420)
        #expect(book.nextBoundary(after: t + 420) == nil)
    }

    @Test("M1: schedules.d and limits.d take MoreTime=, Delay=, MoreTimePerDay=, RequestTimeout=; a bad value names file and line")
    func config() throws {
        let s = try ConfigFiles.parseSchedule(file: "s.conf", text: "[Schedule]\nName=bedtime\nWindow=22:00-07:00\nSelections=instagram\nMoreTime=approval\nDelay=2m\nRequestTimeout=15m\n")
        #expect(s.moreTime == MoreTimePolicy(mode: .approval, delay: 120, perDay: 1800, requestTimeout: 900))
        let l = try ConfigFiles.parseLimit(file: "l.conf", text: "[Limit]\nName=games\nDaily=1h\nSelections=steam\nMoreTimePerDay=10m\n")
        #expect(l.moreTime?.perDay == 600)
        #expect(l.moreTime?.mode == .selfService)
        do {
            _ = try ConfigFiles.parseSchedule(file: "s.conf", text: "[Schedule]\nName=b\nWindow=22:00-07:00\nSelections=x\nMoreTime=maybe\n")
            Issue.record("accepted MoreTime=maybe")
        } catch {
            #expect(error.message.contains("s.conf:5"))
            #expect(error.message.contains("no, self or approval"))
        }
    }

    @Test("M1: the wire form of more, approve, deny, cancel and a start's moreTime round-trips")
    func wire() throws {
        let requests: [Request] = [
            .more(.init(selection: "games", seconds: 300, reason: "homework")), .more(.init(selection: "games", today: true)),
            .requests, .approve(id: "m3", seconds: 900), .approve(id: "m3", seconds: nil), .deny(id: "m3", reason: "no"), .cancel(name: "work"),
        ]
        for r in requests { #expect(try Request.parse(r.line) == r) }
        var start = Request.StartArguments(selections: ["x"], seconds: 60)
        start.moreTime = MoreTimePolicy(mode: .approval, delay: 120)
        #expect(try Request.parse(Request.start(start).line) == .start(start))
        #expect(throws: CoreError.self) { try Request.parse(#"more {"selection":"games"}"#) }
    }
}
