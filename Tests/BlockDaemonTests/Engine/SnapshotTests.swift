import BlockCore
import Dispatch
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// The read-only requests are answered from the snapshot the engine publishes, on the
/// connection's side: readers never wait behind the engine, and what depends on `now` is
/// worked out when the answer is given.
@Suite("Status from the published snapshot", .serialized)
struct SnapshotTests {
    /// The server fixture, with an engine queue that can be parked.
    final class Fixture: @unchecked Sendable {
        private let base: ServerFixture
        var sandbox: Sandbox { base.sandbox }
        var harness: Harness { base.harness }
        var server: ControlServer { base.server }
        private let parked = DispatchSemaphore(value: 0)
        private var isParked = false

        init() throws { base = try ServerFixture(limits: { _ in }) }

        /// Keeps the engine's queue busy until `release()` (or the end of the test).
        func park() {
            let entered = DispatchSemaphore(value: 0)
            isParked = true
            harness.engine.queue.async { [parked] in
                entered.signal()
                parked.wait()
            }
            entered.wait()
        }

        func release() {
            guard isParked else { return }
            isParked = false
            parked.signal()
        }

        /// A client that gives up after `seconds` instead of the usual 10.
        func client(timeout seconds: Int = 2) throws -> RawClient {
            let c = try RawClient(path: sandbox.socket)
            var tv = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            return c
        }

        deinit { release() }  // then `base` stops the server
    }

    static func object(_ line: String) throws -> JSON {
        #expect(line.hasPrefix("OK "), "\(line)")
        return try JSON.parse(String(line.dropFirst(3)))
    }

    /// `status --all` and `schedule list` list every activity and are answered by the engine:
    /// a snapshot holding the whole registry would make the engine's next change copy it.
    @Test("status, limit list, failures and stats answer while the engine's queue is busy")
    func readersDoNotWaitForTheEngine() throws {
        let f = try Fixture()
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":600}"#)
        f.park()
        defer { f.release() }
        let c = try f.client()
        for line in ["status", "limit-list", "failures", "stats"] {
            let answer = try? c.request(line)
            #expect(answer?.hasPrefix("OK ") == true, "\(line) answered while the engine is busy: \(answer ?? "no answer in 2 s")")
        }
        let status = try SnapshotTests.object(try c.request("status"))
        #expect(status["blocked"]?[0]?["selection"] == "instagram")
    }

    @Test("remaining is worked out when status is answered, not when the snapshot was published")
    func remainingAtAnswerTime() throws {
        let f = try Fixture()
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":90}"#)
        f.park()
        defer { f.release() }
        f.harness.clock.advance(30)  // no wake: the engine has not seen this instant
        let status = try SnapshotTests.object(try f.client().request("status"))
        #expect(status["activities"]?[0]?["remaining"] == 60)
        #expect(status["now"] == .string(LocalClock(f.harness.zone).iso8601(f.harness.clock.wallNow())))
    }

    @Test("T6: after a wall-clock step the engine answers, so that no end is shown shifted by the step")
    func wallStepGoesThroughTheEngine() throws {
        let f = try Fixture()
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":90}"#)
        #expect(f.harness.engine.answerFromSnapshot(.status()) != nil)
        f.harness.clock.stepWall(3600)
        #expect(f.harness.engine.answerFromSnapshot(.status()) == nil, "the snapshot predates the step")
        let status = try SnapshotTests.object(try f.client().request("status"))
        #expect(status["activities"]?[0]?["remaining"] == 90, "the block keeps its elapsed time")
        let end = try TimeText.parseISO8601WithOffset(try #require(status["activities"]?[0]?["end"]?.string))
        #expect(end == f.harness.clock.wallNow().addingTimeInterval(90))
    }

    @Test("a boundary the engine has not handled yet sends status to the engine")
    func passedBoundaryGoesThroughTheEngine() throws {
        let f = try Fixture()
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":90}"#)
        f.harness.clock.advance(91)  // past the end, no wake
        #expect(f.harness.engine.answerFromSnapshot(.status()) == nil)
        let status = try SnapshotTests.object(try f.client().request("status"))
        #expect(status["blocked"] == [])
    }

    @Test("T9, §7: status asked past a block's end before the timer's wake says it is lifted only once the enforcers were told")
    func readBringsInADueBoundary() throws {
        let h = Harness()
        _ = h.send(#"start {"selections":["instagram"],"seconds":90}"#)
        #expect(h.enforcer.current == ["instagram"])
        h.clock.advance(91)  // past the end; the timer's wake has not come
        let status = try #require(ok(h.send("status")))
        #expect(status["blocked"] == [])
        #expect(h.enforcer.current == [], "the unlock was carried out before the answer that tells of it")
        #expect(h.log.entries.contains { $0.event == .unlock && $0.field(.selection) == "instagram" }, "and journalled")
    }

    @Test("with more than 1,000 active, status goes to the engine, which shows every blocked selection and the count")
    func manyActiveGoThroughTheEngine() throws {
        let h = Harness()
        for i in 0...StatusSnapshot.maxActive {
            _ = h.send(#"start {"selections":["\#(["instagram", "reddit"][i % 2])"],"seconds":600,"name":"b\#(i)"}"#)
        }
        #expect(h.engine.answerFromSnapshot(.status()) == nil, "the snapshot holds no list of 1,001 active")
        let status = try #require(ok(h.send("status")))
        #expect(status["blocked"]?.array?.compactMap { $0["selection"]?.string }.sorted() == ["instagram", "reddit"])
        #expect(status["counts"]?["active"] == 1001)
    }

    @Test("views changed while more than 1,000 were active are worked out again when the snapshot shows them: its status is the engine's")
    func viewsChangedWhileManyActive() throws {
        let h = Harness()
        for i in 0...StatusSnapshot.maxActive {
            _ = h.send(#"start {"selections":["\#(["instagram", "reddit"][i % 2])"],"seconds":600,"name":"b\#(i)"}"#)
        }
        // Changed while no snapshot shows the view: a new selection, a later end, one lifted.
        _ = h.send(#"start {"selections":["youtube"],"seconds":900,"name":"y"}"#)
        _ = h.send(#"start {"selections":["reddit"],"seconds":1200,"name":"long"}"#)
        _ = h.send(#"start {"selections":["tiktok"],"seconds":300,"name":"t"}"#)
        #expect(ok(h.send(#"stop {"name":"t"}"#)) != nil)
        #expect(h.engine.answerFromSnapshot(.status()) == nil)
        for i in 0..<4 { #expect(ok(h.send(#"stop {"name":"b\#(i)"}"#)) != nil) }  // 1,000 active: the snapshot answers again
        let now = h.clock.wallNow()
        guard case .ok(let snapshot)? = h.engine.answerFromSnapshot(.status()) else {
            Issue.record("1,000 active: the snapshot answers")
            return
        }
        let engine = h.engine.queue.sync { h.engine.answerNow(.status(), now: now) }
        #expect(snapshot["blocked"] == engine["blocked"], "every view as the engine works it out")
        let reddit = snapshot["blocked"]?.array?.first { $0["selection"] == "reddit" }
        #expect(reddit?["reasons"]?.array?.count == 499 && reddit?["until"] != .null, "reasons and end worked out, not the placeholder")
        #expect(snapshot["blocked"]?.array?.compactMap { $0["selection"]?.string } == ["instagram", "reddit", "youtube"])
    }

    @Test("status shows what is active and counts; status --all and schedule list give every activity")
    func idleActivitiesAreCounted() throws {
        let f = try Fixture()
        for i in 0..<300 {
            // 03:00-04:00 Tokyo: the harness's 13:05 is outside every window.
            _ = f.harness.send(#"schedule-add {"name":"s\#(i)","window":"03:00-04:00","selections":["reddit"]}"#)
        }
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":600}"#)
        let c = try f.client()
        let status = try SnapshotTests.object(try c.request("status"))
        #expect(status["activities"]?.array?.map { $0["name"] } == ["instagram"])
        #expect(status["counts"] == ["activities": 301, "active": 1, "blocks": 1, "schedules": 300, "limits": 0])
        let all = try SnapshotTests.object(try c.request(#"status {"all":true}"#))
        #expect(all["activities"]?.array?.count == 301)
        let schedules = try SnapshotTests.object(try c.request("schedule-list"))
        #expect(schedules["schedules"]?.array?.count == 300)
    }

    @Test("a --for 90s block started at a fractional second is reported exactly, to the millisecond")
    func ninetySecondsExactly() throws {
        let f = try Fixture()
        f.harness.clock.advance(0.606)
        let start = try #require(ok(f.harness.send(#"start {"selections":["instagram"],"seconds":90}"#)))
        let zone = LocalClock(f.harness.zone)
        #expect(start["end"] == .string(zone.iso8601(f.harness.clock.wallNow().addingTimeInterval(90))))
        #expect(start["end"]?.string?.hasSuffix(":06:30.606+09:00") == true, "\(start["end"] ?? .null)")
        let status = try SnapshotTests.object(try f.client().request("status"))
        let end = try TimeText.parseISO8601WithOffset(try #require(status["activities"]?[0]?["end"]?.string))
        let begun = try TimeText.parseISO8601WithOffset(try #require(status["activities"]?[0]?["start"]?.string))
        #expect(end.timeIntervalSince(begun) == 90)
    }
}
