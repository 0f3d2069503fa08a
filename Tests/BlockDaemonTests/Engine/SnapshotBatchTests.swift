import BlockCore
import Dispatch
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// §7 "OK means on disk", with the snapshot the read-only requests are answered from
/// published once per group commit: never is a client answered `OK` before the snapshot shows
/// its change, so its next `status`, answered from the snapshot, sees what it just did.
@Suite("§7 the snapshot is published once per group commit, before its answers", .serialized)
struct SnapshotBatchTests {
    static func activityNames(_ response: Response?) -> Set<String> {
        guard case .ok(let o)? = response, case .array(let list)? = o["activities"] else { return [] }
        return Set(list.compactMap { $0["name"]?.string })
    }

    @Test("§7: each start of a batch is answered only once the published snapshot holds it, and the batch publishes once")
    func answeredAfterPublished() throws {
        let h = Harness()
        let names = (0..<20).map { "b\($0)" }
        var seenAtAnswer: [String: Set<String>] = [:]
        let before = h.run { h.engine.publications }
        h.run {
            // All handled before the flush the first one schedules: one group commit.
            for name in names {
                let request = try! Request.parse(#"start {"selections":["instagram"],"seconds":600,"name":"\#(name)"}"#)
                h.engine.handle(request, from: .root) { response in
                    guard case .ok = response else { Issue.record("\(name): \(response.line)"); return }
                    seenAtAnswer[name] = SnapshotBatchTests.activityNames(h.engine.answerFromSnapshot(.status()))
                }
            }
        }
        h.run {}  // the flush
        for name in names {
            #expect(seenAtAnswer[name]?.contains(name) == true, "\(name) was answered before the snapshot held it")
        }
        #expect(h.run { h.engine.publications } - before == 1, "one snapshot for the batch")
    }

    @Test("§7, §8: on one connection, status after a start's OK, and status pipelined after starts, show the blocks")
    func statusAfterStartOnOneConnection() throws {
        let f = try ServerFixture()
        let c = try RawClient(path: f.sandbox.socket)
        for i in 0..<30 {
            let answer = try c.request(#"start {"selections":["instagram"],"seconds":600,"name":"s\#(i)"}"#)
            #expect(answer.hasPrefix("OK "), "\(answer)")
            let status = try SnapshotTests.object(try c.request("status"))
            let names = Set(status["activities"]?.array?.compactMap { $0["name"]?.string } ?? [])
            #expect(names.contains("s\(i)"), "status right after the OK of s\(i) shows it")
        }
        let starts = (0..<20).map { #"start {"selections":["youtube"],"seconds":600,"name":"p\#($0)"}"# }
        c.send(raw: Array((starts + ["status"]).map { $0 + "\n" }.joined().utf8))
        for _ in starts { #expect(try c.readLine()?.hasPrefix("OK ") == true) }
        let status = try SnapshotTests.object(try #require(try c.readLine()))
        let names = Set(status["activities"]?.array?.compactMap { $0["name"]?.string } ?? [])
        #expect(names.isSuperset(of: (0..<20).map { "p\($0)" }), "a status pipelined after starts shows every one")
    }
}
