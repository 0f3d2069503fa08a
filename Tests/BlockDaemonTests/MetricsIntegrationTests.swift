import BlockCore
import Foundation
import Glibc
import Testing
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
}
