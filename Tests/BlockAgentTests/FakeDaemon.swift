import BlockCore
import Foundation
import Glibc
import Synchronization
import BlockTestTools

/// A stand-in for blockd on a Unix socket, speaking the real protocol lines (§8):
/// `hello`, `watch` (then `EVENT` lines the test sends), `selection-show` from a table and
/// `web` (the browser host's report, B1) with a fixed answer. `restart()` drops every
/// connection, as a daemon restart does.
final class FakeDaemon: Sendable {
    let path: String
    private let listener: Int32
    private let selections: [String: JSONObject]
    private struct State {
        var watchers: [Int32] = []
        var watchRequests = 0
        var open: [Int32] = []
        var stopped = false
        /// M4: the more-time requests the agent sent (more, approve, deny), in order.
        var received: [Request] = []
        /// R3: the report requests it sent.
        var reports: [Request] = []
        /// The selections the agent asked about (`selection-show`), in order.
        var shown: [String] = []
        /// B1: each `web` request's argument object, in order.
        var webs: [JSONObject] = []
    }
    private let state = Mutex(State())

    /// M4: what `requests` answers as `admin` (may this user approve).
    private let admin: Bool
    /// R3: what `report` answers (nil: it is refused, as by a daemon without reports).
    private let report: JSONObject?
    /// B1: what `web` answers, whatever the site.
    private let web: JSONObject

    /// `selections`: name → the selection object `selection-show` answers with.
    init(path: String, selections: [String: JSONObject], admin: Bool = false, report: JSONObject? = nil,
         web: JSONObject = ["site": nil, "counted": [], "blocked": [], "limits": []]) throws {
        self.path = path
        self.web = web
        self.selections = selections
        self.admin = admin
        self.report = report
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let fd = listener
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0, listen(listener, 8) == 0 else { throw TestFailure("cannot listen on \(path): \(String(cString: strerror(errno)))") }
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Once: a test's `defer { stop() }` and then deinit must not stop it twice. Every
    /// descriptor is shut down here but closed by the thread that used it (the accept loop,
    /// each connection's server), under the lock that lists it: a number is never used after
    /// its close, when another thread of the test process may have opened it again (another
    /// test's listening socket, which a stray shutdown makes refuse connections).
    func stop() {
        state.withLock { s in
            guard !s.stopped else { return }
            s.stopped = true
            for fd in s.open { shutdown(fd, Int32(SHUT_RDWR)) }
            shutdown(listener, Int32(SHUT_RDWR))  // the accept loop wakes, returns and closes it
        }
    }

    var watchRequests: Int { state.withLock { $0.watchRequests } }
    var watcherCount: Int { state.withLock { $0.watchers.count } }
    var received: [Request] { state.withLock { $0.received } }
    var reports: [Request] { state.withLock { $0.reports } }
    var shown: [String] { state.withLock { $0.shown } }
    var webs: [JSONObject] { state.withLock { $0.webs } }

    /// Sends `EVENT {json}` to every watcher.
    func send(_ event: JSONObject) {
        let line = Array((Response.event(event).line + "\n").utf8)
        state.withLock { s in
            for fd in s.watchers {
                _ = line.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
        }
    }

    /// Closes every connection, as a restart does; the listener stays for the reconnect.
    func restart() {
        state.withLock { s in
            for fd in s.open { shutdown(fd, Int32(SHUT_RDWR)) }
            s.watchers = []
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                Glibc.close(listener)  // stopped (or broken): closed here, where it was used
                return
            }
            let stopped = state.withLock { s in
                if !s.stopped { s.open.append(fd) }
                return s.stopped
            }
            if stopped {
                Glibc.close(fd)
                Glibc.close(listener)
                return
            }
            Thread.detachNewThread { [self] in serve(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { s in
                s.open.removeAll { $0 == fd }
                s.watchers.removeAll { $0 == fd }
                Glibc.close(fd)
            }
        }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            buffer += chunk[..<n]
            while let lf = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<lf], as: UTF8.self)
                buffer.removeSubrange(...lf)
                let reply = answer(line, fd: fd) + "\n"
                _ = Array(reply.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    private func answer(_ line: String, fd: Int32) -> String {
        // B1: `web` is the browser host's; this build's `Request` may not know it yet.
        if line == "web" || line.hasPrefix("web ") {
            let arguments = line.count > 4 ? (try? JSON.parse(String(line.dropFirst(4))))?.object : JSONObject()
            guard let arguments else { return Response.error(CoreError(.usage, "web: the arguments must be a JSON object")).line }
            state.withLock { $0.webs.append(arguments) }
            return Response.ok(web).line
        }
        let request: Request
        do { request = try Request.parse(line) } catch { return Response.error(error).line }
        switch request {
        case .hello:
            return Response.ok(["daemon": "fake-blockd", "version": "0", "protocol": 1]).line
        case .watch:
            state.withLock {
                $0.watchers.append(fd)
                $0.watchRequests += 1
            }
            return Response.ok(WatchingReply(protocolVersion: 1).json).line
        case .selectionShow(let name):
            state.withLock { $0.shown.append(name) }
            guard let s = selections[name] else { return Response.error(CoreError(.unknownSelection, "no selection \(name)")).line }
            return Response.ok(["selection": .object(s)]).line
        case .requests:
            return Response.ok(["requests": [], "grants": [], "delayed": [], "admin": .bool(admin)]).line
        case .more, .approve, .deny:
            state.withLock { $0.received.append(request) }
            return Response.ok(["id": "m3"]).line
        case .report:
            state.withLock { $0.reports.append(request) }
            guard let report else { return Response.error(CoreError(.unsupported, "no report here")).line }
            return Response.ok(report).line
        default:
            return Response.error(CoreError(.unsupported, "the fake daemon only knows hello, watch, selection-show and the more-time requests")).line
        }
    }
}
