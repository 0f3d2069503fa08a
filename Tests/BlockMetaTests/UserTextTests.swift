import Foundation
import Testing
import BlockTestTools

/// What a person reads (log lines, journal messages, errors, help) says things in words: rule
/// tags such as "T10" or "S3" belong in comments and test names, never in a string literal.
@Suite("User-visible text has no rule tags")
struct UserTextTests {
    @Test("no string literal in Sources names a rule tag (T1-T10, S1-S7, E1-E8)")
    func noTagsInLiterals() throws {
        let root = Repo.root + "/Sources"
        let files = try FileManager.default.subpathsOfDirectory(atPath: root).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        var found: [String] = []
        for file in files {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                for literal in line.matches(of: /"(?:[^"\\]|\\.)*"/) where literal.0.contains(/\b[TSE][0-9]{1,2}\b/) {
                    found.append("\(file):\(n + 1): \(literal.0)")
                }
            }
        }
        #expect(found.isEmpty, "say it in words:\n\(found.joined(separator: "\n"))")
    }
}
