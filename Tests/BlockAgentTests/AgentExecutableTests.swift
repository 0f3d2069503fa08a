import BlockClient
import Foundation
import Glibc
import Testing
import BlockTestTools

/// `blockc watch --notify` execs the notification agent, blockc-agent: blockd's one executable
/// (P1) under the agent's name, found next to blockc, or in ../libexec/blockd/ once installed,
/// else blockc's own file. (What each name loads: MultiCallTests.)
@Suite("blockc-agent: the notification agent, run by its own name", .serialized)
struct AgentExecutableTests {
    static let bin = Repo.binDir

    /// A temp dir that is removed afterwards, holding copies of the built executables. Copied
    /// by cp(1), not in this process: a write descriptor held here while another test thread
    /// forks is inherited by that child, and the copy cannot be run (ETXTBSY) until it execs.
    static func copy(_ names: [String: String]) throws -> String {
        var template = Array("/tmp/ba-exe-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        for (name, to) in names {
            let target = dir + "/" + to
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let cp = try Run.capture("/bin/cp", [bin + "/" + name, target])
            guard cp.status == 0 else { throw POSIXError(.EIO, userInfo: [NSLocalizedDescriptionKey: "cp \(name): \(cp.output)"]) }
        }
        return dir
    }

    @Test("blockc-agent --help and --version exit 0 and say what it is, also under the host's name", arguments: [
        ("blockc-agent", ["--help"], "usage: blockc-agent --socket PATH watch --notify\n"),
        ("blockc-agent", ["--version"], "blockc-agent "),
        ("blockd-nm-host", ["--help"], "usage: blockc-agent --socket PATH watch --notify\n"),
    ])
    func helpAndVersion(name: String, arguments: [String], starts: String) throws {
        let dir = try TempDir(prefix: "ba-help-")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/" + name, withDestinationPath: AgentExecutableTests.bin + "/blockc-agent")
        let r = try Run.capture(dir.path + "/" + name, arguments)
        #expect(r.status == 0)
        #expect(r.output.hasPrefix(starts), "\(r.output)")
        if arguments == ["--help"] { #expect(r.output.contains("blockd-nm-host"), "the help names the host mode") }
    }

    /// (argv[0], the process name) of a running process, from /proc.
    static func identity(_ pid: pid_t) -> (argv0: String, comm: String) {
        let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        let argv0 = String(decoding: cmdline.prefix { $0 != 0 }, as: UTF8.self)
        let comm = ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        return (argv0, comm)
    }

    /// Runs `dir/bin/blockc watch --notify` against a fake blockd until it subscribes; returns
    /// the agent's /proc/PID/exe and identity, then stops it (SIGTERM: exit 0).
    static func runAgent(in dir: String) throws -> (exe: String?, argv0: String, comm: String) {
        let processes = Processes()
        defer { processes.stopAll() }
        let daemon = try FakeDaemon(path: dir + "/blockd.sock", selections: [:])
        defer { daemon.stop() }
        let env = ["XDG_RUNTIME_DIR": dir, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/no-bus", "PATH": dir, "XDG_STATE_HOME": dir + "/state"]
        let agent = try processes.launch(dir + "/bin/blockc", ["--socket", daemon.path, "watch", "--notify"], environment: env, output: dir + "/agent.log")
        let log = { (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "" }
        #expect(Run.eventually { daemon.watcherCount == 1 }, "no subscription: \(log())")
        let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent.pid)/exe")
        let (argv0, comm) = identity(agent.pid)
        agent.stop()
        #expect(agent.exitStatus == 0, "SIGTERM ends the agent cleanly: \(log())")
        return (exe, argv0, comm)
    }

    @Test("installed layout (P1): bin/blockc, a link to bin/blockd, execs libexec/blockd/blockc-agent, a link to it too, which subscribes on blockc's socket")
    func installedLayout() throws {
        let dir = try AgentExecutableTests.copy(["blockd": "bin/blockd"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createSymbolicLink(atPath: dir + "/bin/blockc", withDestinationPath: "blockd")
        try FileManager.default.createDirectory(atPath: dir + "/libexec/blockd", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/libexec/blockd/blockc-agent", withDestinationPath: "../../bin/blockd")
        let agent = try AgentExecutableTests.runAgent(in: dir)
        #expect(agent.exe == dir + "/bin/blockd", "the same process, the one file")
        #expect(agent.argv0 == dir + "/libexec/blockd/blockc-agent" && agent.comm == "blockc-agent",
                "started by the agent's name, and named so: \(agent)")
    }

    @Test("P1: with no blockc-agent next to blockc or in ../libexec/blockd, watch --notify runs the agent from blockc's own file")
    func loneCopy() throws {
        let dir = try AgentExecutableTests.copy(["blockc": "bin/blockc"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let agent = try AgentExecutableTests.runAgent(in: dir)
        #expect(agent.exe == dir + "/bin/blockc")
        #expect(agent.argv0 == "blockc-agent", "run by the agent's name: \(agent)")
    }
}
