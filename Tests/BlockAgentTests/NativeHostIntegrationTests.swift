import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestTools

/// The real blockc-agent run as the browsers run it, `blockd-nm-host` (a symlink, as installed),
/// with framed messages on its stdin and stdout, against a fake blockd.
@Suite("Integration: the native-messaging host as the browsers run it (B1)", .serialized)
struct NativeHostIntegrationTests {
    /// The host's pipes and its frames, with a deadline on every read.
    final class Browser {
        let child: Child
        private(set) var toHost: Int32
        let fromHost: Int32
        private var buffer: [UInt8] = []

        init(_ processes: Processes, dir: String, socket: String, arguments: [String]) throws {
            let host = dir + "/blockd-nm-host"
            try FileManager.default.createSymbolicLink(atPath: host, withDestinationPath: Repo.binDir + "/blockc-agent")
            // Socket pairs rather than pipes: they are made close-on-exec at once (Glibc's module
            // has no pipe2), so no other test's child can inherit the host's stdin and keep it
            // open. Reads, writes, poll and the end of input behave as a pipe's do.
            var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
            let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, kind, 0, &input) == 0, socketpair(AF_UNIX, kind, 0, &output) == 0 else {
                throw TestFailure("socketpair: \(String(cString: strerror(errno)))")
            }
            defer {
                close(input[0])
                close(output[1])
            }
            child = try processes.launch(host, arguments, environment: ["BLOCKD_SOCKET": socket], output: dir + "/host.log",
                                         stdoutFD: output[1], stdinFD: input[0])
            (toHost, fromHost) = (input[1], output[0])
        }

        deinit {
            closeInput()
            close(fromHost)
        }

        func closeInput() {
            if toHost >= 0 { close(toHost) }
            toHost = -1
        }

        /// Writes with SIGPIPE blocked in this thread, so that a host that already left gives
        /// EPIPE here instead of killing the test runner; a SIGPIPE left pending is taken back.
        func write(_ bytes: [UInt8]) {
            var pipeSignal = sigset_t(), old = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, &old)
            defer {
                var zero = timespec()
                while sigtimedwait(&pipeSignal, nil, &zero) == SIGPIPE {}
                pthread_sigmask(SIG_SETMASK, &old, nil)
            }
            var offset = 0
            while offset < bytes.count {
                let start = offset
                let n = bytes.withUnsafeBytes { Glibc.write(toHost, $0.baseAddress! + start, $0.count - start) }
                guard n > 0 else { return }
                offset += n
            }
        }

        func send(_ message: JSONObject) {
            var body: [UInt8] = []
            JSON.object(message).serialize(into: &body)
            write(withUnsafeBytes(of: UInt32(body.count)) { Array($0) } + body)
        }

        /// The next frame, or nil at end of output or after `timeout` seconds.
        func next(timeout: Double = 10) throws -> JSONObject? {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if buffer.count >= 4 {
                    let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
                    if buffer.count >= 4 + length {
                        let body = Array(buffer[4..<(4 + length)])
                        buffer.removeSubrange(0..<(4 + length))
                        guard let o = try JSON.parse(bytes: body).object else { throw TestFailure("a frame that is not an object") }
                        return o
                    }
                }
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { return nil }
                var fd = pollfd(fd: fromHost, events: Int16(POLLIN), revents: 0)
                guard poll(&fd, 1, Int32(left * 1000) + 1) > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let n = chunk.withUnsafeMutableBytes { read(fromHost, $0.baseAddress, $0.count) }
                if n <= 0 {
                    if !buffer.isEmpty { throw TestFailure("the host's output ended inside a frame: \(buffer.count) bytes left") }
                    return nil
                }
                buffer += chunk[..<n]
            }
        }

        /// Frames until one of `type` comes (nil: none within the timeout).
        func next(type: String, timeout: Double = 10) throws -> JSONObject? {
            let deadline = Date().addingTimeInterval(timeout)
            while let o = try next(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
                if o["type"]?.string == type { return o }
            }
            return nil
        }
    }

    static let reply: JSONObject = [
        "site": "youtube.com", "counted": ["social"],
        "blocked": [["selection": "social", "activities": ["bedtime"], "until": "2099-01-01T07:00:00+00:00", "domains": ["youtube.com"], "more": "ask"]],
        "limits": [],
    ]

    @Test("B1: hello and a site become web requests as this user, each answered with a framed state; closing stdin ends it with 0 at once")
    func helloAndSite() throws {
        let dir = try TempDir(prefix: "nh-")
        let processes = Processes()
        defer { processes.stopAll() }
        let daemon = try FakeDaemon(path: dir.path + "/blockd.sock", selections: [:], web: Self.reply)
        defer { daemon.stop() }
        let browser = try Browser(processes, dir: dir.path, socket: daemon.path, arguments: ["chrome-extension://abcdefghijklmnop/"])
        let log = { (try? String(contentsOfFile: dir.path + "/host.log", encoding: .utf8)) ?? "" }

        browser.send(["type": "hello", "browser": "chromium", "version": "1.0.0", "lang": "en"])
        let first = try #require(try browser.next(type: "state"), "no state after hello: \(log())")
        #expect(first["connected"] == true)
        browser.send(["type": "site", "site": "www.youtube.com"])
        let state = try #require(try browser.next(type: "state"), "no state after site: \(log())")
        #expect(daemon.webs == [[:], ["site": "www.youtube.com"]], "web {} at hello (no site yet), then the site")
        #expect(state["connected"] == true && state["site"] == "youtube.com" && state["counted"] == ["social"])
        let blocked = try #require(state["blocked"]?.array?.first)
        #expect(blocked["until"] == "2099-01-01T07:00:00+00:00")
        #expect(blocked["untilText"]?.string?.hasPrefix("until ") == true, "\(blocked)")

        // Events that may change what is blocked send the site again; a warning is told as it is.
        #expect(Run.eventually { daemon.watcherCount == 1 }, "no subscription: \(log())")
        daemon.send(WatchEvent.lock(time: "2026-12-05T12:00:00+00:00", selection: "social", until: nil, reasons: ["bedtime"]).json)
        #expect(try browser.next(type: "state") != nil)
        #expect(daemon.webs.count == 3 && daemon.webs.last == ["site": "www.youtube.com"])
        daemon.send(WatchEvent.warning(time: "2026-12-05T12:00:00+00:00", activity: "social-limit", selection: "social",
                                       starts: "2099-01-01T00:05:00+00:00", remaining: "5m").json)
        let warning = try #require(try browser.next(type: "warning"), "\(log())")
        #expect(warning["left"] == 300 && warning["text"]?.string?.hasPrefix("social will be blocked soon.") == true, "\(warning)")

        // blockd restarts: it forgot the site, and is told again on a new connection.
        daemon.restart()
        #expect(try browser.next(type: "state", timeout: 15) != nil, "\(log())")
        #expect(Run.eventually { daemon.webs.count >= 4 } && daemon.webs.last == ["site": "www.youtube.com"], "\(daemon.webs)")

        browser.closeInput()
        #expect(Run.eventually(timeout: 2) { !browser.child.isRunning }, "still running after stdin closed: \(log())")
        #expect(browser.child.exitStatus == 0)
        while let extra = try browser.next(timeout: 1) {
            // Only frames on stdout, to the end (a stray line would have failed to parse above).
            #expect(extra["type"] != nil)
        }
        #expect(log().contains("started for chrome-extension://abcdefghijklmnop/"), "\(log())")
    }

    @Test("B1: blockd not running is a connected:false state, not silence; the host keeps running and retries")
    func unreachable() throws {
        let dir = try TempDir(prefix: "nh-")
        let processes = Processes()
        defer { processes.stopAll() }
        let browser = try Browser(processes, dir: dir.path, socket: dir.path + "/none.sock", arguments: [])
        browser.send(["type": "hello", "browser": "firefox", "version": "1.0.0", "lang": "ja"])
        let state = try #require(try browser.next(type: "state"))
        #expect(state["connected"] == false)
        #expect(state["message"]?.string?.contains("no blockd at") == true, "\(state)")  // a test socket: the sandbox form of the message
        #expect(browser.child.isRunning)
        browser.closeInput()
        #expect(Run.eventually(timeout: 2) { !browser.child.isRunning })
        #expect(browser.child.exitStatus == 0)
    }

    @Test("B1: a frame over 1 MiB from the browser is refused: a sentence on stderr and exit 1, nothing on stdout")
    func tooLong() throws {
        let dir = try TempDir(prefix: "nh-")
        let processes = Processes()
        defer { processes.stopAll() }
        let browser = try Browser(processes, dir: dir.path, socket: dir.path + "/none.sock", arguments: [])
        browser.write(withUnsafeBytes(of: UInt32(2 << 20)) { Array($0) } + [UInt8](repeating: 32, count: 100))
        #expect(Run.eventually(timeout: 3) { !browser.child.isRunning })
        #expect(browser.child.exitStatus == 1)
        #expect(try browser.next(timeout: 1) == nil)
        let log = (try? String(contentsOfFile: dir.path + "/host.log", encoding: .utf8)) ?? ""
        #expect(log.contains("the browser sent a message of 2097152 bytes; the host takes at most 1048576 (1 MiB); stopping"), "\(log)")
    }
}
