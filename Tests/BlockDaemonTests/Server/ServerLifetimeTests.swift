import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// A server let go of right after it answered. The connection's last steps after sending an
/// answer (resuming reads, the next request, closing) run on the server's queue while the
/// client already has its line; they must find the server still there. With the server held
/// `unowned`, this aborted the test process ("Attempted to read an unowned reference but
/// object was already destroyed") within a few hundred rounds on two cores.
@Suite("§8: a server let go of right after an answer")
struct ServerLifetimeTests {
    @Test("§8: a snapshot answer and an engine answer, then the server is dropped: nothing crashes", arguments: 0..<4)
    func dropRightAfterAnswers(_ round: Int) throws {
        for _ in 0..<75 {
            let f = try ServerFixture()
            let c = try RawClient(path: f.sandbox.socket)
            #expect(try c.request("status").hasPrefix("OK "))
            #expect(try c.request(#"start {"selections":["x.example.com"],"seconds":600,"name":"x"}"#).hasPrefix("OK "))
        }
    }

    @Test("§8: stop() closes every connection: a client reads end of file, and a new one cannot connect")
    func stopClosesConnections() throws {
        let sandbox = Sandbox()
        let harness = Harness(dir: sandbox.dir + "/state", persistent: false)
        let fd = try UnixSocket.listen(path: sandbox.socket)
        let server = ControlServer(listenFD: fd, engine: harness.engine, hub: harness.hub, log: harness.log)
        server.start()
        let idle = try RawClient(path: sandbox.socket)
        let watcher = try RawClient(path: sandbox.socket)
        #expect(try idle.request("hello").hasPrefix("OK "))
        #expect(try watcher.request("watch").hasPrefix("OK "))
        server.stop()
        #expect(try idle.readLine() == nil, "the idle client's connection was closed")
        #expect(try watcher.readLine() == nil, "the watcher's connection was closed")
        #expect(server.connections.isEmpty)
        close(fd)
    }
}
