import BlockCore
import Foundation
import Testing
import BlockTestTools
@testable import BlockDaemon

/// T5, E5: blockd's nftables table is changed element by element while its rules' owners and
/// W2's windows stay the same. Checked with the real nft in a network namespace of the test's
/// own (`unshare -n`): after any random change, the table the element changes leave is the one
/// written whole from scratch.
@Suite("T5, E5: the nftables table changed element by element is the table written whole")
struct NftDeltaTests {
    static let tools = ["/usr/bin/unshare", "/usr/sbin/nft", "/bin/sh"]
    static let pool = ["10.0.0.2", "10.0.0.3", "10.0.0.4", "127.0.0.253", "192.0.2.7", "100::1", "2001:db8::2", "2001:db8::3"].map { IPAddress($0)! }
    static let owners: [[UInt32]?] = [nil, [1001], [1001, 1002]]

    static func random(_ rng: inout TortureTests.Generator, like last: [CutPlan.Rule]) -> [CutPlan.Rule] {
        // Mostly the same owners with other addresses (element changes); now and then others.
        let keys = rng.next() % 4 == 0 || last.isEmpty ? owners.filter { _ in rng.next() % 2 == 0 } : last.map(\.users)
        return keys.map { key in CutPlan.Rule(users: key, addresses: pool.filter { _ in rng.next() % 3 == 0 }.sorted()) }
    }

    /// The table as nft lists it in JSON, without handles, each set's elements sorted.
    static func normalized(_ data: Data) throws -> [String] {
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let items = try #require(json["nftables"] as? [[String: Any]])
        return try items.filter { $0["metainfo"] == nil }.map { item in
            var copy = item
            for (kind, value) in item {
                guard var object = value as? [String: Any] else { continue }
                object["handle"] = nil
                if let elements = object["elem"] as? [Any] { object["elem"] = elements.map { "\($0)" }.sorted() }
                copy[kind] = object
            }
            return String(decoding: try JSONSerialization.data(withJSONObject: copy, options: [.sortedKeys]), as: UTF8.self)
        }
    }

    @Test("T5, E5: 120 random changes, each applied element by element where it can, list as the same table written whole",
          .enabled(if: Privileged.can(needs: NftDeltaTests.tools)), Privileged.needsRoot)
    func elementsEqualWhole() throws {
        if Privileged.unavailable(needs: Self.tools) != nil { return }
        let dir = try TempDir(prefix: "bd-nft-")
        var rng = TortureTests.Generator(state: 0xE5)
        let window = AllowOnlyNet.Rule(users: [1001], allowed: [IPAddress("192.0.2.7")!], hosts: 1)
        var states: [(rules: [CutPlan.Rule], windows: [AllowOnlyNet.Rule])] = [([CutPlan.Rule(addresses: [Self.pool[0]])], [])]
        var steps = ""
        var deltas = 0
        for k in 1...120 {
            let windows = rng.next() % 10 == 0 ? (states[k - 1].windows.isEmpty ? [window] : []) : states[k - 1].windows
            states.append((Self.random(&rng, like: states[k - 1].rules), windows))
            try NftScript.script(rules: states[k - 1].rules, windows: states[k - 1].windows).write(toFile: "\(dir.path)/full\(k - 1).nft", atomically: true, encoding: .utf8)
            try NftScript.script(rules: states[k].rules, windows: states[k].windows).write(toFile: "\(dir.path)/full\(k).nft", atomically: true, encoding: .utf8)
            let delta = NftScript.delta(from: states[k - 1], to: states[k])
            if let delta, !delta.isEmpty { deltas += 1 }
            try (delta ?? NftScript.script(rules: states[k].rules, windows: states[k].windows)).write(toFile: "\(dir.path)/step\(k).nft", atomically: true, encoding: .utf8)
            // From the table written whole at k - 1: the step, then the table listed; then
            // written whole at k, and listed again.
            steps += """
                nft -f \(dir.path)/full\(k - 1).nft || echo "full \(k - 1) failed"
                if [ -s \(dir.path)/step\(k).nft ]; then nft -f \(dir.path)/step\(k).nft || echo "step \(k) failed"; fi
                nft -j list table inet blockd > \(dir.path)/a\(k).json 2>/dev/null || echo '{"nftables":[]}' > \(dir.path)/a\(k).json
                nft -f \(dir.path)/full\(k).nft || echo "full \(k) failed"
                nft -j list table inet blockd > \(dir.path)/b\(k).json 2>/dev/null || echo '{"nftables":[]}' > \(dir.path)/b\(k).json

                """
        }
        try steps.write(toFile: "\(dir.path)/run.sh", atomically: true, encoding: .utf8)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        child.arguments = ["-n", "/bin/sh", "\(dir.path)/run.sh"]
        let out = Pipe()
        child.standardOutput = out
        child.standardError = out
        try child.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        #expect(child.terminationStatus == 0 && !text.contains("failed"), "nft said:\n\(text)")
        for k in 1...120 {
            let a = try Self.normalized(try Data(contentsOf: URL(fileURLWithPath: "\(dir.path)/a\(k).json")))
            let b = try Self.normalized(try Data(contentsOf: URL(fileURLWithPath: "\(dir.path)/b\(k).json")))
            #expect(a == b, "step \(k): \(states[k - 1]) → \(states[k])\nelement by element:\n\(a.joined(separator: "\n"))\nwhole:\n\(b.joined(separator: "\n"))")
        }
        #expect(deltas > 40, "most changes must be made element by element: \(deltas)")
    }
}
