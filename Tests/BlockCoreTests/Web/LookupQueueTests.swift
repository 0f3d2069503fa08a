import Testing
@testable import BlockCore

/// E5 with per-user blocks (U3): the order of the DNS lookups that make a block felt at once.
/// Machine-wide first, then each user's in turn, each user within a budget.
@Suite("E5 lookup order: machine-wide first, then per user in turn, within budgets")
struct LookupQueueTests {
    static let kid: [UInt32] = [1001], kid2: [UInt32] = [1002], kid3: [UInt32] = [1003]

    static func names(_ prefix: String, _ n: Int) -> [String] { (0..<n).map { "\(prefix)\($0)" } }
    static func jobs(_ prefix: String, _ n: Int, _ users: [UInt32]?) -> [LookupQueue.Job] {
        names(prefix, n).map { LookupQueue.Job($0, users: users) }
    }

    /// Runs the queue to the end with workers that answer in the order they were asked; the
    /// domains in the order their lookups started.
    static func drain(_ q: inout LookupQueue) -> [String] {
        var running = q.start(), order = running.map(\.domain)
        while !running.isEmpty {
            q.finish(running.removeFirst())
            let more = q.start()
            order += more.map(\.domain)
            running += more
        }
        return order
    }

    @Test("a machine-wide lookup starts at once, whatever members have queued or hung", arguments: [
        // (members with a backlog, the limits): per-user lookups never take the reserved worker.
        ([kid], LookupQueue.Limits.standard),
        ([kid, kid2], LookupQueue.Limits.standard),
        ([kid, kid2, kid3], LookupQueue.Limits.standard),
        ([kid, kid2, kid3], LookupQueue.Limits(workers: 2, reserved: 1, perUserRunning: 1, perUserQueued: 10, perChange: 100)),
    ])
    func machineWideAtOnce(members: [[UInt32]], limits: LookupQueue.Limits) {
        var q = LookupQueue(limits: limits)
        for (i, uids) in members.enumerated() {
            _ = q.add(Self.jobs("m\(i)-", 180, uids))
            _ = q.start()  // these never finish: a resolver that hangs
        }
        #expect(q.runningCount <= limits.workers - limits.reserved)
        _ = q.add([LookupQueue.Job("youtube.test")])
        #expect(q.start() == [LookupQueue.Job("youtube.test")])
    }

    @Test("machine-wide lookups go ahead of every queued per-user one, and a promoted one moves to the front")
    func priority() {
        var q = LookupQueue(limits: LookupQueue.Limits(workers: 1, reserved: 0, perUserRunning: 1, perUserQueued: 100, perChange: 100))
        _ = q.add(Self.jobs("k", 3, Self.kid))
        let first = q.start()
        #expect(first == [LookupQueue.Job("k0", users: Self.kid)])
        _ = q.add([LookupQueue.Job("a.test"), LookupQueue.Job("k2")])  // k2's block is for everyone now
        q.finish(first[0])
        #expect(Self.drain(&q) == ["a.test", "k2", "k1"])
    }

    @Test("members take turns; one who joins late goes before those who have had theirs", arguments: [
        // (limits, changes in order: the uids and how many names, the start order expected)
        (LookupQueue.Limits(workers: 1, reserved: 0, perUserRunning: 1, perUserQueued: 100, perChange: 100),
         [(kid, 3), (kid2, 2), (kid3, 1)], ["k0", "l0", "m0", "k1", "l1", "k2"]),
        (LookupQueue.Limits(workers: 2, reserved: 0, perUserRunning: 1, perUserQueued: 100, perChange: 100),
         [(kid, 3), (kid2, 3)], ["k0", "l0", "k1", "l1", "k2", "l2"]),
        (LookupQueue.Limits(workers: 3, reserved: 0, perUserRunning: 2, perUserQueued: 100, perChange: 100),
         [(kid, 4), (kid2, 1)], ["k0", "k1", "l0", "k2", "k3"]),
    ])
    func roundRobin(limits: LookupQueue.Limits, changes: [([UInt32], Int)], expected: [String]) {
        var q = LookupQueue(limits: limits)
        var order: [String] = []
        var running: [LookupQueue.Job] = []
        for (uids, n) in changes {
            let prefix = uids == Self.kid ? "k" : uids == Self.kid2 ? "l" : "m"
            _ = q.add(Self.jobs(prefix, n, uids))
            let started = q.start()
            order += started.map(\.domain)
            running += started
        }
        while !running.isEmpty {
            q.finish(running.removeFirst())
            let more = q.start()
            order += more.map(\.domain)
            running += more
        }
        #expect(order == expected)
    }

    @Test("a member's running lookups count against their share only")
    func perUserRunning() {
        var q = LookupQueue()  // 4 workers, 1 reserved, 2 per user
        _ = q.add(Self.jobs("k", 10, Self.kid))
        #expect(q.start().count == 2, "kid runs two")
        _ = q.add(Self.jobs("l", 10, Self.kid2))
        #expect(q.start().map(\.domain) == ["l0"], "kid2 gets the third per-user worker")
        _ = q.add(Self.jobs("m", 10, Self.kid3))
        #expect(q.start().isEmpty, "the fourth is kept for machine-wide lookups")
        #expect(q.runningCount == 3)
    }

    @Test("budgets: a member's queue is bounded and the excess counted; the change's bound is shared fairly", arguments: [
        // (limits, one change's per-user jobs, dropped expected, queued per lane expected)
        (LookupQueue.Limits(workers: 4, reserved: 1, perUserRunning: 2, perUserQueued: 5, perChange: 100),
         [(kid, 12)], LookupQueue.Dropped(overBudget: [kid: 7]), [kid: 5]),
        (LookupQueue.Limits(workers: 4, reserved: 1, perUserRunning: 2, perUserQueued: 5, perChange: 100),
         [(kid, 12), (kid2, 3)], LookupQueue.Dropped(overBudget: [kid: 7]), [kid: 5, kid2: 3]),
        (LookupQueue.Limits(workers: 4, reserved: 1, perUserRunning: 2, perUserQueued: 100, perChange: 6),
         [(kid, 12), (kid2, 2)], LookupQueue.Dropped(overChange: 8), [kid: 4, kid2: 2]),
    ])
    func budgets(limits: LookupQueue.Limits, change: [([UInt32], Int)], dropped: LookupQueue.Dropped, queued: [[UInt32]: Int]) {
        var q = LookupQueue(limits: limits)
        let jobs = change.flatMap { uids, n in Self.jobs("\(uids[0])-", n, uids) }
        #expect(q.add(jobs) == dropped)
        #expect(q.lanes.mapValues(\.count) == queued)
    }

    @Test("a member's 12 blocks of 180 names: 256 wait, the rest is dropped and counted, change by change")
    func reportedBacklog() {
        var q = LookupQueue()
        var dropped = 0
        for b in 0..<12 {
            dropped += q.add(Self.jobs("kid\(b)-", 180, Self.kid)).overBudget[Self.kid] ?? 0
            _ = q.start()  // the resolver hangs: nothing finishes
        }
        #expect(q.runningCount == 2 && q.lanes[Self.kid]?.count == 256)
        #expect(dropped == 12 * 180 - 256 - 2)
    }

    @Test("the change's bound: 3,000 machine-wide names, 1,024 queued and the rest counted")
    func perChange() {
        var q = LookupQueue()
        #expect(q.add(Self.jobs("d", 3000, nil)) == LookupQueue.Dropped(overChange: 3000 - 1024))
        #expect(q.queued == 1024)
    }

    @Test("nothing is looked up twice at once; an unblocked domain's waiting lookup goes, a running one finishes")
    func dedupAndRetain() {
        var q = LookupQueue(limits: LookupQueue.Limits(workers: 1, reserved: 0, perUserRunning: 1, perUserQueued: 100, perChange: 100))
        _ = q.add([LookupQueue.Job("a"), LookupQueue.Job("b"), LookupQueue.Job("c", users: Self.kid)])
        let a = q.start()
        #expect(a == [LookupQueue.Job("a")])
        #expect(q.add([LookupQueue.Job("a"), LookupQueue.Job("b"), LookupQueue.Job("c", users: Self.kid)]) == LookupQueue.Dropped())
        #expect(q.queued == 2, "a runs, b and c wait once each")
        q.retain { $0 != "b" && $0 != "c" }
        #expect(q.queued == 0 && q.turns.isEmpty && q.lanes.isEmpty)
        q.finish(a[0])
        #expect(q.runningCount == 0 && q.start().isEmpty)
        _ = q.add([LookupQueue.Job("a")])
        #expect(q.start() == [LookupQueue.Job("a")], "blocked again after its lookup finished: looked up again")
    }

    @Test("a lane that refills while its lookups run keeps its place behind the others")
    func refillKeepsTurn() {
        var q = LookupQueue(limits: LookupQueue.Limits(workers: 1, reserved: 0, perUserRunning: 1, perUserQueued: 100, perChange: 100))
        _ = q.add([LookupQueue.Job("k0", users: Self.kid)])
        let k0 = q.start()
        _ = q.add([LookupQueue.Job("l0", users: Self.kid2), LookupQueue.Job("l1", users: Self.kid2)])
        _ = q.add([LookupQueue.Job("k1", users: Self.kid)])  // kid's lane refills while k0 runs
        q.finish(k0[0])
        #expect(Self.drain(&q) == ["l0", "k1", "l1"])
    }
}
