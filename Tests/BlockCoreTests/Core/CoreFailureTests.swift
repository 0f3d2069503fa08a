import Foundation
import Testing
@testable import BlockCore

/// T4 on the core: a refusal is told, not kept as a failure; a failure that is a condition
/// (a configuration that does not load, a configured activity not in force, an enforcer that
/// cannot do its part) is recorded once while it lasts and resolved by the later success of the
/// same thing; `status` shows the current ones, `failures` the resolved ones too.
@Suite("T4: refusals are no failures; a failure clears when its cause is gone")
struct CoreFailureTests {
    static let member = Peer(uid: 1000, mayModify: true)

    static func current(_ d: FakeEdge) -> [FailureRecord] { d.core.state.failures.filter(\.isCurrent) }

    @Test("T4: refusals (a locked stop, a member stopping root's block, a reader starting one) are told to the journal and watchers, and none is a failure",
          arguments: [
              (#"stop {"name":"focus"}"#, Peer.root, ErrorCode.locked),
              (#"stop {"name":"open"}"#, CoreFailureTests.member, .permissionDenied),
              (#"start {"selections":["youtube"],"seconds":60}"#, Peer(uid: 1002, mayModify: false), .permissionDenied),
          ])
    func refusalsAreNotFailures(line: String, peer: Peer, code: ErrorCode) {
        var d = FakeEdge(users: FakeEdge.users())
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"focus","lock":true}"#))
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":3600,"name":"open"}"#))
        guard case .error(let e) = d.run(line, as: peer) else { Issue.record("\(line) was not refused"); return }
        #expect(e.code == code)
        #expect(d.core.state.failures.isEmpty, "a refusal is the rules working: \(d.core.state.failures)")
        #expect(d.entries(.refusal).count == 1 && d.events("refusal").count == 1, "still told, once")
        #expect(d.entries(.failure).isEmpty && d.events("failure").isEmpty)
    }

    @Test("T4, §7: a failed reload is one failure while the files stay broken, and the reload that loads resolves it (it used to stay listed)")
    func reloadFailureResolves() throws {
        var d = FakeEdge()
        d.files = .failure(CoreError(.invalidConfig, "/etc/blockd/blockd.conf:3: nonsense"))
        for _ in 0..<3 { _ = d.run("reload") }
        #expect(Self.current(d).map(\.code) == ["invalid-config"], "the same broken file three times is one failure")
        #expect(d.entries(.failure).count == 1)
        d.advance(60)
        d.files = .success(.builtIn)
        _ = try #require(ok(d.run("reload")))
        #expect(Self.current(d).isEmpty, "status shows none")
        let resolved = try #require(d.core.state.failures.first)
        #expect(resolved.resolved == d.now && resolved.cause == "config", "failures keeps it, resolved at the good reload")
        #expect(d.journal.contains { $0.message.hasPrefix("Resolved (recorded ") && $0.message.contains("nonsense") })
        // A later break is a new failure, not the old one come back.
        d.files = .failure(CoreError(.invalidConfig, "/etc/blockd/blockd.conf:4: more nonsense"))
        _ = d.run("reload")
        #expect(Self.current(d).map(\.message) == ["reload failed, the previous configuration stays in force: /etc/blockd/blockd.conf:4: more nonsense"])
        #expect(d.core.state.failures.count == 2)
    }

    @Test("T4: a configured schedule not in force (Users= names nobody) is a failure until a reload puts it in force or drops it")
    func configuredActivityResolves() throws {
        var d = FakeEdge(users: FakeEdge.users(["kid": 1001]))
        var ghost = Schedule(name: "ghost", selections: ["reddit"], start: WallTime(hour: 19, minute: 0), end: WallTime(hour: 7, minute: 0),
                             origin: .config(file: "/etc/blockd/schedules.d/ghost.conf"))
        ghost.users = Scope(names: ["nosuchuser"])
        var broken = ConfigSet.builtIn
        broken.schedules = [ghost]
        d.files = .success(broken)
        _ = d.run("reload")
        _ = d.run("reload")
        #expect(Self.current(d).count == 1 && Self.current(d).first?.activity == "ghost", "once while it lasts: \(d.core.state.failures)")
        ghost.users = Scope(names: ["kid"])
        var fixed = ConfigSet.builtIn
        fixed.schedules = [ghost]
        d.files = .success(fixed)
        _ = try #require(ok(d.run("reload")))
        #expect(Self.current(d).isEmpty && d.core.state.failures.first?.resolved == d.now)
    }

    @Test("T4: an enforcement failure is recorded once while the enforcer reports it, and resolved by the apply that no longer does")
    func enforcementFailureResolves() throws {
        var d = FakeEdge()
        d.failing = ["reddit": "cannot write /etc/hosts: No space left on device"]
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":3600}"#))
        d.enforcementChanged()
        d.enforcementChanged()
        #expect(Self.current(d).map(\.activity) == ["reddit"], "\(d.core.state.failures)")
        d.failing = [:]
        d.advance(5)
        d.enforcementChanged()
        #expect(Self.current(d).isEmpty)
        #expect(d.core.state.failures.count == 1 && d.core.state.failures[0].resolved == d.now)
    }

    @Test("T4: a failure that is an event (a hook, a repaired edit) has no cause and stays until cleared")
    func eventsStay() throws {
        var d = FakeEdge()
        d.core.recordFailure(CoreError(.hookFailed, "ExecOnBlock= of 'reddit' (false) exited 1"), uid: nil, activity: "reddit", now: d.now)
        d.files = .success(.builtIn)
        _ = try #require(ok(d.run("reload")))
        d.enforcementChanged()
        #expect(Self.current(d).map(\.code) == ["hook-failed"])
        _ = try #require(ok(d.run("failures-clear")))
        #expect(d.core.state.failures.isEmpty)
    }

    @Test("T4: over the bound the oldest resolved failures go first, so history never pushes out a current one")
    func boundDropsResolvedFirst() {
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        var records = [FailureRecord(time: t, code: "internal", message: "current, oldest")]
        records += (0..<FailureRecord.limit).map { FailureRecord(time: t + Double($0), code: "internal", message: "old \($0)", cause: "config", resolved: t + 1000) }
        records.append(FailureRecord(time: t + 2000, code: "internal", message: "current, newest"))
        let kept = FailureRecord.bounded(records)
        #expect(kept.count == FailureRecord.limit)
        #expect(kept.first?.message == "current, oldest" && kept.last?.message == "current, newest")
        #expect(!kept.contains { $0.message == "old 0" || $0.message == "old 1" } && kept.contains { $0.message == "old 2" })
    }
}
