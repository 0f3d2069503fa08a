import BlockCore
import Foundation
import Testing
import BlockTestTools

/// End to end with the real blockd (unprivileged, in a temp dir: its own socket, state,
/// config and hosts file) and real dunst: `blockc start` → lock → notification; the timed
/// unlock replaces it (S2). Proves the agent reads what the daemon really sends, including
/// the selection's own texts from `selection-show` (S6).
@Suite("Integration: the real blockd and dunst (S1-S4)", .serialized)
struct RealDaemonTests {
    @Test("a 2 s block: 'Focus time: focus' with its button, then the unlock replaces it in the same slot", .enabled(if: Desktop.can(needs: NotifyIntegrationTests.dunstTools), Desktop.needsPrograms))
    func blockAndUnblock() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.dunstTools) != nil { return }
        let session = try DesktopSession()
        try session.startDunst()
        let bin = Repo.binDir
        try FileManager.default.createDirectory(atPath: session.dir + "/etc/selections.d", withIntermediateDirectories: true)
        try session.write("""
            [Selection]
            Name=focus
            Domains=example.com
            OpenURL=https://minulo.example/?s={selection}
            BlockStartedTitle=Focus time: {selection}
            """, to: "etc/selections.d/focus.conf")
        try session.write("127.0.0.1\tlocalhost\n", to: "hosts")
        let socket = session.dir + "/blockd.sock"
        try session.processes.launch(bin + "/blockd", ["--socket", socket, "--state-dir", session.dir + "/state", "--config-dir", session.dir + "/etc",
                                                       "--hosts-file", session.dir + "/hosts", "--log-target", "console", "--firewall", "no", "--cut-sockets", "no",
                                                       "--policy-root", session.dir + "/root"],
                                     environment: ["TZ": "Asia/Tokyo"], output: session.dir + "/blockd.log")
        func blockc(_ args: [String]) -> Run.Result? { try? Run.capture(bin + "/blockc", ["--socket", socket] + args) }
        try #require(Run.eventually { blockc(["version"])?.status == 0 }, "blockd did not start: \(session.read("blockd.log"))")

        try FileManager.default.createDirectory(atPath: session.dir + "/bin", withIntermediateDirectories: true)
        try session.write("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(session.dir)/opened'\n", to: "bin/xdg-open", mode: 0o755)
        var env = session.environment
        (env["PATH"], env["TZ"], env["XDG_RUNTIME_DIR"]) = (session.dir + "/bin", "Asia/Tokyo", session.dir)
        (env["LANG"], env["LC_ALL"], env["LC_MESSAGES"], env["LANGUAGE"]) = ("en_US.UTF-8", "", "", "")
        try session.processes.launch(bin + "/blockc", ["--socket", socket, "watch", "--notify"], environment: env, output: session.dir + "/agent.log")
        try #require(Run.eventually {
            guard let out = blockc(["status", "--json"])?.output, let status = try? JSON.parse(out) else { return false }
            return status["server"]?["watchers"] == 1
        }, "the agent did not subscribe: \(session.read("agent.log"))")

        let started = blockc(["start", "--for", "2s", "focus"])
        #expect(started?.status == 0, "\(started?.output ?? "")")
        try #require(Run.eventually { session.notifyCalls().count >= 1 }, "no lock notification: \(session.read("agent.log"))")
        let lock = session.notifyCalls()[0].args
        #expect(lock[3] == "Focus time: focus")
        #expect(lock[4].string?.hasPrefix("Blocked until ") == true, "\(lock[4])")
        // M4: the real daemon says a client block gives 15 more minutes by default (MoreTime=self).
        #expect(lock[5] == ["open", "Open alternative", "more", "15 more minutes"])

        try #require(Run.eventually { session.notifyCalls().count >= 2 }, "no unlock notification: \(session.read("agent.log"))")
        let unlock = session.notifyCalls()[1].args
        #expect(unlock[3] == "focus is unblocked")
        #expect(unlock[1] != .int(0), "S2: the unlock replaces the lock notification")
        #expect(unlock[5] == [])
        #expect((try? session.dunstctl(["count", "displayed"]))?.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }
}
