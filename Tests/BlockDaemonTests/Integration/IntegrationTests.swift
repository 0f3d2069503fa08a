import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import ZoneInfo
import BlockTestTools

/// The real blockd binary in a sandbox (§2, §7, §8), driven over its socket.
@Suite("Integration: the real blockd in a sandbox", .serialized)
struct IntegrationTests {
    @Test("a 2-second block unlocks by itself, and the unlock is logged with its lateness")
    func shortBlockUnlocks() throws {
        let s = Sandbox()
        try s.start()
        let answer = try s.request(#"start {"selections":["instagram"],"seconds":2}"#)
        #expect(answer.hasPrefix("OK "))
        #expect(try s.status()["blocked"]?[0]?["selection"] == "instagram")
        #expect(Run.eventually { s.log.contains("Unblocked instagram: timed block 'instagram' ended (2s)") }, "log:\n\(s.log)")
        #expect(try s.status()["blocked"] == [])
    }

    @Test("T4: a refusal past the cap is answered and journalled, and is no failure in status")
    func capRefusal() throws {
        let s = Sandbox()
        s.write("[Daemon]\nMaxActivities=1\n", to: "etc/blockd.conf")
        try s.start()
        #expect(try s.request(#"start {"selections":["instagram"],"seconds":600}"#).hasPrefix("OK "))
        let refused = try s.request(#"start {"selections":["reddit"],"seconds":600}"#)
        #expect(refused.hasPrefix("ERR activity-limit "))
        #expect(refused.contains("MaxActivities= in \(s.configDir)/blockd.conf"), "the message names the real config file")
        #expect(try s.status()["failures"] == .array([]))
        #expect(Run.eventually { s.log.contains("Refused: cannot add") }, "log:\n\(s.log)")
    }

    @Test("T5: a block ending inside an active schedule that covers the same selection leaves it blocked")
    func unionAcrossEnd() throws {
        let s = Sandbox()
        try s.start()
        // A schedule window around now (minute precision), long enough to outlive the block.
        let zone = SystemTimeZone.named("Asia/Tokyo")!
        let clock = LocalClock(zone)
        let now = clock.civil(of: Date())
        let startMinute = now.secondsOfDay / 60
        let start = String(format: "%02d:%02d", startMinute / 60, startMinute % 60)
        let endMinute = (startMinute + 3) % 1440
        let end = String(format: "%02d:%02d", endMinute / 60, endMinute % 60)
        #expect(try s.request(#"schedule-add {"name":"focus","window":"\#(start)-\#(end)","selections":["instagram"]}"#).hasPrefix("OK "))
        #expect(try s.request(#"start {"selections":["instagram","reddit"],"seconds":1}"#).hasPrefix("OK "))
        #expect(Run.eventually { s.log.contains("Unblocked reddit") })
        let blocked = try s.status()["blocked"]
        #expect(blocked?.array?.count == 1)
        #expect(blocked?[0]?["selection"] == "instagram")
        #expect(blocked?[0]?["reasons"] == ["focus"])
        #expect(!s.log.contains("Unblocked instagram"))
    }

    @Test("T8: kill -9 then restart keeps every block and catches up a missed end")
    func killAndRestart() throws {
        let s = Sandbox()
        try s.start()
        #expect(try s.request(#"start {"selections":["instagram"],"seconds":1}"#).hasPrefix("OK "))
        #expect(try s.request(#"start {"selections":["reddit"],"seconds":3600,"lock":true}"#).hasPrefix("OK "))
        s.stop(signal: SIGKILL)
        usleep(1_500_000)
        try s.start()
        let status = try s.status()
        #expect(status["activities"]?.array?.map { $0["name"] } == ["reddit"])
        #expect(status["blocked"]?.array?.map { $0["selection"] } == ["reddit"])
        #expect(s.log.contains("Catching up: block 'instagram' ended"), "log:\n\(s.log)")
        #expect(s.log.contains("Unblocked instagram"))
    }

    @Test("§8: garbage, over-long lines and abrupt disconnects leave the daemon serving others")
    func hostileClients() throws {
        let s = Sandbox()
        try s.start()
        let good = try RawClient(path: s.socket)
        #expect(try good.request("hello").hasPrefix("OK "))
        var rng = SystemRandomNumberGenerator()
        for i in 0..<50 {
            let bad = try RawClient(path: s.socket)
            switch i % 5 {
            case 0: bad.send(raw: (0..<300).map { _ in UInt8.random(in: 0...255, using: &rng) } + [10])
            case 1: bad.send(raw: Array(repeating: UInt8(ascii: "a"), count: 10_000))
            case 2: bad.send(raw: Array("start {\"selections\":[".utf8))  // half a request, then gone
            case 3: bad.send(raw: Array(repeating: UInt8(ascii: "["), count: 4000) + [10])
            default: bad.send(raw: Array("status\r\nhello\n".utf8))
            }
            if i % 5 == 1 {
                let answer = try bad.readLine()
                #expect(answer?.hasPrefix("ERR line-too-long") == true)
                #expect(try bad.readLine() == nil, "closed after a too-long line")
            }
        }
        #expect(try good.request("status").hasPrefix("OK "))
        #expect(try s.request("hello").hasPrefix("OK "))
        let pipelined = try RawClient(path: s.socket)
        pipelined.send(raw: Array("hello\nbogus\nstatus\n".utf8))
        #expect(try pipelined.readLine()?.hasPrefix("OK {\"protocol\"") == true)
        #expect(try pipelined.readLine()?.hasPrefix("ERR unknown-command") == true)
        #expect(try pipelined.readLine()?.hasPrefix("OK {\"schema\"") == true, "answers come in order")
    }

    @Test("§8: watch streams lock and unlock events")
    func watch() throws {
        let s = Sandbox()
        try s.start()
        let watcher = try RawClient(path: s.socket)
        #expect(try watcher.request("watch").hasPrefix("OK "))
        #expect(try s.request(#"start {"selections":["youtube"],"seconds":1}"#).hasPrefix("OK "))
        let lock = try #require(try watcher.readLine())
        #expect(lock.hasPrefix("EVENT "))
        #expect(try JSON.parse(String(lock.dropFirst(6)))["event"] == "lock")
        let unlock = try #require(try watcher.readLine())
        #expect(try JSON.parse(String(unlock.dropFirst(6)))["event"] == "unlock")
    }

    @Test("systemd: READY=1 after the first reconcile, WATCHDOG=1 pings, STOPPING=1 on SIGTERM")
    func notifyReady() throws {
        let s = Sandbox()
        let path = s.dir + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        #expect(UnixSocket.withAddress(path) { bind(fd, $0, $1) } == 0)
        var tv = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        try s.start(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"], waitForSocket: false)
        var messages: [String] = []
        func receive(until done: (String) -> Bool) {
            while messages.count < 50 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return }
                messages.append(String(decoding: buffer[0..<n], as: UTF8.self))
                if done(messages.last!) { return }
            }
        }
        receive { $0.contains("READY=1") }
        let ready = messages.first { $0.contains("READY=1") }
        #expect(ready != nil, "got \(messages)")
        #expect(ready?.contains("STATUS=") == true)
        receive { $0 == "WATCHDOG=1" }
        #expect(messages.contains("WATCHDOG=1"), "the engine queue pings the watchdog: \(messages.suffix(3))")
        try s.waitUntilServing()
        // Make room in the datagram queue (pings kept coming meanwhile) for STOPPING=1.
        var scratch = [UInt8](repeating: 0, count: 4096)
        while scratch.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        s.stop()
        receive { $0.contains("STOPPING=1") }
        #expect(messages.contains { $0.contains("STOPPING=1") })
    }

    @Test("systemd: a manager that stops reading the notify socket never stalls the daemon")
    func notifyNeverBlocks() throws {
        let s = Sandbox()
        let path = s.dir + "/notify.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        #expect(UnixSocket.withAddress(path) { bind(fd, $0, $1) } == 0)
        // Pings every 10 ms into a queue nobody reads: full after about 0.1 s.
        try s.start(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000"], waitForSocket: false)
        try s.waitUntilServing()
        usleep(1_000_000)
        let c = try RawClient(path: s.socket)  // answers within 10 s or throws (then the sandbox kills blockd)
        for _ in 0..<20 { #expect(try c.request("hello").hasPrefix("OK "), "the engine queue still answers") }
        #expect(try c.request(#"start {"selections":["reddit"],"seconds":1}"#).hasPrefix("OK "))
        #expect(Run.eventually(timeout: 5) { (try? c.request("status"))?.contains(#""blocked":[]"#) == true }, "its one timer still fires")
        let pid = try #require(s.daemon?.processIdentifier)
        kill(pid, SIGTERM)
        #expect(Run.eventually(timeout: 5) { s.daemon?.isRunning == false }, "SIGTERM is handled on the engine queue")
    }

    @Test("systemd: socket activation through systemd-socket-activate")
    func socketActivation() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else {
            if Privileged.required {
                Issue.record("\(activate) is missing; install the systemd package")
            }
            return
        }
        let s = Sandbox()
        _ = try s.launch(activate, ["-l", s.socket, Repo.binDir + "/blockd"] + s.daemonArgs(socket: s.dir + "/unused.sock"),
                         output: s.logPath)
        #expect(Run.eventually { FileManager.default.fileExists(atPath: s.socket) })
        // The first connection makes systemd-socket-activate exec blockd with the socket as fd 3.
        let answer = try s.request("hello")
        #expect(answer.hasPrefix("OK "), "log:\n\(s.log)")
        #expect(!FileManager.default.fileExists(atPath: s.dir + "/unused.sock"), "blockd used the passed socket, not its own")
    }

    @Test("a second daemon on the same socket refuses to start, and the first keeps serving")
    func secondDaemon() throws {
        let s = Sandbox()
        try s.start()
        let first = s.daemon!
        let second = try s.launch(Repo.binDir + "/blockd", s.daemonArgs(stateDir: s.dir + "/state2"), output: s.dir + "/second.log")
        second.waitUntilExit()
        #expect(second.terminationStatus == 1)
        #expect(first.isRunning)
        #expect(try s.request("hello").hasPrefix("OK "))
    }
}
