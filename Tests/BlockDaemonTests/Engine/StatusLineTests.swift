import BlockCore
import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// `status` is rendered to bytes once per snapshot and view (StatusSnapshot+Line.swift); an
/// answer must be the same line, byte for byte, as the one rendered from the object.
@Suite("§6, §8: status from its rendered line", .serialized)
struct StatusLineTests {
    /// What the enforcers say, changed by the test between answers.
    final class Notes: @unchecked Sendable {
        private let lock = NSLock()
        private var _value: JSONObject = [:]
        private var _asks = 0
        func asked() { lock.withLock { _asks += 1 } }
        var asks: Int { lock.withLock { _asks } }
        var value: JSONObject {
            get { lock.withLock { _value } }
            set { lock.withLock { _value = newValue } }
        }
    }

    /// The published snapshot with the enforcers' notes from `notes`.
    static func snapshot(_ h: Harness, notes: Notes, version: (@Sendable () -> UInt64)? = nil) throws -> StatusSnapshot {
        let s = try #require(h.engine.published.read { $0 })
        let parts = StatusSnapshot.Parts(active: s.active, limits: s.limits, counts: s.counts, desired: s.desired, scoped: s.scoped)
        return StatusSnapshot(local: s.local, parts: parts, usage: s.usage, failures: s.failures, shieldHits: s.shieldHits,
                              enforcement: s.enforcement, nextTransition: s.nextTransition, maxActivities: s.maxActivities,
                              wallMinusBoot: s.wallMinusBoot, saveFailing: s.saveFailing, moreTime: s.moreTime, lastEnforced: s.lastEnforced,
                              enforcementNotes: { _ in notes.asked(); return notes.value }, notesVersion: version, serverStats: s.serverStats)
    }

    static func expect(_ s: StatusSnapshot, at now: Date, private uid: UInt32? = nil, _ comment: Comment) throws {
        let line = try #require(s.statusLine(now: now, private: uid), comment)
        let object = try #require(s.answer(.status(), now: now, private: uid))
        #expect(String(decoding: line, as: UTF8.self) == Response.ok(object).line, comment)
    }

    @Test("§6: the line is the rendered object's line at every instant: now, remaining, notes and counters filled in when asked")
    func sameBytes() throws {
        let h = Harness(persistent: false)
        #expect(ok(h.send(#"start {"selections":["instagram"],"seconds":90,"name":"short"}"#)) != nil)
        #expect(ok(h.send(#"start {"selections":["reddit","x.example.com"],"seconds":7200,"name":"long+locked","lock":true}"#)) != nil)
        #expect(ok(h.send(#"schedule-add {"name":"lunch","window":"13:00-14:00","selections":["youtube"]}"#)) != nil)  // active at 13:05
        #expect(ok(h.send(#"schedule-add {"name":"night","window":"23:00-06:00","selections":["tiktok"]}"#)) != nil)  // idle: counted only
        let notes = Notes()
        notes.value = ["apps": "fanotify", "firewall": ["enabled": false, "until": "2026-11-29T13:10:00.000+09:00"]]
        let s = try StatusLineTests.snapshot(h, notes: notes)
        let start = h.clock.wallNow()
        try StatusLineTests.expect(s, at: start, "at publication")
        try StatusLineTests.expect(s, at: start, private: 1001, "a member's view")
        try StatusLineTests.expect(s, at: start.addingTimeInterval(30.4), "remaining counts down")
        notes.value = ["apps": "polling", "appsReason": "fanotify \"said\" no:\n\tEPERM \u{1}é"]
        try StatusLineTests.expect(s, at: start.addingTimeInterval(31), "a note that changed is the note shown (fanotify fell back)")
        notes.value = [:]
        try StatusLineTests.expect(s, at: start.addingTimeInterval(31.5), "no notes at all")
        // Past the first block's end and the lunch window's: `active`, `start` and `end` change.
        try StatusLineTests.expect(s, at: start.addingTimeInterval(90), "at the first block's end")
        try StatusLineTests.expect(s, at: start.addingTimeInterval(3600), "past the lunch window")
        try StatusLineTests.expect(s, at: start.addingTimeInterval(-5), "before publication (the clock went back)")
    }

    @Test("E5, E7: the notes are rendered once while the enforcers' count stands still, again when it moves or a second has passed")
    func notesKept() throws {
        let h = Harness(persistent: false)
        #expect(ok(h.send(#"start {"selections":["instagram"],"seconds":900}"#)) != nil)
        let notes = Notes()
        let version = Atomic<UInt64>(7)
        notes.value = ["dns": ["lookups": 1, "failed": 0]]
        let s = try StatusLineTests.snapshot(h, notes: notes, version: { version.load(ordering: .relaxed) })
        let now = h.clock.wallNow()
        let text = { (at: Date) throws -> String in String(decoding: try #require(s.statusLine(now: at, private: nil)), as: UTF8.self) }
        #expect(try text(now).contains(#""dns":{"lookups":1,"failed":0}"#), "rendered at first")
        #expect(try text(now.addingTimeInterval(1)).contains(#""lookups":1"#))
        #expect(notes.asks == 1, "asked once for two answers at the same count")
        notes.value = ["dns": ["lookups": 2, "failed": 0]]
        version.add(1, ordering: .relaxed)
        try StatusLineTests.expect(s, at: now.addingTimeInterval(2), "the count moved: the new notes are the ones shown")
        // The same notes, kept past their lifetime: rendered again although the count stands still.
        notes.value = ["dns": ["lookups": 3, "failed": 0]]
        s.notesCache.write { kept in
            kept = kept.map { NotesCache(version: $0.version, at: $0.at &- NotesCache.lifetime, clashes: $0.clashes, members: $0.members) }
        }
        try StatusLineTests.expect(s, at: now.addingTimeInterval(3), "kept a second: rendered again")
        // A note whose key the engine's part has too cannot be put in the line: the engine's object answers.
        notes.value = ["mode": "x"]
        version.add(1, ordering: .relaxed)
        #expect(s.statusLine(now: now, private: nil) == nil, "a clashing note: no line")
    }

    @Test("§8: connections are answered on their own queues: status answers while the server's queue is busy")
    func answeredBesideTheServerQueue() throws {
        let f = try ServerFixture(limits: { _ in })
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":600}"#)
        let c = try RawClient(path: f.sandbox.socket)
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        #expect(try c.request("hello").hasPrefix("OK "), "accepted")
        let (entered, parked) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        f.server.queue.async {
            entered.signal()
            parked.wait()
        }
        entered.wait()
        defer { parked.signal() }
        for _ in 0..<3 {
            let answer = try? c.request("status")
            #expect(answer?.hasPrefix(#"OK {"schema":1"#) == true, "answered while the server's queue is busy: \(answer ?? "no answer in 2 s")")
        }
    }
}
