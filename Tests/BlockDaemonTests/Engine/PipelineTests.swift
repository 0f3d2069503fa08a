import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// §7 and §8 on one connection: requests a client pipelines go to the engine together,
/// so one fdatasync covers the changes of several (group commit), and the answers still come
/// back in request order, whatever answered them (the engine, the parser, the snapshot).
@Suite("§7, §8: a pipelined connection")
struct PipelineTests {
    @Test("§7 group commit on one connection: 40 pipelined starts take fewer fdatasyncs than starts; every answer in order")
    func pipelinedStartsShareSyncs() throws {
        let f = try ServerFixture()
        let c = try RawClient(path: f.sandbox.socket)
        let syncs = f.harness.saveFault.syncs
        var lines: [String] = []
        for i in 0..<20 { lines.append(#"start {"selections":["p\#(i).example.com"],"seconds":600,"name":"p\#(i)"}"#) }
        lines.append("status")
        lines.append("no-such-command")
        for i in 20..<40 { lines.append(#"start {"selections":["p\#(i).example.com"],"seconds":600,"name":"p\#(i)"}"#) }
        c.send(raw: Array((lines.joined(separator: "\n") + "\n").utf8))
        var answers: [String] = []
        for _ in lines { answers.append(try c.readLine() ?? "(closed)") }
        for (i, answer) in answers.enumerated() {
            switch i {
            case 20:
                #expect(answer.hasPrefix("OK ") && answer.contains("p19.example.com"), "status, after the 20 starts before it: \(answer.prefix(120))")
            case 21:
                #expect(answer.hasPrefix("ERR "), "the unknown command, in its place: \(answer.prefix(120))")
            default:
                let n = i < 20 ? i : i - 2
                #expect(answer.hasPrefix("OK ") && answer.contains("\"p\(n)\""), "answer \(i) is start p\(n)'s: \(answer.prefix(120))")
            }
        }
        let used = f.harness.saveFault.syncs - syncs
        #expect(used < 40, "40 pipelined changes took \(used) fdatasyncs")
        guard case .loaded(let disk) = StateStore(directory: f.harness.dir).load(now: f.harness.clock.wallNow()) else {
            Issue.record("no state on disk"); return
        }
        #expect(Set(disk.activities.map(\.activity.name)) == Set((0..<40).map { "p\($0)" }), "every OK is on disk")
    }
}
