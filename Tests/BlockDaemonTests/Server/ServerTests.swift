import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// The control server in-process with small limits (§8, S3).
@Suite("Control server limits", .serialized)
struct ServerTests {
    typealias Fixture = ServerFixture

    @Test("§8: connections past the limit get ERR busy and are closed; the others keep working")
    func connectionLimit() throws {
        let f = try Fixture { $0.maxConnections = 3 }
        let clients = try (0..<3).map { _ in try RawClient(path: f.sandbox.socket) }
        for c in clients { #expect(try c.request("hello").hasPrefix("OK ")) }
        let extra = try RawClient(path: f.sandbox.socket)
        #expect(try extra.readLine()?.hasPrefix("ERR busy ") == true)
        #expect(try extra.readLine() == nil)
        #expect(try clients[0].request("status").hasPrefix("OK "))
        #expect(f.server.counters.json["refusedConnections"] == 1)
    }

    @Test("§8: an idle connection is told why and closed; a watcher is not")
    func idleTimeout() throws {
        let f = try Fixture { $0.idleTimeout = 0.3 }
        let idle = try RawClient(path: f.sandbox.socket)
        let watcher = try RawClient(path: f.sandbox.socket)
        #expect(try watcher.request("watch").hasPrefix("OK "))
        // The barrier: a connection idle since after the watcher's last request. Once it is
        // timed out, so would the watcher have been (the server times both out on its queue).
        let later = try RawClient(path: f.sandbox.socket)
        #expect(try idle.readLine()?.hasPrefix("ERR usage idle for") == true)
        #expect(try idle.readLine() == nil)
        #expect(try later.readLine()?.hasPrefix("ERR usage idle for") == true)
        // The watcher still gets events after the idle timeout has passed.
        _ = f.harness.send(#"start {"selections":["instagram"],"seconds":60}"#)
        #expect(try watcher.readLine()?.hasPrefix("EVENT ") == true)
    }

    /// A watcher with a small receive buffer that does not read, so the server's queue for it
    /// overflows quickly.
    static func lazyWatcher(_ f: Fixture) throws -> RawClient {
        let lazy = try RawClient(path: f.sandbox.socket)
        var size: Int32 = 4096
        setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        #expect(try lazy.request("watch").hasPrefix("OK "))  // answered once the hub holds it
        return lazy
    }

    /// Block `b<i>` of one ad-hoc domain with a long name ending in `.n<i>.example.com`: one
    /// lock event each, long enough that the socket buffers fill fast.
    static func startLongBlock(_ f: Fixture, _ i: Int) -> Bool {
        let name = Array(repeating: String(repeating: "x", count: 50), count: 4).joined(separator: ".") + ".n\(i).example.com"
        let answer = f.harness.send(#"start {"selections":["\#(name)"],"seconds":60,"name":"b\#(i)"}"#)
        guard case .ok = answer else { Issue.record("refused: \(answer.line)"); return false }
        return true
    }

    static func dropsCounted(_ f: Fixture) -> Bool {
        Run.eventually(timeout: 5) { (f.server.counters.json["droppedEvents"]?.int ?? 0) > 0 }
    }

    @Test("S3: a watcher that does not read loses events, counted; enforcement never waits for it")
    func droppedEvents() throws {
        let f = try Fixture { $0.maxQueuedEvents = 4 }
        let lazy = try ServerTests.lazyWatcher(f)
        for i in 0..<400 where !ServerTests.startLongBlock(f, i) { break }
        #expect(f.harness.enforcer.applied.count > 20, "enforcement went on regardless")
        #expect(ServerTests.dropsCounted(f))
        let status = f.harness.run { f.harness.engine.status(now: f.harness.clock.wallNow()) }
        #expect((status["server"]?["droppedEvents"]?.int ?? 0) > 0, "status reports the drops")
        withExtendedLifetime(lazy) {}  // the watcher stays connected, not reading, to the end
    }

    @Test("S3: a watcher that fell behind gets a dropped event with the count, in order: what it read, then dropped, then the next ones")
    func droppedEventMarker() throws {
        let f = try Fixture { $0.maxQueuedEvents = 4 }
        let lazy = try ServerTests.lazyWatcher(f)
        let count = 300
        for i in 0..<count where !ServerTests.startLongBlock(f, i) { break }
        try #require(ServerTests.dropsCounted(f))
        try drain(lazy, upTo: count - 1)
        // Started once the watcher has read everything: it must follow the marker.
        #expect(ServerTests.startLongBlock(f, count))
        let last = try #require(try lazy.readLine())
        #expect(last.contains(".n\(count).example.com"), "the next event follows the marker: \(last.prefix(80))")
    }

    /// Reads the watcher's stream until the event of block `upTo`: every lock event must be
    /// the next block in order, and a dropped event must account for exactly the blocks it skips.
    private func drain(_ client: RawClient, upTo: Int) throws {
        var expected = 0, markers = 0
        while expected <= upTo {
            let line = try #require(try client.readLine(), "the stream ended at block \(expected)")
            guard case .event(let e) = try Response.parse(line) else { Issue.record("not an event: \(line)"); return }
            if e["event"] == "dropped" {
                let n = try #require(e["count"]?.int, "a count: \(line)")
                #expect(n > 0)
                #expect(e["time"]?.string != nil, "a time: \(line)")
                markers += 1
                expected += n
                continue
            }
            let selection = e["selection"]?.string ?? ""
            #expect(e["event"] == "lock" && selection.hasSuffix(".n\(expected).example.com"), "block \(expected) next, got \(line.prefix(80))")
            if !selection.hasSuffix(".n\(expected).example.com") { return }
            expected += 1
        }
        #expect(expected == upTo + 1, "the counts add up exactly")
        #expect(markers > 0, "the watcher was told it fell behind")
    }

    @Test("§8: 10,000 pipelined requests in one write are all answered, in order")
    func pipelining() throws {
        let f = try Fixture { _ in }
        let c = try RawClient(path: f.sandbox.socket)
        let writer = Thread {
            var burst: [UInt8] = []
            for i in 0..<10_000 { burst += Array((i % 2 == 0 ? "hello\n" : "nope\n").utf8) }
            c.send(raw: burst)
        }
        writer.start()
        for i in 0..<10_000 {
            let line = try #require(try c.readLine(), "answer \(i)")
            #expect(line.hasPrefix(i % 2 == 0 ? "OK " : "ERR unknown-command"), "answer \(i) in order")
            if !line.hasPrefix(i % 2 == 0 ? "OK " : "ERR unknown-command") { break }
        }
    }

    @Test("§8: a client streaming an endless line is cut off while others are served")
    func endlessLine() throws {
        let f = try Fixture { _ in }
        let flood = try RawClient(path: f.sandbox.socket)
        let other = try RawClient(path: f.sandbox.socket)
        let chunk = Array(repeating: UInt8(ascii: "a"), count: 65_536)
        for _ in 0..<16 { flood.send(raw: chunk) }
        #expect(try other.request("hello").hasPrefix("OK "))
        #expect(try flood.readLine()?.hasPrefix("ERR line-too-long") == true)
    }

    @Test("§8: a client that closes its side after its requests still gets every answer (nc -N, shell pipes)")
    func halfClose() throws {
        let f = try Fixture { _ in }
        let c = try RawClient(path: f.sandbox.socket)
        c.send(raw: Array("hello\nstatus\nbogus\npartial-line-without-lf".utf8))
        shutdown(c.fd, Int32(SHUT_WR))
        #expect(try c.readLine()?.hasPrefix("OK {\"protocol\"") == true)
        #expect(try c.readLine()?.hasPrefix("OK {\"schema\"") == true)
        #expect(try c.readLine()?.hasPrefix("ERR unknown-command") == true)
        #expect(try c.readLine() == nil, "then the connection is closed; a partial line is not a request")
    }

    @Test("§8: a client that drips bytes without finishing a line is timed out (slow-loris)")
    func slowDrip() throws {
        let f = try Fixture { $0.idleTimeout = 0.3 }
        let c = try RawClient(path: f.sandbox.socket)
        for _ in 0..<8 {
            c.send(raw: [UInt8(ascii: "h")])
            usleep(100_000)
        }
        #expect(try c.readLine()?.hasPrefix("ERR usage idle for") == true)
    }

    @Test("§5, §8: one user cannot take every connection; the last slots are root's")
    func admission() throws {
        let f = try Fixture {
            $0.maxConnections = 4
            $0.reservedForRoot = 1
            $0.maxPerUser = 2
        }
        let alice = Peer(uid: 1000, mayModify: true)
        let bob = Peer(uid: 1001, mayModify: true)
        #expect(f.server.queue.sync { f.server.admission(for: alice) } == nil)
        f.server.queue.sync { f.server.perUser[1000] = 2 }
        #expect(f.server.queue.sync { f.server.admission(for: alice) }?.contains("from uid 1000") == true)
        #expect(f.server.queue.sync { f.server.admission(for: bob) } == nil)
        // Three connections (root's, from this test): a fourth is root's only.
        let held = try (0..<3).map { _ in try RawClient(path: f.sandbox.socket) }
        for c in held { #expect(try c.request("hello").hasPrefix("OK ")) }
        #expect(f.server.queue.sync { f.server.admission(for: bob) }?.contains("kept for root") == true)
        #expect(f.server.queue.sync { f.server.admission(for: .root) } == nil)
        let fourth = try RawClient(path: f.sandbox.socket)
        #expect(try fourth.request("hello").hasPrefix("OK "), "root gets the reserved slot")
    }
}

/// B2 over the real socket: a native-messaging host's connection is the browser's lifetime.
@Suite("B2: a web reporter's connection", .serialized)
struct WebConnectionTests {
    @Test("B2: a connection that reports web time outlives the idle time-out, and what it reported ends when it closes")
    func endsWithTheConnection() throws {
        let f = try ServerFixture { $0.idleTimeout = 0.3 }
        let host = try RawClient(path: f.sandbox.socket)
        #expect(try host.request(#"web {"site":"www.youtube.com"}"#).contains(#""site":"youtube.com""#))
        // A plain connection opened after it is timed out first; the reporter is not.
        let plain = try RawClient(path: f.sandbox.socket)
        #expect(try plain.readLine()?.hasPrefix("ERR usage idle for") == true)
        #expect(try host.request(#"web {"site":"youtube.com"}"#).hasPrefix("OK "), "still open past the idle time-out")
        #expect(f.harness.run { f.harness.engine.core.webSites[getuid()]?.values.contains("youtube.com") } == true)
        shutdown(host.fd, Int32(SHUT_RDWR))  // the browser quit: its host's end of the socket goes
        let deadline = Date().addingTimeInterval(5)
        while f.harness.run({ !f.harness.engine.core.webSites.isEmpty }) && Date() < deadline { usleep(10_000) }
        #expect(f.harness.run { f.harness.engine.core.webSites.isEmpty }, "the browser is gone: nothing of it counts on")
    }
}
