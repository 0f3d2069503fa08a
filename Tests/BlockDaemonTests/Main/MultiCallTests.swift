import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// P1: blockd, blockc and blockc-agent are one executable. The built `blockd` is run here as it
/// is installed, through symbolic links named as scripts/install names them, and must behave
/// under each name exactly as the program of that name: the same output and exit status as the
/// build tree's file of that name (SwiftPM links the one target under each name).
@Suite("P1: one executable, four names")
struct MultiCallTests {
    /// (name, arguments, exit status, what the output starts with). None needs a daemon: the
    /// socket named does not exist.
    static let cases: [(String, [String], Int32, String)] = [
        ("blockd", ["--version"], 0, "blockd \(BlockdVersion.version) (protocol \(BlockdVersion.protocolVersion))\n"),
        ("blockd", ["--help"], 0, "Usage: blockd [OPTIONS]\n"),
        ("blockd", ["--no-such-flag"], 2, "blockd: "),
        ("blockc", ["--version"], 0, "blockc \(BlockdVersion.version)\n"),
        ("blockc", ["--help"], 0, "Usage: blockc [--socket PATH] COMMAND [ARGS...]\n"),
        ("blockc", ["frobnicate"], 2, "blockc: "),
        ("blockc", ["status"], 3, "blockc: "),
        ("blockc-agent", ["--version"], 0, "blockc-agent \(BlockdVersion.version)\n"),
        ("blockc-agent", ["--help"], 0, "usage: blockc-agent --socket PATH watch --notify\n"),
        ("blockc-agent", ["status"], 2, "blockc: blockc-agent runs only 'watch --notify'"),
        ("blockd-nm-host", ["--version"], 0, "blockc-agent \(BlockdVersion.version)\n"),
        ("blockd-nm-host", ["--help"], 0, "usage: blockc-agent --socket PATH watch --notify\n"),
    ]

    static let environment: [String: String?] = ["BLOCKD_SOCKET": "/nonexistent/blockd.sock", "NO_COLOR": "1", "LANG": nil, "LC_ALL": nil]

    /// A temp dir with `name` as a symbolic link to the built blockd.
    static func link(_ name: String, in dir: TempDir) throws -> String {
        let path = dir.path + "/" + name
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: Repo.binDir + "/blockd")
        return path
    }

    @Test("P1: each name, a symbolic link to blockd, runs as that program: same output and exit status as the program built under that name",
          arguments: MultiCallTests.cases.indices)
    func eachName(index: Int) throws {
        let (name, arguments, status, starts) = MultiCallTests.cases[index]
        let dir = try TempDir(prefix: "bd-mc-")
        let linked = try Run.capture(try MultiCallTests.link(name, in: dir), arguments, environment: MultiCallTests.environment)
        #expect(linked.status == status, "\(name) \(arguments): exit \(linked.status): \(linked.output)")
        #expect(linked.output.hasPrefix(starts), "\(name) \(arguments): \(linked.output.prefix(400))")
        // The build tree has no file named blockd-nm-host; the agent's file is that program.
        let built = Repo.binDir + "/" + (name == "blockd-nm-host" ? "blockc-agent" : name)
        let direct = try Run.capture(built, arguments, environment: MultiCallTests.environment)
        #expect(direct.status == linked.status && direct.output == linked.output,
                "\(built) \(arguments): exit \(direct.status): \(direct.output.prefix(400))")
    }

    @Test("P1: under any other name it runs nothing, says which names it answers to, and exits 2",
          arguments: ["foo", "blockd.old", "blockc2", "Blockc"])
    func otherName(name: String) throws {
        let dir = try TempDir(prefix: "bd-mc-")
        let path = try MultiCallTests.link(name, in: dir)
        for arguments in [[], ["--version"], ["--help"], ["status"]] {
            let r = try Run.capture(path, arguments, environment: MultiCallTests.environment)
            #expect(r.status == 2, "\(name) \(arguments): exit \(r.status)")
            #expect(r.output == Program.unknownName(path), "\(name) \(arguments): \(r.output)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [name], "it wrote nothing")
    }

    @Test("P1: the build tree's blockc and blockc-agent are the very program blockd is, linked under their names")
    func sameProgram() throws {
        let blockd = try #require(FileManager.default.contents(atPath: Repo.binDir + "/blockd"))
        for name in ["blockc", "blockc-agent"] {
            let other = try #require(FileManager.default.contents(atPath: Repo.binDir + "/" + name), "no \(name) built")
            #expect(other == blockd, "\(name) is not byte for byte blockd")
        }
    }

    // MARK: What each name loads

    /// The libraries one run loads, from the dynamic loader's own trace (LD_DEBUG=libs), which
    /// lists what dlopen loads too.
    static func loaded(_ path: String, _ arguments: [String], socket: String = "/nonexistent/blockd.sock") throws -> (result: Run.Result, libraries: [String]) {
        let r = try Run.capture(path, arguments, environment: ["LD_DEBUG": "libs", "BLOCKD_SOCKET": socket, "NO_COLOR": "1"])
        let libraries = r.output.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "find library=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " })
        }
        return (r, libraries)
    }

    static let late = ["libsystemd", "libnftables"]

    @Test("P1: blockc's commands, and each name's --help and --version, load neither libsystemd nor libnftables: they are loaded when first called", arguments: [
        ("blockc", ["status"]), ("blockc", ["watch"]), ("blockc", ["--help"]), ("blockc", ["--version"]),
        ("blockc", ["start", "--minutes", "5", "instagram"]), ("blockc-agent", ["--help"]), ("blockc-agent", ["--version"]),
        ("blockc-agent", ["status"]), ("blockd", ["--help"]), ("blockd", ["--version"]),
    ])
    func loadsLate(name: String, arguments: [String]) throws {
        let (result, libraries) = try MultiCallTests.loaded(Repo.binDir + "/" + name, arguments)
        #expect(libraries.contains("libc.so.6"), "no loader trace:\n\(result.output.suffix(500))")
        #expect(!libraries.contains { lib in MultiCallTests.late.contains { lib.hasPrefix($0) } }, "\(name) \(arguments) loaded \(libraries)")
    }

    @Test("P1: a running blockd has loaded libsystemd (socket activation, sd_notify, the journal) and not libnftables (its firewall is off); blockc talking to it loads neither")
    func daemonLoadsSystemd() throws {
        let sandbox = Sandbox()
        let daemon = try sandbox.start()
        // Read by cat: Foundation reads a /proc file, whose size is 0, only in part.
        let maps = try Run.capture("/bin/cat", ["/proc/\(daemon.processIdentifier)/maps"]).output
        #expect(maps.contains("/libsystemd.so.0"), "blockd has not loaded libsystemd")
        #expect(!maps.contains("/libnftables.so"), "blockd --firewall no loaded libnftables")
        let (result, libraries) = try MultiCallTests.loaded(Repo.binDir + "/blockc", ["status"], socket: sandbox.socket)
        #expect(result.status == 0 && result.output.contains("Nothing is blocked"), "\(result.output.suffix(500))")
        #expect(!libraries.contains { lib in MultiCallTests.late.contains { lib.hasPrefix($0) } }, "blockc status loaded \(libraries)")
    }
}
