import Foundation
import Testing
import BlockTestSupport
import BlockTestTools

/// docs/PROTOCOL.md, "Compliance": the script printed there is run as printed, against a real
/// blockd, so that what an administrator copies works.
@Suite("§6: the documented compliance check")
struct ComplianceTests {
    static let jq = "/usr/bin/jq"

    /// The script between the page's compliance-script markers.
    static func script() throws -> String {
        let page = try String(contentsOfFile: Repo.root + "/docs/PROTOCOL.md", encoding: .utf8)
        let start = try #require(page.range(of: "<!-- compliance-script -->\n```sh\n"))
        let end = try #require(page.range(of: "```\n<!-- /compliance-script -->", range: start.upperBound..<page.endIndex))
        return String(page[start.upperBound..<end.lowerBound])
    }

    static func run(_ s: Sandbox, script: String) throws -> Run.Result {
        let file = s.dir + "/compliance.sh"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        let path = Repo.binDir + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try Run.capture("/bin/sh", [file], environment: ["PATH": path, "BLOCKD_SOCKET": s.socket])
    }

    @Test("§6: the documented compliance script passes with everything enforced and fails, saying why, when a block is not",
          .enabled(if: Privileged.can(tools: [ComplianceTests.jq]), Privileged.needsTools))
    func script() throws {
        if Privileged.unavailable(tools: [Self.jq]) != nil { return }
        let script = try Self.script()

        let down = Sandbox()
        let unreachable = try Self.run(down, script: script)
        #expect(unreachable.status == 1 && unreachable.output.contains("blockd does not answer"), "\(unreachable.output)")

        let good = Sandbox()
        try good.start()
        #expect(try good.request(#"start {"selections":["reddit"],"seconds":600}"#).hasPrefix("OK "))
        let compliant = try Self.run(good, script: script)
        #expect(compliant.status == 0 && compliant.output.trimmingCharacters(in: .whitespacesAndNewlines) == "compliant", "\(compliant.output)")

        // A hosts file in a directory that does not exist: the block is accepted, not enforced.
        let bad = Sandbox()
        try bad.start(extraArgs: ["--hosts-file", bad.dir + "/missing/hosts"])
        _ = try bad.request(#"start {"selections":["reddit"],"seconds":600}"#)
        let broken = try Self.run(bad, script: script)
        #expect(broken.status == 1 && broken.output.contains("not enforced: reddit"), "\(broken.output)")
    }
}
