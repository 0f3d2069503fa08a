import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

@Suite("E3: ExecOnBlock= and ExecOnUnblock=", .serialized)
struct HookTests {
    func config(_ s: Sandbox, block: String, unblock: String) throws -> ConfigSet {
        try ConfigSet.load(daemonFile: nil, selectionFiles: [ConfigSource(path: s.configDir + "/selections.d/focus.conf", text: """
            [Selection]
            Name=focus
            Domains=focus.example www.focus.example
            Apps=/usr/bin/focus-game
            ExecOnBlock=\(block)
            ExecOnUnblock=\(unblock)
            """)], scheduleFiles: [])
    }

    @Test("E3: hooks run on lock and unlock with the selection and its targets in the environment")
    func environment() throws {
        let s = Sandbox()
        let out = s.dir + "/hook.out"
        let line = #"echo "$BLOCKD_EVENT|$BLOCKD_SELECTION|$BLOCKD_DOMAINS|$BLOCKD_APPS|${BLOCKD_UNTIL:-none}" >> "# + out
        let h = Harness(dir: s.dir + "/state", config: try config(s, block: line, unblock: line), hookTimeout: 5)
        _ = ok(h.send(#"start {"selections":["focus"],"seconds":60}"#))
        h.advance(60)
        #expect(Run.eventually { ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").count == 2 })
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        #expect(lines == [
            "block|focus|focus.example www.focus.example|/usr/bin/focus-game|2026-11-29T13:06:00.000+09:00",
            "unblock|focus|focus.example www.focus.example|/usr/bin/focus-game|none",
        ])
    }

    @Test("E3, T4: a failing or hanging hook is recorded as a failure, and enforcement went on")
    func failures() throws {
        let s = Sandbox()
        // Long enough that `echo; exit 3` finishes on a loaded machine, short next to `sleep 30`.
        let h = Harness(dir: s.dir + "/state", config: try config(s, block: "echo no-vpn >&2; exit 3", unblock: "sleep 30"),
                        hookTimeout: 3)
        _ = ok(h.send(#"start {"selections":["focus"],"seconds":60}"#))
        #expect(h.enforcer.current == ["focus"])
        h.advance(60)
        #expect(h.enforcer.current == [])
        #expect(Run.eventually { h.run { h.engine.core.state.failures.count } == 2 })
        let failures = h.run { h.engine.core.state.failures }
        #expect(failures.map(\.code) == ["hook-failed", "hook-failed"])
        #expect(failures[0].message.contains("exited with status 3: no-vpn"))
        #expect(failures[1].message.contains("did not finish within 3 s and was killed") || failures[1].message.contains("was killed"))
        #expect(failures.allSatisfy { $0.activity == "focus" })
    }
}
