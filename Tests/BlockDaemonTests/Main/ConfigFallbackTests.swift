import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

/// §7: a block or schedule never loses its effect because the configuration changed or
/// broke; one daemon per state directory.
@Suite("§7: configuration fallback, kept targets, one daemon per state dir")
struct ConfigFallbackTests {
    static func foo(domains: String = "foo.example www.foo.example") -> ConfigSet {
        try! ConfigSet.load(daemonFile: nil, selectionFiles: [ConfigSource(path: "/etc/blockd/selections.d/foo.conf", text: """
            [Selection]
            Name=foo
            Domains=\(domains)
            """)], scheduleFiles: [ConfigSource(path: "/etc/blockd/schedules.d/day.conf", text: """
            [Schedule]
            Name=allday
            Window=13:05-13:05
            Selections=foo
            """)])
    }

    @Test("§7: a broken file at start runs on the last good configuration (its selections and schedules), and says so")
    func lastGoodAtStart() throws {
        let dir = Harness.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/selections.d", withIntermediateDirectories: true)
        try "[Selection]\nName=b\nDomains=bad_domain.com\n".write(toFile: dir + "/selections.d/b.conf", atomically: true, encoding: .utf8)
        let good = StoredConfig(ConfigFallbackTests.foo(), at: iso("2026-11-28T10:00:00Z"))
        let flags = DaemonConfig.Layer(hostsFile: "/tmp/hosts")
        let (config, provenance) = Daemon.loadConfig(ConfigDirectory(dir), flags: flags, lastGood: good)
        #expect(provenance.kind == .lastGood)
        #expect(provenance.problem?.contains("b.conf") == true)
        #expect(provenance.problem?.contains("last good configuration") == true)
        #expect(config.catalog.selection(named: "foo")?.domains == ["foo.example", "www.foo.example"])
        #expect(config.schedules.map(\.name) == ["allday"])
        #expect(config.daemon.hostsFile == "/tmp/hosts", "flags still win")
        let (builtIn, none) = Daemon.loadConfig(ConfigDirectory(dir), flags: flags, lastGood: nil)
        #expect(none.kind == .builtIn)
        #expect(builtIn.catalog.selection(named: "foo") == nil)
    }

    /// The schedule's file replaced by a symlink loop used to read as "no
    /// file", so the reload succeeded and lifted the schedule in force.
    @Test("§7: a reload that meets a *.conf it cannot read (a symlink loop, a symlink to nothing) fails, says which, and keeps the schedule in force")
    func reloadKeepsUnreadable() throws {
        for target in ["day.conf", "/nonexistent"] {
            let dir = Harness.tempDir()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            for sub in ["selections.d", "schedules.d"] { try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true) }
            try "[Selection]\nName=foo\nDomains=foo.example www.foo.example\n".write(toFile: dir + "/selections.d/foo.conf", atomically: true, encoding: .utf8)
            #expect(symlink(target, dir + "/schedules.d/day.conf") == 0)
            let h = Harness()
            h.engine = h.makeEngine(config: ConfigFallbackTests.foo(), loader: { () throws(CoreError) -> ConfigSet in try ConfigDirectory(dir).load() })
            h.run { h.engine.startUp() }
            #expect(h.enforcer.current == ["foo"], "the schedule allday is in force")
            guard case .error(let error) = h.send("reload") else { Issue.record("reload answered OK for a \(target) link"); continue }
            #expect(error.code == .invalidConfig && error.message.contains(dir + "/schedules.d/day.conf: cannot be read"), "\(error.message)")
            #expect(h.enforcer.current == ["foo"], "the last good configuration stays: the schedule is not lifted")
            #expect(!h.log.entries.contains { $0.message.contains("ended") }, "\(h.log.entries.map(\.message))")
        }
    }

    @Test("§7: the last good configuration keeps every [Daemon] setting, so a broken file cannot turn the firewall or browser policies back on")
    func lastGoodKeepsDaemonSettings() throws {
        var config = ConfigFallbackTests.foo()
        config.daemon.felt = .init(connectGraceSeconds: 30, firewall: false, cutSockets: false, resolvConf: "/srv/resolv.conf")
        config.daemon.browserPolicies = false
        config.daemon.policyRoot = "/srv/root"
        config.daemon.firefoxPolicies = "/srv/ff.json"
        let stored = try JSONDecoder().decode(StoredConfig.self, from: JSONEncoder().encode(StoredConfig(config, at: iso("2026-11-28T10:00:00Z"))))
        let again = stored.configSet(flags: DaemonConfig.Layer(cutSockets: true)).daemon
        #expect(again.felt == .init(connectGraceSeconds: 30, firewall: false, cutSockets: true, resolvConf: "/srv/resolv.conf"), "flags still win")
        #expect(again.browserPolicies == false && again.policyRoot == "/srv/root" && again.firefoxPolicies == "/srv/ff.json")
    }

    @Test("§7: the configuration that loaded is saved as the last good one, and status names where the configuration came from")
    func lastGoodIsSaved() throws {
        let h = Harness(config: ConfigFallbackTests.foo())
        guard case .loaded(let s) = StateStore(directory: h.dir).load(now: h.clock.wallNow()) else { Issue.record("no state"); return }
        #expect(s.lastGoodConfig?.selections.map(\.name) == ["foo"])
        #expect(s.lastGoodConfig?.schedules.map(\.name) == ["allday"])
        #expect(h.run { h.engine.status(now: h.clock.wallNow()) }["enforcement"]?["config"] == "files")
    }

    @Test("§7: a reload that removes a selection an active --lock block uses keeps its targets until the block ends, logged")
    func reloadKeepsTargets() throws {
        let h = Harness()
        h.engine = h.makeEngine(config: ConfigFallbackTests.foo(), loader: { () throws(CoreError) -> ConfigSet in .builtIn })
        h.run { h.engine.startUp() }
        _ = ok(h.send(#"start {"selections":["foo"],"seconds":3600,"lock":true,"name":"focus"}"#))
        _ = ok(h.send("reload"))
        #expect(h.enforcer.current == ["foo"])
        #expect(h.run { h.engine.core.resolved["foo"]?.domains } == ["foo.example", "www.foo.example"])
        let note = h.log.entries.first { $0.message.contains("was removed from the configuration") }
        #expect(note?.message == "Selection 'foo' was removed from the configuration; block 'focus' keeps its targets until it ends at 14:05:00")
        // A restart on a configuration without foo still enforces its domains (they are in the state file).
        h.engine = h.makeEngine(config: .builtIn)
        h.run { h.engine.startUp() }
        #expect(h.enforcer.current == ["foo"])
        #expect(h.run { h.engine.core.resolved["foo"]?.domains } == ["foo.example", "www.foo.example"])
        #expect(h.run { h.engine.core.state.failures }.isEmpty)
        h.advance(3600)
        #expect(h.enforcer.current == [])
        #expect(h.run { h.engine.core.state.targets["foo"] } == nil, "the kept targets go with the block")
    }

    @Test("§7 Truth: a schedule whose selection was removed before its window starts is not enforced, with its cause, and never 'Blocked' (it used to be applied with no domain written)")
    func removedSelectionIsNotEnforced() throws {
        let h = Harness(now: "2026-11-29T10:00:00+09:00")
        let evening = try! ConfigSet.load(daemonFile: nil, selectionFiles: [ConfigSource(path: "/etc/blockd/selections.d/myset.conf", text: """
            [Selection]
            Name=myset
            Domains=myset.example
            """)], scheduleFiles: [])
        h.engine = h.makeEngine(config: evening, loader: { () throws(CoreError) -> ConfigSet in .builtIn })
        h.run { h.engine.startUp() }
        _ = ok(h.send(#"schedule-add {"name":"evening","window":"11:00-12:00","selections":["myset"]}"#))
        _ = ok(h.send("reload"))  // myset.conf removed: nothing was blocked, so nothing is kept
        h.advance(3600)
        let status = h.run { h.engine.status(now: h.clock.wallNow()) }
        #expect(status["enforcement"]?["applied"] == .array([]), "\(status["enforcement"] ?? .null)")
        let missing = status["enforcement"]?["notEnforced"]?.array?.first
        #expect(missing?["selection"] == "myset" && missing?["cause"]?.string?.contains("not in the configuration") == true, "\(missing ?? .null)")
        #expect(!h.entries(.lock).contains { $0.message.contains("myset") }, "no 'Blocked myset': \(h.entries(.lock).map(\.message))")
        #expect(h.run { h.engine.core.state.failures }.filter { $0.message.contains("cannot enforce 'myset'") }.count == 1, "recorded once")
    }

    @Test("§7, E8: the targets a blocked selection keeps include its URL prefixes")
    func keptTargetsIncludePaths() {
        let pinned = Selection(name: "v", domains: ["a.example"], apps: ["/usr/bin/v"], paths: ["v.example/shorts"])
        let narrowed = Selection(name: "v", domains: ["a.example"])
        let kept = Core.union(narrowed, pinned)
        #expect(kept.paths == ["v.example/shorts"] && kept.apps == ["/usr/bin/v"] && kept.domains == ["a.example"])
    }

    @Test("§7: a selection narrowed by a reload keeps the targets it lost while it stays blocked")
    func reloadNarrowedKeepsTargets() throws {
        let h = Harness()
        h.engine = h.makeEngine(config: ConfigFallbackTests.foo(), loader: { () throws(CoreError) -> ConfigSet in
            ConfigFallbackTests.foo(domains: "foo.example new.foo.example")
        })
        h.run { h.engine.startUp() }
        _ = ok(h.send(#"start {"selections":["foo"],"seconds":600,"name":"focus"}"#))
        _ = ok(h.send("reload"))
        #expect(h.run { h.engine.core.resolved["foo"]?.domains } == ["foo.example", "new.foo.example", "www.foo.example"])
        #expect(h.log.entries.contains { $0.message.hasPrefix("Selection 'foo' lost 1 target in the configuration;") })
    }

    @Test("§7: one daemon per state directory: a second lock is refused and names the holder's pid")
    func oneDaemonPerStateDir() throws {
        let dir = Harness.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try StateLock(directory: dir)
        do {
            _ = try StateLock(directory: dir)
            Issue.record("a second lock was granted")
        } catch {
            guard case .held(let d, let pid) = error else { Issue.record("\(error)"); return }
            #expect(d == dir)
            #expect(pid == getpid())
            #expect(error.description.contains("pid \(getpid())"))
        }
        withExtendedLifetime(first) {}
    }
}
