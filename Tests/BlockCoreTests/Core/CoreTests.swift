import Foundation
import Testing
@testable import BlockCore

/// The core alone (STYLE: decide in the core): requests, reconciles and time as plain calls on
/// a value, with the instant given and the enforcers' report made up by the test. No queue, no
/// clock, no files: what the engine would carry out is read back from `takeEffects()`.
@Suite("Core: decisions as values, effects as data")
struct CoreTests {
    /// Root alone.
    static let directory = UsersTable.holding()

    static func core(at now: Date = at("2026-12-02T10:00:00Z")) -> Core {
        var c = Core(config: .builtIn, state: DaemonState(), timeZone: .utc, configPath: "/etc/blockd/blockd.conf", users: directory)
        c.observe(wall: now, boot: 1000)
        c.startUp(now: now)
        _ = c.takeEffects()
        return c
    }

    /// A request as the engine runs it, with the save assumed to work and enforcement
    /// answering `report` (everything enforced by default).
    static func run(_ line: String, on core: inout Core, at now: Date, report: EnforcementReport = EnforcementReport()) throws -> (JSONObject, ReconcilePlan?) {
        let request = try Request.parse(line)
        try core.authorize(request, by: .root)
        let change = try core.prepare(request, from: .root, now: now)
        core.proceed(change, now: now)
        var plan: ReconcilePlan?
        if change.reconciles {
            plan = core.planReconcile(now: now)
            core.finishReconcile(plan!, report: plan!.targets.map { _ in report }, now: now)
        }
        return (core.reply(change.answer, now: now) ?? [:], plan)
    }

    /// A core with the 'focus' block on instagram started at `t0`, its effects already taken.
    static func focusing(for seconds: Int, at t0: Date) throws -> Core {
        var core = CoreTests.core(at: t0)
        _ = try CoreTests.run(#"start {"name":"focus","selections":["instagram"],"seconds":\#(seconds)}"#, on: &core, at: t0)
        _ = core.takeEffects()
        return core
    }

    static func journal(_ effects: [Effect]) -> [String] {
        effects.compactMap { if case .journal(let e) = $0 { e.message } else { nil } }
    }

    @Test("T1, T5, T9: a start is planned for enforcement, announced after it, and arms the timer at its end")
    func startThenLock() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        let (reply, plan) = try CoreTests.run(#"start {"name":"focus","selections":["instagram"],"seconds":1800}"#, on: &core, at: t0)
        #expect(plan?.targets?.map(\.name) == ["instagram"])
        #expect(reply["outcome"] == "created" && reply["enforced"] == .bool(true))
        let effects = core.takeEffects()
        let messages = CoreTests.journal(effects)
        let started = messages.firstIndex { $0.hasPrefix("Block 'focus' started by root") }
        let locked = messages.firstIndex { $0.hasPrefix("Blocked instagram") }
        #expect(started != nil && locked != nil && started! < locked!, "the start is said before the lock: \(messages)")
        #expect(effects.contains(.armTimer(at("2026-12-02T10:30:00Z"))), "T9: the timer is armed at the block's end")
        #expect(effects.contains(.persist))
        #expect(core.applied["instagram"] != nil)
    }

    @Test("§7 Truth: what the enforcers could not enforce is not applied, not announced, and the answer says so")
    func notEnforced() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        var report = EnforcementReport()
        report.notEnforced("instagram", "the hosts file is read-only")
        let (reply, _) = try CoreTests.run(#"start {"name":"focus","selections":["instagram"],"seconds":60}"#, on: &core, at: t0, report: report)
        #expect(reply["enforced"] == .bool(false))
        #expect(core.applied["instagram"] == nil && core.notEnforced["instagram"] == "the hosts file is read-only")
        let events = core.takeEffects().compactMap { if case .event(let e) = $0 { e } else { nil } }
        #expect(!events.contains { $0.name == .lock }, "no lock event for what is not enforced")
        // The next reconcile plans enforcement again (a retry), and once it lands the lock is said.
        let plan = core.planReconcile(now: t0 + 1)
        #expect(plan.targets?.map(\.name) == ["instagram"])
        core.finishReconcile(plan, report: EnforcementReport(), now: t0 + 1)
        #expect(core.applied["instagram"] != nil)
        #expect(core.takeEffects().contains { if case .event(let e) = $0 { e.name == .lock } else { false } })
    }

    @Test("§7 Truth: a part the configuration leaves off (AppShield=no) is said, and the rest of the selection is blocked and announced")
    func blockedInPart() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        var report = EnforcementReport()
        report.partOff("discord", .apps, "its apps are not blocked: the app shield is turned off (AppShield=no)")
        let (reply, _) = try CoreTests.run(#"start {"name":"chat","selections":["discord"],"seconds":60}"#, on: &core, at: t0, report: report)
        #expect(reply["enforced"] == .bool(true), "its websites are blocked: the block is enforced")
        #expect(reply["partial"] == .array([["selection": "discord", "cause": "its apps are not blocked: the app shield is turned off (AppShield=no)"]]))
        #expect(core.applied["discord"] != nil && core.notEnforced["discord"] == nil)
        #expect(CoreTests.journal(core.takeEffects()).contains { $0.hasPrefix("Blocked discord") })
        #expect(core.partialJSON(["discord"]) == .array([["selection": "discord", "cause": "its apps are not blocked: the app shield is turned off (AppShield=no)"]]))
    }

    @Test("§7 Truth: settled over a selection's parts, a part left off leaves it blocked in part; every part off, or a failure too, leaves it not enforced",
          arguments: [
              // (domains, apps, paths, parts off, failure) -> blocked in part?, not enforced?
              (["a.test"], ["app"], [], [EnforcementReport.Part.apps], false, inPart: true, notEnforced: false),
              ([], ["app"], [], [.apps], false, inPart: false, notEnforced: true),
              ([], [], ["a.test/x"], [.pages], false, inPart: false, notEnforced: true),
              (["a.test"], [], ["a.test/x"], [.pages], false, inPart: true, notEnforced: false),
              ([], ["app"], ["a.test/x"], [.apps, .pages], false, inPart: false, notEnforced: true),
              (["a.test"], ["app"], [], [.apps], true, inPart: false, notEnforced: true),
          ] as [([String], [String], [String], [EnforcementReport.Part], Bool, inPart: Bool, notEnforced: Bool)])
    func settleParts(domains: [String], apps: [String], paths: [String], off: [EnforcementReport.Part], fails: Bool, inPart: Bool, notEnforced: Bool) {
        var report = EnforcementReport()
        for part in off { report.partOff("s", part, "its \(part.rawValue) are off") }
        if fails { report.notEnforced("s", "the hosts file is read-only") }
        report.settle(targets: [Selection(name: "s", domains: domains, apps: apps, paths: paths)])
        #expect((report.partsOff["s"] != nil) == inPart && (report.notEnforced["s"] != nil) == notEnforced, "\(report)")
        if notEnforced && !fails { #expect(report.notEnforced["s"] == off.sorted().map { "its \($0.rawValue) are off" }.joined(separator: "; ")) }
        if fails { #expect(report.notEnforced["s"] == "the hosts file is read-only") }
    }

    @Test("T5: with nothing changed a reconcile plans no enforcement and announces nothing")
    func idempotent() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = try CoreTests.focusing(for: 60, at: t0)
        let plan = core.planReconcile(now: t0 + 10)
        #expect(plan.targets == nil)
        let done = core.finishReconcile(plan, report: nil, now: t0 + 10)
        #expect(done.locks.isEmpty && done.unlocks.isEmpty && done.reports.isEmpty)
        #expect(CoreTests.journal(core.takeEffects()).isEmpty)
    }

    @Test("T5: at its end a block is planned away, and the unlock is said with its reason")
    func unlockAtEnd() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = try CoreTests.focusing(for: 60, at: t0)
        let end = t0 + 60
        let plan = core.planReconcile(now: end)
        #expect(plan.targets?.isEmpty == true, "enforcement is asked for the empty set")
        let done = core.finishReconcile(plan, report: EnforcementReport(), now: end)
        #expect(done.unlocks == ["instagram"])
        #expect(core.applied.isEmpty)
        let effects = core.takeEffects()
        #expect(CoreTests.journal(effects).contains { $0.hasPrefix("Unblocked instagram: timed block 'focus' ended") }, "\(CoreTests.journal(effects))")
        #expect(effects.contains(.armTimer(nil)), "T9: nothing left to wake for")
    }

    @Test("§7: a change that cannot be saved is put back whole from its mark")
    func restore() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        _ = core.registry.takeChanges()
        let (mark, before) = (core.mark(), core.state)
        let change = try core.prepare(try Request.parse(#"start {"name":"focus","selections":["instagram"],"seconds":60}"#), from: .root, now: t0)
        #expect(change.saves && change.reconciles)
        #expect(core.registry.activity(named: "focus") != nil)
        core.restore(mark)
        #expect(core.registry.activity(named: "focus") == nil)
        #expect(core.state == before)
    }

    @Test("T6: a wall-clock step shifts every block by it, and is said once")
    func wallStep() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        _ = try CoreTests.run(#"start {"name":"focus","selections":["instagram"],"seconds":600}"#, on: &core, at: t0)
        _ = core.takeEffects()
        // 100 s of boot time pass while the wall clock jumps an hour ahead.
        core.observe(wall: t0 + 3700, boot: 1100)
        guard case .block(let b)? = core.registry.activity(named: "focus") else { Issue.record("the block is gone"); return }
        #expect(b.end == t0 + 600 + 3600, "the block keeps its remaining elapsed time")
        #expect(CoreTests.journal(core.takeEffects()).contains { $0.hasPrefix("The wall clock was stepped by +3600 s") })
        core.observe(wall: t0 + 3701, boot: 1101)
        #expect(core.takeEffects().isEmpty, "the same offset is no step")
    }

    @Test("§5: a name typed in another case than the activity's finds it when only its lower case does ('stop Pinterest' after 'start Pinterest')")
    func stopInAnyCase() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        let (started, _) = try CoreTests.run(#"start {"selections":["Instagram"],"seconds":600}"#, on: &core, at: t0)
        #expect(started["name"] == "instagram", "the block is named after the selection: \(started)")
        let (stopped, _) = try CoreTests.run(#"stop {"name":"Instagram"}"#, on: &core, at: t0 + 10)
        #expect(stopped["stopped"] == "instagram")
        _ = try CoreTests.run(#"start {"name":"Focus","selections":["reddit"],"seconds":600}"#, on: &core, at: t0 + 20)
        _ = try CoreTests.run(#"start {"name":"focus","selections":["reddit"],"seconds":600}"#, on: &core, at: t0 + 20)
        let (exact, _) = try CoreTests.run(#"stop {"name":"Focus"}"#, on: &core, at: t0 + 30)
        #expect(exact["stopped"] == "Focus", "a name that matches as typed is taken as typed")
        #expect(core.registry.activity(named: "focus") != nil)
    }

    @Test("M2: a stop of a block with Delay= waits; at its due instant the core hands it back as the asker's request")
    func delayedStop() throws {
        let t0 = at("2026-12-02T10:00:00Z")
        var core = CoreTests.core(at: t0)
        _ = try CoreTests.run(#"start {"name":"focus","selections":["instagram"],"seconds":3600,"moreTime":{"mode":"self","delay":300}}"#, on: &core, at: t0)
        let (reply, _) = try CoreTests.run(#"stop {"name":"focus"}"#, on: &core, at: t0 + 10)
        #expect(reply["kind"] == "stop")
        #expect(core.registry.activity(named: "focus") != nil, "it is not stopped yet")
        #expect(core.takeDueLoosenings(now: t0 + 309).isEmpty)
        let due = core.takeDueLoosenings(now: t0 + 310)
        #expect(due.map(\.request) == [.stop(name: "focus")] && due.first?.peer.uid == 0)
        #expect(core.book.loosenings.isEmpty)
    }
}
