import BlockCore
import Foundation
import Testing
import BlockTestSupport
import BlockTestTools
@testable import BlockDaemon

/// E7 at scale: told which selections changed, the browser policy enforcer looks at those
/// alone, and its files still end as those of an enforcer given everything from scratch.
@Suite("E7: browser policy files told what changed equal files written from scratch")
struct BrowserPolicyDeltaTests {
    /// An enforcer writing under a temp policy root with Chromium and Firefox present.
    final class Root {
        let temp: TempDir
        let browsers: BrowserPolicyEnforcer

        /// `chromium: false`: Firefox only, so no file can hold a URL prefix (E8) and each
        /// prefix-only selection is reported not enforced.
        init(chromium: Bool = true) throws {
            temp = try TempDir(prefix: "bd-browser-delta-")
            for marker in (chromium ? ["/etc/chromium"] : []) + ["/etc/firefox"] {
                try FileManager.default.createDirectory(atPath: temp.path + marker, withIntermediateDirectories: true)
            }
            var daemon = DaemonConfig.defaults
            daemon.policyRoot = temp.path
            browsers = BrowserPolicyEnforcer(config: daemon, stateDir: temp.path, log: MemorySink())
        }

        /// Every policy file's bytes, once the deferred writes are done.
        func files() -> [String: Data?] {
            browsers.queue.sync {}
            let paths = ["/etc/chromium/policies/managed/blockd.json", "/etc/firefox/policies/policies.json"]
            return Dictionary(uniqueKeysWithValues: paths.map { ($0, FileManager.default.contents(atPath: temp.path + $0)) })
        }
    }

    /// One of a few selections, in one of its forms: machine-wide or per-user, with sites,
    /// prefixes, exceptions, or an allow-only window.
    static func form(of name: String, _ rng: inout TortureTests.Generator) -> Selection {
        var s = Selection(name: name, domains: ["\(name).example"])
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: break
        case 1: s.domains.append("more-\(name).example")
        case 2: s.users = [1000]
        case 3: (s.domains, s.paths) = ([], ["\(name).example/feed"])
        case 4: s.exceptions = ["ok.\(name).example"]
        default: (s.domains, s.allowed) = ([], [Selection(name: "school", domains: ["school.example"])])
        }
        return s
    }

    @Test("E7, E8: after any random sequence of changes, the files and the report (prefix-only selections not enforced without a Chromium) equal those of an enforcer given all of it",
          arguments: [1, 2, 3] as [UInt64], [true, false])
    func deltaEqualsFromScratch(seed: UInt64, chromium: Bool) throws {
        var rng = TortureTests.Generator(state: seed)
        let names = (0..<8).map { "s\($0)" }
        let kept = try Root(chromium: chromium)
        var blocked: [String: Selection] = [:]
        _ = kept.browsers.enforce(blocked: [])
        for step in 0..<60 {
            var next = blocked
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let name = names.randomElement(using: &rng)!
                next[name] = Bool.random(using: &rng) ? nil : BrowserPolicyDeltaTests.form(of: name, &rng)
            }
            // Exactly the selections that differ, and at times one more that did not.
            var changed = Set(names.filter { blocked[$0] != next[$0] })
            if Bool.random(using: &rng) { changed.insert(names.randomElement(using: &rng)!) }
            blocked = next
            let all = blocked.keys.sorted().map { blocked[$0]! }
            let report = kept.browsers.enforce(blocked: all, changed: changed)
            let scratch = try Root(chromium: chromium)
            let expected = scratch.browsers.enforce(blocked: all)
            #expect(report == expected, "seed \(seed), step \(step): the report")
            #expect(kept.files() == scratch.files(), "seed \(seed), step \(step): the files after \(changed.sorted())")
        }
    }

    @Test("E7: told that nothing it writes changed (a per-user selection), the enforcer leaves the files alone")
    func unchangedLeavesFilesAlone() throws {
        let root = try Root()
        let reddit = Selection(name: "reddit", domains: ["reddit.com"])
        _ = root.browsers.enforce(blocked: [reddit])
        let file = root.temp.path + "/etc/chromium/policies/managed/blockd.json"
        try Data("changed by hand\n".utf8).write(to: URL(fileURLWithPath: file))
        var kid = Selection(name: "kid", domains: ["games.example"])
        kid.users = [1000]
        _ = root.browsers.enforce(blocked: [kid, reddit], changed: ["kid"])
        #expect(FileManager.default.contents(atPath: file) == Data("changed by hand\n".utf8),
                "only the per-user selection changed: nothing was rewritten")
        _ = root.browsers.enforce(blocked: [kid, reddit], changed: nil)
        #expect(FileManager.default.contents(atPath: file) != Data("changed by hand\n".utf8), "a whole pass writes it again")
    }
}
