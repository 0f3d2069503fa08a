import BlockCore
import BlockTestSupport
import Foundation
import Synchronization
import Testing
@testable import BlockDaemon
import BlockTestTools

/// W2's network part through the cut enforcer, with an injected lookup and no nftables table
/// (a real one is torture/allow_only_net.py's, inside a namespace): what it looks up, when it
/// asks again, where an answer goes, and what it says when the table is off.
@Suite("W2 connections in the cut enforcer: lookups of the allowed hosts, the refresh, Firewall=no")
struct FeltAllowOnlyTests {
    final class Asked: Sendable { let names = Mutex<[String]>([]) }

    static func enforcer(_ asked: Asked, firewall: Bool = true, log: MemorySink = MemorySink()) -> FeltEnforcer {
        let settings = DaemonConfig.FeltSettings(connectGraceSeconds: 3, firewall: firewall, cutSockets: true, resolvConf: "/nonexistent")
        return FeltEnforcer(settings: settings, log: log, table: (nil, "nftables is not usable here (test)"),
                            lookup: { name in
                                asked.names.withLock { $0.append(name) }
                                return DNSClient.Lookup(addresses: [IPAddress(name.hasSuffix("school.test") ? "192.0.2.10" : "192.0.2.99")!])
                            },
                            cutter: { _, _ in SocketCutter.Result(destroyed: 0, matched: 0) }, monotonic: { 0 })
    }

    static func window(_ allowed: [String], users: [UInt32]? = nil) -> Selection {
        var s = Selection(name: AllowOnly.name(allowing: allowed))
        s.allowed = allowed.map { Selection(name: $0, domains: [$0]) }
        s.users = users
        return s
    }

    @Test("W2: a name is looked up in the lane of the first window asking for it, windows for everyone first, each once")
    func jobs() {
        let windows = AllowOnlyNet.windows([Self.window(["editor.test"], users: [1001]), Self.window(["school.test", "editor.test"])])
        let jobs = FeltEnforcer.windowJobs(windows)
        #expect(jobs.map(\.domain) == ["editor.test", "www.editor.test", "m.editor.test", "school.test", "www.school.test", "m.school.test"])
        #expect(jobs.allSatisfy { $0.users == nil }, "the window for everyone holds every name: the front queue")
        let only = FeltEnforcer.windowJobs(AllowOnlyNet.windows([Self.window(["editor.test"], users: [1001])]), only: ["editor.test"])
        #expect(only == [LookupQueue.Job("editor.test", users: [1001])], "a per-user window's names wait in its users' lane")
    }

    @Test("W2: Firewall=no (or no nftables): no lookup, a warning once, allowOnlyProblem in status, never 'not enforced'")
    func firewallOff() async {
        let asked = Asked(), log = MemorySink()
        let felt = Self.enforcer(asked, log: log)
        defer { _ = felt.release() }
        let report = felt.enforce(blocked: [Self.window(["school.test"])])
        _ = felt.enforce(blocked: [Self.window(["school.test"])])
        #expect(report == EnforcementReport(), "the names are the NSS module's; nothing here makes the window not enforced")
        #expect(Run.eventually { felt.queue.sync { felt.lookupQueue.queued + felt.lookupQueue.runningCount == 0 } }, "no lookup waits or runs")
        #expect(asked.names.withLock { $0 }.isEmpty, "nothing would use the answer")
        let warnings = log.entries.filter { $0.message.hasPrefix("Allow-only time does not refuse connections") }
        #expect(warnings.count == 1 && warnings.first?.message.contains("nftables is not usable here (test)") == true,
                "\(log.entries.map(\.message))")
        var firewall = felt.notes(wallNow: Date(), iso: { "\($0)" })["firewall"]?.object ?? [:]
        #expect(firewall["allowOnly"] == nil && firewall["allowOnlyProblem"]?.string?.hasSuffix("nftables is not usable here (test)") == true,
                "\(firewall)")
        _ = felt.enforce(blocked: [])
        firewall = felt.notes(wallNow: Date(), iso: { "\($0)" })["firewall"]?.object ?? [:]
        #expect(firewall["allowOnlyProblem"] == nil, "no window, nothing to say: \(firewall)")
    }

    @Test("W2: an allowed host's answer joins its window's addresses; the refresh asks every name again while the window lasts")
    func learnAndRefresh() async {
        let asked = Asked()
        let felt = Self.enforcer(asked)
        defer { _ = felt.release() }
        // No table here, so the windows are set as `enforce` sets them with one.
        felt.refreshSeconds = 0.05
        let jobs: [LookupQueue.Job] = felt.queue.sync {
            let jobs = felt.updateWindows([])  // nothing without windows
            _ = felt.net.update(windows: AllowOnlyNet.windows([Self.window(["school.test"])]))
            felt.armRefresh()
            return jobs
        }
        #expect(jobs.isEmpty)
        for _ in 0..<200 where asked.names.withLock({ $0.filter { $0 == "school.test" }.count }) < 2 {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let names = asked.names.withLock { $0 }
        #expect(names.filter { $0 == "school.test" }.count >= 2 && Set(names) == ["school.test", "www.school.test", "m.school.test"],
                "each name asked again by the refresh: \(names)")
        let learned = felt.queue.sync { felt.net.learned }
        #expect(learned["www.school.test"] == [IPAddress("192.0.2.10")!], "the answers went to the window: \(learned)")
        felt.queue.sync {
            _ = felt.net.update(windows: [])
            felt.armRefresh()
        }
        let count = asked.names.withLock { $0.count }
        // The barrier: a witness on the enforcer's queue four refresh periods on (a refresh still
        // armed would have run before it), then every lookup started by then finished.
        let witness = Mutex(false)
        felt.queue.asyncAfter(deadline: .now() + 4 * felt.refreshSeconds) { witness.withLock { $0 = true } }
        #expect(Run.eventually { witness.withLock { $0 } && felt.queue.sync { felt.lookupQueue.queued + felt.lookupQueue.runningCount == 0 } })
        #expect(asked.names.withLock { $0.count } <= count + 3, "no window, no refresh (at most the lookups already running finish)")
        #expect(felt.queue.sync { felt.refresh == nil })
    }
}
