import BlockCore
import Foundation
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// §8 and blockd's memory: a connection keeps the buffer of an ordinary answer for the next
/// one, and lets a large one's go once it is sent (then malloc's free memory is given back).
@Suite("§8: a large answer's buffer is not kept once it is sent")
struct ServerMemoryTests {
    /// What the connection holds for its output once `line`'s answer has come back.
    static func keptAfter(_ line: String, keptOutput: Int) throws -> (answer: String, capacity: Int) {
        let f = try ServerFixture(limits: { $0.keptOutput = keptOutput })
        let c = try RawClient(path: f.sandbox.socket)
        for i in 0..<5 {
            c.send(raw: Array(#"start {"selections":["m\#(i).example.com"],"seconds":600,"name":"m\#(i)"}"#.utf8) + [10])
            #expect(try c.readLine()?.hasPrefix("OK ") == true)
        }
        c.send(raw: Array((line + "\n").utf8))
        let answer = try c.readLine() ?? "(closed)"
        let connection = try #require(f.server.queue.sync { f.server.connections.values.first })
        let capacity = connection.queue.sync { connection.output.capacity }
        return (answer, capacity)
    }

    @Test("§8: an answer over the kept size leaves no buffer behind; one within it keeps its buffer for the next")
    func largeAnswerLetGo() throws {
        let large = try Self.keptAfter("status", keptOutput: 1024)
        #expect(large.answer.hasPrefix("OK ") && large.answer.utf8.count > 1024, "status with five blocks is over 1 KiB: \(large.answer.utf8.count)")
        #expect(large.capacity == 0, "the buffer went once the answer was sent")
        let small = try Self.keptAfter("status", keptOutput: 1 << 20)
        #expect(small.capacity >= small.answer.utf8.count, "an ordinary answer's buffer is kept for the next")
    }
}
