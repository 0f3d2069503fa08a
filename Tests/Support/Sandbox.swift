import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestTools

/// A temp directory with the real `blockd` running in it (unprivileged: its own socket,
/// state and config dirs; a hosts file of its own). Every process it starts is stopped when the
/// sandbox goes away, whether the test passed or not.
public final class Sandbox: @unchecked Sendable {
    /// Short (`/tmp/bd-XXXXXX`): the socket's path must fit sun_path's 108 bytes.
    private let temp = try! TempDir()
    public var dir: String { temp.path }
    public var socket: String { dir + "/s.sock" }
    public var stateDir: String { dir + "/state" }
    public var configDir: String { dir + "/etc" }
    public var logPath: String { dir + "/blockd.log" }
    /// The sandbox's own hosts file. Every blockd a test starts gets `--hosts-file` pointing
    /// here: no test ever touches the real /etc/hosts.
    public var hostsPath: String { dir + "/hosts" }
    /// Browser policies (E7) go under here, never into the machine's /etc.
    public var policyRoot: String { dir + "/root" }
    /// Per-user tables (U3) go here, never into the machine's /run/blockd/users.
    public var userTablesDir: String { dir + "/users" }
    public static let hostsTemplate = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n# a user's own line, no final newline\n10.0.0.7 nas"

    /// The flags that keep blockd inside this sandbox (E5's socket cuts and nftables table act
    /// on the whole network namespace, so they are off here; the machine's logins are not the
    /// sandbox's to count as screen time).
    public func daemonArgs(socket: String? = nil, stateDir: String? = nil, logTarget: String = "console") -> [String] {
        ["--socket", socket ?? self.socket, "--state-dir", stateDir ?? self.stateDir, "--config-dir", configDir,
         "--hosts-file", hostsPath, "--log-target", logTarget, "--policy-root", policyRoot, "--user-tables-dir", userTablesDir]
            + Sandbox.machineWideOff
    }
    public static let machineWideOff = ["--firewall", "no", "--cut-sockets", "no", "--screen-time", "no"]
    public private(set) var daemon: Process?
    private var processes: [Process] = []

    public init() {
        try? FileManager.default.createDirectory(atPath: configDir + "/selections.d", withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(atPath: configDir + "/schedules.d", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: hostsPath, contents: Data(Sandbox.hostsTemplate.utf8))
    }

    deinit {
        for p in processes where p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }

    public func write(_ text: String, to relative: String) {
        _ = FileManager.default.createFile(atPath: dir + "/" + relative, contents: Data(text.utf8))
    }

    /// Starts blockd and waits until it answers `hello`; `wrapper` is a command that runs it
    /// (`setpriv ... --`), or none.
    @discardableResult
    public func start(extraArgs: [String] = [], environment: [String: String] = [:], waitForSocket: Bool = true,
               wrapper: [String] = []) throws -> Process {
        let command = wrapper + [Repo.binDir + "/blockd"] + daemonArgs() + extraArgs
        let p = try launch(command[0], Array(command.dropFirst()), environment: environment, output: logPath)
        daemon = p
        if waitForSocket { try waitUntilServing() }
        return p
    }

    public func launch(_ path: String, _ arguments: [String], environment: [String: String] = [:], output: String? = nil) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["TZ"] = env["TZ"] ?? "Asia/Tokyo"
        for (k, v) in environment { env[k] = v }
        p.environment = env
        if let output {
            if !FileManager.default.fileExists(atPath: output) { _ = FileManager.default.createFile(atPath: output, contents: nil) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            handle.seekToEndOfFile()
            p.standardOutput = handle
            p.standardError = handle
        }
        try p.run()
        processes.append(p)
        return p
    }

    public func waitUntilServing(timeout: TimeInterval = 15) throws {
        var gone = false
        let serving = Run.eventually(timeout: timeout) {
            if let c = try? RawClient(path: socket), (try? c.request("hello"))?.hasPrefix("OK ") == true { return true }
            gone = daemon.map { !$0.isRunning } ?? false
            return gone
        }
        if serving && !gone { return }
        throw TestFailure("blockd did not start serving on \(socket); its log:\n\(log)")
    }

    public func stop(signal sig: Int32 = SIGTERM) {
        guard let d = daemon, d.isRunning else { return }
        kill(d.processIdentifier, sig)
        d.waitUntilExit()
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Runs the real blockc against this sandbox's daemon: exit status, stdout, stderr.
    public func blockc(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Repo.binDir + "/blockc")
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["BLOCKD_SOCKET"] = socket
        env["TZ"] = "Asia/Tokyo"
        env["NO_COLOR"] = "1"
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        processes.append(p)
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    /// One request on a fresh connection.
    public func request(_ line: String) throws -> String { try RawClient(path: socket).request(line) }

    public func status() throws -> JSON {
        let line = try request("status")
        guard line.hasPrefix("OK ") else { throw TestFailure("status failed: \(line)") }
        return try JSON.parse(String(line.dropFirst(3)))
    }
}

/// A minimal blocking client speaking raw protocol lines (so the tests also check the wire).
public final class RawClient: @unchecked Sendable {  // one thread writes, another reads: the fd is safe for that
    public private(set) var fd: Int32
    public var buffer: [UInt8] = []

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if r != 0 {
            let code = errno
            close(fd)
            // deinit runs when an initializer throws after every property is set: without
            // this it would close the number again, which another thread may have reopened
            // meanwhile (another test's listening socket: "Connection refused" there).
            fd = -1
            throw TestFailure("cannot connect to \(path): \(String(cString: strerror(code)))")
        }
    }

    deinit { if fd >= 0 { close(fd) } }

    public func send(raw: [UInt8]) {
        _ = raw.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    public func request(_ line: String) throws -> String {
        send(raw: Array((line + "\n").utf8))
        guard let answer = try readLine() else { throw TestFailure("connection closed before an answer to \(line.prefix(40))") }
        return answer
    }

    public func readLine() throws -> String? {
        while true {
            if let lf = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<lf], as: UTF8.self)
                buffer.removeSubrange(...lf)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return nil }
            if n < 0 { throw TestFailure("read failed: \(String(cString: strerror(errno)))") }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}
