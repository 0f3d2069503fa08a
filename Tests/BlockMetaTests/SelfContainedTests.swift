import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestTools

/// The built executables load nothing from the Swift toolchain (Package.swift links the
/// runtime, Dispatch and FoundationEssentials statically): each runs in a private mount namespace
/// (`unshare -m`) where a tmpfs hides the toolchain, as on a machine that has only the
/// package. A binary that still needed libswiftCore.so there would not start at all (exit 127,
/// "cannot open shared object file"), as blockd and blockc-agent did before.
@Suite("Self-contained binaries: nothing loaded from the Swift toolchain")
struct SelfContainedTests {
    static let unshare = "/usr/bin/unshare"
    static let mount = "/bin/mount"

    /// The Swift runtime this test process runs on (it is linked against the toolchain's
    /// shared libraries), from its own mappings: /opt/swift/usr/lib/swift/linux/libswiftCore.so.
    static let runtime: String? = {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return nil }
        return maps.split(separator: "\n").lazy.compactMap { $0.split(separator: " ").last.map(String.init) }
            .first { $0.hasSuffix("/libswiftCore.so") }
    }()

    /// What is hidden: the toolchain that runtime belongs to (the directory above usr/lib/swift),
    /// and /opt/swift, where the toolchain's RUNPATH pointed.
    static var hidden: [String] {
        var dirs: [String] = []
        if let runtime, let range = runtime.range(of: "/usr/lib/swift/") { dirs.append(String(runtime[..<range.lowerBound])) }
        if FileManager.default.fileExists(atPath: "/opt/swift") && !dirs.contains("/opt/swift") { dirs.append("/opt/swift") }
        return dirs.filter { !$0.isEmpty && $0 != "/" }
    }

    /// Runs `argv` with `environment` in a new mount namespace where every hidden directory is
    /// an empty tmpfs; the script first checks that the runtime is really gone there.
    static func runHidden(_ argv: [String], environment: [String: String?] = [:]) throws -> Run.Result {
        let mounts = hidden.map { "mount -t tmpfs -o size=64k,mode=0755 blockd-no-toolchain '\($0)'" }
        let script = (["set -e"] + mounts + [
            "if [ -e '\(runtime ?? "/opt/swift/usr/lib/swift/linux/libswiftCore.so")' ]; then echo 'the toolchain is still visible'; exit 99; fi",
            "exec \"$@\"",
        ]).joined(separator: "\n")
        return try Run.capture(unshare, ["--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh"] + argv,
                               environment: environment)
    }

    /// (binary, arguments, what its output must contain): each needs no daemon.
    static let cases: [(String, [String], String)] = [
        ("blockd", ["--version"], "blockd \(BlockdVersion.version)"),
        ("blockc", ["--help"], "blockc"),
        // The agent's help, after Foundation is up.
        ("blockc-agent", ["--help"], "usage: blockc-agent"),
    ]

    @Test("blockd, blockc and blockc-agent run with the Swift toolchain hidden (unshare -m, a tmpfs over it)",
          .enabled(if: Privileged.can(needs: [SelfContainedTests.unshare, SelfContainedTests.mount]), Privileged.needsRoot),
          arguments: SelfContainedTests.cases.indices)
    func runsWithoutToolchain(index: Int) throws {
        if Privileged.unavailable(needs: [SelfContainedTests.unshare, SelfContainedTests.mount]) != nil { return }
        let (name, arguments, expected) = SelfContainedTests.cases[index]
        try #require(!SelfContainedTests.hidden.isEmpty, "found no toolchain to hide (runtime: \(SelfContainedTests.runtime ?? "none"))")
        let result = try SelfContainedTests.runHidden([Repo.binDir + "/" + name] + arguments)
        #expect(result.status != 127 && !result.output.contains("cannot open shared object file"),
                "\(name) does not start without \(SelfContainedTests.hidden): \(result.output)")
        #expect(result.status != 99, "\(result.output)")
        #expect(result.output.contains(expected), "\(name) \(arguments.joined(separator: " ")) (exit \(result.status)): \(result.output)")
        #expect(result.status == 0, "\(name) exited \(result.status): \(result.output)")
    }

    /// Foundation's ICU half (34 MB of data in each binary) stays out: no source imports
    /// Foundation or FoundationInternationalization, and no binary carries ICU's data (its
    /// entry names start with "icudt").
    @Test("no source imports Foundation's ICU half, and no binary carries ICU data")
    func noICU() throws {
        let sources = Repo.root + "/Sources"
        let files = try #require(FileManager.default.enumerator(atPath: sources)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count > 100)
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.firstMatch(of: /^\s*(@\w+\s+)*import\s+(Foundation|FoundationInternationalization|FoundationNetworking|FoundationXML)\s*$/) != nil }
            #expect(imports.isEmpty, "Sources/\(file): \(imports.joined(separator: "; ")) (use FoundationEssentials)")
        }
        for name in ["blockd", "blockc", "blockc-agent"] {
            let data = try #require(FileManager.default.contents(atPath: Repo.binDir + "/" + name), "no \(name) built")
            #expect(data.range(of: Data("icudt".utf8)) == nil, "\(name) carries ICU data")
        }
    }

    /// T7 without the toolchain: zone rules come from the system's tzdata files, which the
    /// toolchain does not hide. `blockd -n` prints a schedule's next window in local time with the zone of TZ and its UTC
    /// offset; the offset must be one Foundation (ICU, in this test process) gives for that zone in the next days (a zone
    /// blockd could not find would fall back to UTC, +00:00). Lord Howe's DST is 30 minutes.
    @Test("blockd -n shows a schedule's window in TZ's offset with the toolchain hidden",
          .enabled(if: Privileged.can(needs: [SelfContainedTests.unshare, SelfContainedTests.mount]), Privileged.needsRoot),
          arguments: ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"])
    func zonesWithoutToolchain(zone: String) throws {
        if Privileged.unavailable(needs: [SelfContainedTests.unshare, SelfContainedTests.mount]) != nil { return }
        let dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.path + "/schedules.d", withIntermediateDirectories: true)
        try "[Schedule]\nName=bedtime\nWindow=21:30-07:00\nSelections=instagram\n"
            .write(toFile: dir.path + "/schedules.d/bedtime.conf", atomically: true, encoding: .utf8)
        let result = try SelfContainedTests.runHidden([Repo.binDir + "/blockd", "-n", "--config-dir", dir.path],
                                                      environment: ["TZ": zone])
        try #require(result.status == 0, "blockd -n (TZ=\(zone)): \(result.output)")
        let match = try #require(result.output.firstMatch(of: /window (.+) to (.+) \((\S+), UTC([+-])(\d\d):(\d\d)\)/), "no window in: \(result.output)")
        #expect(match.1.hasSuffix("21:30:00") && match.2.hasSuffix("07:00:00"), "TZ=\(zone): the window is local 21:30-07:00: \(match.0)")
        #expect(match.3 == zone[...], "TZ=\(zone): blockd names the zone it found: \(match.0)")
        let seconds = (match.4 == "-" ? -1 : 1) * (Int(match.5)! * 3600 + Int(match.6)! * 60)
        let tz = try #require(TimeZone(identifier: zone))
        let want = Set([0, 86400, 2 * 86400].map { tz.secondsFromGMT(for: Date() + Double($0)) })  // the window starts within two days
        #expect(want.contains(seconds), "TZ=\(zone): offset \(seconds) s, Foundation says \(want) s")
    }
}
