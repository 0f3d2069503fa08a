import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// F3 through the real daemon: `--metrics-dir` (or `MetricsDirectory=`) gets `blockd.prom`,
/// which follows what blockc does. The real node_exporter reading it is torture/metrics.py.
@Suite("F3: the metrics file through the real daemon")
struct MetricsIntegrationTests {
    func metrics(_ s: Sandbox) -> String {
        (try? String(contentsOfFile: s.dir + "/metrics/blockd.prom", encoding: .utf8)) ?? ""
    }

    @Test("F3: blockd.prom appears at start, follows a block and its stop, and is replaced atomically")
    func followsChanges() throws {
        let s = Sandbox()
        mkdir(s.dir + "/metrics", 0o755)
        try s.start(extraArgs: ["--metrics-dir", s.dir + "/metrics"])
        #expect(Run.eventually(timeout: 5) { metrics(s).contains("blockd_info{version=\"\(BlockdVersion.version)\"} 1\n") },
                "written at start: \(metrics(s))")
        #expect(try s.blockc(["start", "--for", "10m", "reddit"]).status == 0)
        #expect(Run.eventually(timeout: 5) { metrics(s).contains("blockd_blocked{selection=\"reddit\"} 1\n") }, "\(metrics(s))")
        #expect(metrics(s).contains("blockd_locks_total 1\n") && metrics(s).contains("blockd_activities{kind=\"block\"} 1\n"))
        #expect(metrics(s).contains("blockd_last_enforcement_timestamp_seconds "), "the apply succeeded")
        var st = stat()
        #expect(stat(s.dir + "/metrics/blockd.prom", &st) == 0 && st.st_mode & 0o777 == 0o644, "readable by node_exporter's user")
        #expect(try s.blockc(["stop", "reddit"]).status == 0)
        #expect(Run.eventually(timeout: 5) { metrics(s).contains("blockd_unlocks_total 1\n") && !metrics(s).contains("blockd_blocked{") },
                "\(metrics(s))")
        let names = try FileManager.default.contentsOfDirectory(atPath: s.dir + "/metrics")
        #expect(names == ["blockd.prom"], "no temp file left where the collector reads: \(names)")
    }

    @Test("F3: MetricsDirectory= in blockd.conf; a directory that cannot be written is logged, and blocks go on")
    func configuredAndUnwritable() throws {
        let s = Sandbox()
        try "[Daemon]\nMetricsDirectory=\(s.dir)/missing\n".write(toFile: s.configDir + "/blockd.conf", atomically: true, encoding: .utf8)
        try s.start()
        #expect(try s.blockc(["start", "--for", "10m", "reddit"]).status == 0, "enforcement never waits for metrics")
        #expect(Run.eventually(timeout: 5) { s.log.contains("Cannot write the metrics file \(s.dir)/missing/blockd.prom") }, "\(s.log)")
        mkdir(s.dir + "/missing", 0o755)
        #expect(try s.blockc(["stop", "reddit"]).status == 0)
        #expect(Run.eventually(timeout: 5) { FileManager.default.fileExists(atPath: s.dir + "/missing/blockd.prom") },
                "written at the next change once the directory exists")
        #expect(Run.eventually(timeout: 5) { s.log.contains("written again") })
    }

    /// Per-user blocks of a site and of a selection, for `nobody`: the file names neither, nor
    /// the user, and counts them. It is 0644 by design, so what it holds is what any user reads.
    func perUser(_ s: Sandbox) throws -> String {
        mkdir(s.dir + "/metrics", 0o755)
        try s.start(extraArgs: ["--metrics-dir", s.dir + "/metrics"])
        #expect(try s.blockc(["start", "--for", "10m", "--user", "nobody", "secret-site.example"]).status == 0)
        #expect(try s.blockc(["start", "--for", "10m", "--user", "nobody", "--name", "kid-evening", "reddit"]).status == 0)
        #expect(try s.blockc(["start", "--for", "10m", "youtube"]).status == 0)
        #expect(Run.eventually(timeout: 5) { metrics(s).contains("blockd_blocked_per_user 2\n") && metrics(s).contains("blockd_blocked{selection=\"youtube\"} 1\n") },
                "\(metrics(s))")
        return s.dir + "/metrics/blockd.prom"
    }

    static let secrets = ["secret-site", "reddit", "kid-evening", "nobody", "65534"]

    @Test("F3: per-user blocks are counted in blockd.prom, never named, nor their users; machine-wide ones are named")
    func perUserNotNamed() throws {
        let s = Sandbox()
        let path = try perUser(s)
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o644, "world-readable, for node_exporter's user")
        let text = metrics(s)
        for secret in Self.secrets { #expect(!text.contains(secret), "'\(secret)' in blockd.prom:\n\(text)") }
    }

    @Test("F3: an unprivileged user reading blockd.prom learns no per-user selection, site or user",
          .enabled(if: Privileged.can(needs: ["/usr/bin/setpriv"]), Privileged.needsRoot))
    func perUserAsNobody() throws {
        if Privileged.unavailable(needs: ["/usr/bin/setpriv"]) != nil { return }
        let s = Sandbox()
        let path = try perUser(s)
        chmod(s.dir, 0o755)  // the test's own mkdtemp directory, so that nobody can reach the file
        let read = try Run.capture("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/cat", path])
        #expect(read.status == 0 && read.output.contains("blockd_blocked_per_user 2\n") && read.output.contains("blockd_blocked{selection=\"youtube\"} 1"),
                "nobody reads the file: \(read.output)")
        for secret in Self.secrets { #expect(!read.output.contains(secret), "'\(secret)' read by nobody:\n\(read.output)") }
    }
}
