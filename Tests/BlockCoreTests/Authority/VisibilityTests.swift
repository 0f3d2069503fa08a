import Testing
@testable import BlockCore

/// A1, §5: what of an answer a caller sees, cut on typed values (`Authority.view`) before it is
/// rendered: a member their own failures and more time and the daemon's failures; root and
/// administrators everything.
@Suite("A1: who sees which failures and more time")
struct VisibilityTests {
    static let lists = RequestsReply(
        requests: [MoreTimeRequestReply(id: "m1", selection: "games", asked: nil, expires: nil, uid: 1001),
                   MoreTimeRequestReply(id: "m2", selection: "games", asked: nil, expires: nil, uid: 1002)],
        grants: [GrantReply(id: "g1", selection: "games", start: nil, end: nil, uid: 1002),
                 GrantReply(id: "g2", selection: "video", start: nil, end: nil, uid: 1001)],
        delayed: [DelayedReply(name: "focus", kind: .stop, uid: 1002, at: nil), DelayedReply(name: "kidblock", kind: .stop, uid: 1001, at: nil)])
    static let failures = [FailureReply(time: nil, code: "hosts", message: "the daemon's"),
                           FailureReply(time: nil, code: "x", message: "kid's", uid: 1001),
                           FailureReply(time: nil, code: "y", message: "kid2's", uid: 1002)]

    @Test("A1: a member sees their own requests, grants, delayed loosenings and failures and the daemon's failures; an administrator (nil) all of them",
          arguments: [
              (viewer: 1001 as UInt32?, requests: ["m1"], grants: ["g2"], delayed: ["kidblock"], failures: ["the daemon's", "kid's"]),
              (viewer: 1002 as UInt32?, requests: ["m2"], grants: ["g1"], delayed: ["focus"], failures: ["the daemon's", "kid2's"]),
              (viewer: 4242 as UInt32?, requests: [String](), grants: [String](), delayed: [String](), failures: ["the daemon's"]),
              (viewer: nil as UInt32?, requests: ["m1", "m2"], grants: ["g1", "g2"], delayed: ["focus", "kidblock"],
               failures: ["the daemon's", "kid's", "kid2's"]),
          ])
    func view(viewer: UInt32?, requests: [String], grants: [String], delayed: [String], failures: [String]) {
        let lists = Authority.view(viewer, Self.lists)
        #expect(lists.requests.map(\.id) == requests && lists.grants.map(\.id) == grants && lists.delayed.map(\.name) == delayed)
        #expect(Authority.view(viewer, Self.failures).map(\.message) == failures)
        let document = StatusDocument(answeredAt: "", timeZone: "UTC", blocked: [], activities: [], failures: Self.failures, all: false,
                                      counts: StatusCounts(activities: 0, active: 0, blocks: 0, schedules: 0, limits: 0),
                                      enforcement: [:], nextTransition: nil, maxActivities: 1, server: [:], moreTime: Self.lists,
                                      screen: [ScreenReply(user: "kid", uid: 1001, held: true, activity: "bedtime", kind: "schedule", until: "x", action: "lock"),
                                               ScreenReply(user: "kid2", uid: 1002, held: true, activity: "bedtime", kind: "schedule", until: "x", action: "lock")])
        let seen = Authority.view(viewer, document)
        #expect(seen.moreTime == lists && seen.failures.map(\.message) == failures, "status is cut the same way")
        #expect(seen.screen.map(\.user) == (viewer.map { $0 == 1001 ? ["kid"] : $0 == 1002 ? ["kid2"] : [] } ?? ["kid", "kid2"]),
                "who is kept off the screen: one's own only")
        let rendered = StatusReply(seen.json)
        #expect(rendered.moreTime.requests.map(\.id) == requests, "what is rendered is what was cut")
        #expect(rendered.screen == seen.screen)
    }
}
