import Foundation
import Testing
import BlockTestTools

/// BlockCore is pure (§11; time is a parameter): no clock reads, no I/O, no system
/// modules. This test reads the sources and fails on anything that would break that.
@Suite("BlockCore stays pure")
struct PurityTests {
    static let forbidden: [(pattern: String, why: String)] = [
        (#"^\s*(@_exported\s+)?import\s+(Glibc|Dispatch|CSystemd|CLinux|Musl|FoundationNetworking)\b"#, "imports a system module"),
        (#"\bDate\(\)"#, "reads the clock"),
        (#"\bDate\.now\b"#, "reads the clock"),
        (#"\.timeIntervalSinceNow\b"#, "reads the clock"),
        (#"\bTimeZone\.(current|autoupdatingCurrent)\b"#, "reads the system time zone"),
        (#"\bCalendar\.(current|autoupdatingCurrent)\b"#, "reads the system calendar"),
        (#"\bLocale\.(current|autoupdatingCurrent)\b"#, "reads the system locale"),
        (#"\b(ProcessInfo|FileManager|FileHandle|Process|Thread|DispatchQueue|URLSession)\b"#, "does I/O or concurrency"),
        (#"\b(String|Data)\(contentsOf|\bcontentsOfFile:|\batomically:"#, "does file I/O"),
        (#"(?<![.\w])(?<!func )(getenv|fopen|open|read|write|stat|unlink|rename|clock_gettime|gettimeofday|time)\("#, "calls the C library"),
    ]

    @Test("no clock reads, no I/O, no system modules in Sources/BlockCore")
    func pure() throws {
        let dir = URL(fileURLWithPath: Repo.root + "/Sources/BlockCore").standardized
        // Every folder down (Time/, Wire/, ...): a file moved into a new one is still checked.
        let files = try FileManager.default.subpathsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count > 80, "found the BlockCore sources in every folder: \(files.count)")
        #expect(files.contains("Time/Civil.swift") && files.contains("Version.swift"), "nested and top-level files alike")
        for file in files {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
                for rule in PurityTests.forbidden where code.range(of: rule.pattern, options: .regularExpression) != nil {
                    Issue.record("\(file):\(number + 1) \(rule.why): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
    }

    /// What BlockCore's compiled code may call in the C library: memory and rounding. A user
    /// database lookup (getpwnam, getgrent...), a file, a socket or a clock read is none of
    /// these, so it cannot be reached from the core however it is spelled in the source.
    static let allowedC: Set<String> = ["ceil", "floor", "free", "malloc", "malloc_usable_size", "memcmp", "memcpy", "memmove",
                                        "memset", "rint", "round", "trunc", "strlen", "__stack_chk_fail"]

    /// The directory of BlockCore's object files, beside this test bundle's.
    static var objectDirectory: String? {
        guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("BlockCore.build").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    @Test("U1, A1 by the linker: BlockCore's object files call nothing in the C library but memory and rounding (no getpw*, getgr*, file, socket or clock)",
          .enabled(if: PurityTests.objectDirectory != nil && FileManager.default.isExecutableFile(atPath: "/usr/bin/nm"),
                   "needs the build's BlockCore.build directory beside the test bundle and /usr/bin/nm (binutils)"))
    func linked() throws {
        let dir = try #require(PurityTests.objectDirectory)
        let objects = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".o") }.map { dir + "/" + $0 }
        #expect(objects.count > 80, "found BlockCore's objects: \(objects.count)")
        let nm = Process()
        nm.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
        nm.arguments = ["-u"] + objects
        let pipe = Pipe()
        nm.standardOutput = pipe
        try nm.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        nm.waitUntilExit()
        #expect(nm.terminationStatus == 0)
        let symbols = Set(output.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count == 2, fields[0] == "U" else { return nil }
            return String(fields[1])
        })
        #expect(symbols.contains("memcpy"), "nm read the undefined symbols: \(symbols.count)")
        let c = symbols.filter { !$0.hasPrefix("$s") && !$0.hasPrefix("_$s") && !$0.contains("swift") && !$0.hasPrefix("_T") }
        let outside = c.subtracting(PurityTests.allowedC).sorted()
        #expect(outside.isEmpty, "BlockCore calls into the C library beyond memory and rounding: \(outside)")
    }

    @Test("the purity check itself catches a clock read")
    func catches() {
        func flagged(_ line: String) -> Bool {
            PurityTests.forbidden.contains { line.range(of: $0.pattern, options: .regularExpression) != nil }
        }
        #expect(flagged("let now = Date()"))
        #expect(flagged("let fd = open(path, O_RDONLY)"))
        #expect(flagged("let text = try String(contentsOf: url)"))
        #expect(flagged("import Glibc"))
        #expect(!flagged("utf8.append(contentsOf: bytes)"))
        #expect(!flagged("writer.write(value, level: 0)"))
        #expect(!flagged("mutating func write(_ value: JSON) {"))
    }
}
