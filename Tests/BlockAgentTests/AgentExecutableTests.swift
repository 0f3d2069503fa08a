import BlockClient
import Foundation
import Glibc
import Testing
import BlockTestTools

/// Only `watch --notify` loads libsystemd: the agent is its own executable, blockc-agent, which
/// `blockc watch --notify` execs (found next to blockc, or in ../libexec/blockd/ once installed).
@Suite("blockc-agent: the notification agent's own executable, the only one that loads libsystemd", .serialized)
struct AgentExecutableTests {
    static let bin = Repo.binDir

    /// The libraries one run loads, from the dynamic loader's own trace (LD_DEBUG=libs).
    static func loaded(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String, libraries: [String]) {
        let r = try Run.capture(path, arguments, environment: ["LD_DEBUG": "libs", "BLOCKD_SOCKET": "/nonexistent/blockd.sock"])
        let libraries = r.output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "find library=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " })
        }
        return (r.status, r.output, libraries)
    }

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

    @Test("blockc's commands load no libsystemd; blockc-agent does, and runs nothing but watch --notify",
          arguments: [["status"], ["watch"], ["--help"], ["start", "--minutes", "5", "instagram"]])
    func onlyTheAgentLoadsLibsystemd(arguments: [String]) throws {
        let client = try AgentExecutableTests.loaded(AgentExecutableTests.bin + "/blockc", arguments)
        #expect(!client.libraries.isEmpty, "no loader trace:\n\(client.output)")
        #expect(!client.libraries.contains { $0.hasPrefix("libsystemd") }, "blockc \(arguments) loaded \(client.libraries)")

        let agent = try AgentExecutableTests.loaded(AgentExecutableTests.bin + "/blockc-agent", arguments)
        #expect(agent.libraries.contains { $0.hasPrefix("libsystemd") }, "blockc-agent loaded \(agent.libraries)")
        if arguments == ["--help"] {
            #expect(agent.status == 0, "its own help, not blockc's")
            #expect(agent.output.contains("usage: blockc-agent --socket PATH watch --notify"), "\(agent.output.suffix(500))")
            return
        }
        #expect(agent.status == 2)
        #expect(agent.output.contains("blockc: blockc-agent runs only 'watch --notify'"), "\(agent.output.suffix(500))")
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

    @Test("without blockc-agent next to blockc or in ../libexec/blockd, watch --notify says where it looked (exit 2)")
    func missingAgent() throws {
        let dir = try AgentExecutableTests.copy(["blockc": "bin/blockc"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Run.capture(dir + "/bin/blockc", ["--socket", dir + "/blockd.sock", "watch", "--notify"])
        #expect(r.status == 2)
        #expect(r.output == "blockc: the notification agent blockc-agent is missing: looked for \(dir)/bin/blockc-agent and \(dir)/libexec/blockd/blockc-agent; reinstall blockd (make install), or use blockc watch\n")
    }

    @Test("installed layout: blockc in bin/ execs libexec/blockd/blockc-agent, which subscribes on blockc's socket")
    func installedLayout() throws {
        let dir = try AgentExecutableTests.copy(["blockc": "bin/blockc", "blockc-agent": "libexec/blockd/blockc-agent"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let processes = Processes()
        defer { processes.stopAll() }
        let daemon = try FakeDaemon(path: dir + "/blockd.sock", selections: [:])
        defer { daemon.stop() }
        let env = ["XDG_RUNTIME_DIR": dir, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir)/no-bus", "PATH": dir, "XDG_STATE_HOME": dir + "/state"]
        let agent = try processes.launch(dir + "/bin/blockc", ["--socket", daemon.path, "watch", "--notify"], environment: env, output: dir + "/agent.log")
        let log = { (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "" }
        #expect(Run.eventually { daemon.watcherCount == 1 }, "no subscription: \(log())")
        let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent.pid)/exe")
        #expect(exe == dir + "/libexec/blockd/blockc-agent", "the same process now runs the agent")
        agent.stop()
        #expect(agent.exitStatus == 0, "SIGTERM ends the agent cleanly: \(log())")
    }
}
