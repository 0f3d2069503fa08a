import Foundation
import Testing

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
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/BlockCore").standardized
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
