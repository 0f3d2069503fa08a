import BlockClient
import BlockCore
import Foundation
import Glibc
import Testing

/// The real socket code against a tiny scripted server in a temp directory.
@Suite("ControlConnection over a Unix socket (§8)")
struct ControlConnectionTests {
    /// A listening socket at a fresh path; `serve` runs on another thread with the accepted fd.
    static func listen(_ serve: @escaping @Sendable (Int32) -> Void) throws -> (path: String, done: DispatchSemaphore) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("blockc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("s.sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(rc == 0 && Glibc.listen(fd, 4) == 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let client = accept(fd, nil, nil)
            serve(client)
            Glibc.close(client)
            Glibc.close(fd)
            unlink(path)
            done.signal()
        }
        return (path, done)
    }

    static func write(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    static func readLine(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 10 { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("one request, one response (even when it arrives in pieces), then a watch stream until EOF")
    func roundTrip() throws {
        let (path, done) = try Self.listen { fd in
            #expect(Self.readLine(fd) == "status")
            Self.write(fd, #"OK {"now":"2026-11-29T13:05:00+09:00","#)
            usleep(20_000)
            Self.write(fd, "\"blocked\":[]}\nERR ")
            #expect(Self.readLine(fd) == #"stop {"name":"x"}"#)
            Self.write(fd, "not-found no block named 'x'\r\n")
            #expect(Self.readLine(fd) == "watch")
            Self.write(fd, "OK\nEVENT {\"event\":\"lock\"}\nEVENT {\"event\":\"unlock\"}\n")
        }
        let connection = try ControlConnection(path: path, timeout: 5)
        #expect(try connection.send(.status()) == .ok(["now": "2026-11-29T13:05:00+09:00", "blocked": []]))
        #expect(try connection.send(.stop(name: "x")) == .error(CoreError(.notFound, "no block named 'x'")))
        #expect(try connection.send(.watch) == .ok([:]))
        #expect(try connection.readLine() == #"EVENT {"event":"lock"}"#)
        #expect(try connection.readLine() == #"EVENT {"event":"unlock"}"#)
        #expect(try connection.readLine() == nil)
        connection.close()
        done.wait()
    }

    @Test("no daemon: ENOENT becomes 'blockd is not running' with how to start it, and how to reach a sandbox; a sandbox's socket is named as one")
    func missing() {
        #expect(throws: ClientError.unreachable(path: "/nonexistent/blockd.sock", errno: ENOENT)) {
            _ = try ControlConnection(path: "/nonexistent/blockd.sock")
        }
        let text = ClientError.unreachable(path: "/run/blockd/blockd.sock", errno: ECONNREFUSED).description
        #expect(text == "blockd is not running (no daemon at /run/blockd/blockd.sock); start it with 'sudo systemctl start blockd'. "
                + "To talk to a sandboxed blockd ('make try' prints its socket), give blockc its socket: 'export BLOCKD_SOCKET=PATH' or 'blockc --socket PATH'")
        let sandbox = ClientError.unreachable(path: "/tmp/blockd-try.x/blockd.sock", errno: ENOENT).description
        #expect(sandbox.hasPrefix("no blockd at /tmp/blockd-try.x/blockd.sock (from --socket or BLOCKD_SOCKET); if it was a sandbox, start it again ('make try'"))
        #expect(!sandbox.contains("sudo"), "never 'sudo make run' (it edits the real /etc/hosts)")
    }

    @Test("a path longer than sun_path is refused up front, never truncated")
    func tooLong() {
        let path = "/tmp/" + String(repeating: "x", count: 120)
        do {
            _ = try ControlConnection(path: path)
            Issue.record("connected to a truncated path")
        } catch {
            guard case .unreachable(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("too long"))
        }
    }

    @Test("a daemon that never answers times out instead of hanging the script")
    func timeout() throws {
        let (path, done) = try Self.listen { fd in
            _ = Self.readLine(fd)
            usleep(600_000)
        }
        let connection = try ControlConnection(path: path, timeout: 0.2)
        do {
            _ = try connection.send(.status())
            Issue.record("no timeout")
        } catch {
            guard case .unreachable(_, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reason.contains("did not answer"))
        }
        connection.close()
        done.wait()
    }

    @Test("a daemon that closes without answering is a protocol error naming the command")
    func closedEarly() throws {
        let (path, done) = try Self.listen { fd in _ = Self.readLine(fd) }
        let connection = try ControlConnection(path: path, timeout: 5)
        #expect(throws: ClientError.protocolError("blockd closed the connection without answering 'status'; see 'journalctl -u blockd'")) {
            _ = try connection.send(.status())
        }
        done.wait()
    }

    /// A daemon over its per-user connection limit answers `ERR busy` at accept and closes
    /// without reading (ControlServer.admission); blockc's write of the request then fails
    /// with EPIPE, and used to print "Broken pipe" instead of what the daemon said.
    static let busy = "too many connections from uid 1000 (32); close some and try again"

    @Test("§8: a daemon that answers ERR busy and closes without reading: the request's write fails with EPIPE, and the answer is the busy error, not a broken pipe")
    func busyBeforeRequest() throws {
        let (path, done) = try Self.listen { fd in Self.write(fd, "ERR busy \(Self.busy)\n") }
        let connection = try ControlConnection(path: path, timeout: 5)
        done.wait()
        #expect(try connection.send(.status()) == .error(CoreError(.busy, Self.busy)))
        connection.close()
    }

    @Test("§6: blockc shows the daemon's busy text on stderr and exits 1, as for any ERR")
    func busyThroughBlockc() throws {
        let (path, done) = try Self.listen { fd in Self.write(fd, "ERR busy \(Self.busy)\n") }
        var err = ""
        let runner = BlockcRunner(environment: ["BLOCKD_SOCKET": path], stdout: { _ in true }, stderr: { err += $0 },
                                  now: { Date() }, clock: Fixture.tokyo, color: false, isTerminal: false,
                                  connect: { path throws(ClientError) in
                                      let connection = try ControlConnection(path: path, timeout: 5)
                                      done.wait()
                                      return connection
                                  },
                                  sleep: { _ in false })
        let status = runner.run(try BlockcInvocation.parse(["status"], now: Date()))
        #expect(status == BlockcRunner.refused)
        #expect(err == "blockc: \(Self.busy)\n", "\(err)")
    }
}
