import Foundation
import Testing
@testable import BlockCore

/// A block started without `--name` is named after its selections; a long list must still
/// give a valid, stable name, or `blockc start` would refuse a name the user never gave.
@Suite("T10: default block names")
struct DefaultNameTests {
    let now = at("2026-11-29T13:05:00+09:00")
    let member = Peer(uid: 1000, mayModify: true)

    /// Ten long ad-hoc domains: 629 characters when joined.
    static let tenLong = (0..<10).map { "www.\(String(repeating: "x", count: 20))-long-domain-name-number-\($0).example.com" }
    static let sixtyFour = String(repeating: "a", count: 30) + "+" + String(repeating: "b", count: 33)

    @Test("short lists are joined by '+'; long ones keep a prefix and end in '-' and a hash of the whole list",
          arguments: [
              (["instagram"], "instagram"),
              (["instagram", "reddit"], "instagram+reddit"),
              ([sixtyFour], sixtyFour),
              ([sixtyFour + "c"], String(repeating: "a", count: 30) + "+" + String(repeating: "b", count: 24) + "-" + Registry.stableHash(sixtyFour + "c")),
              (tenLong, "www.xxxxxxxxxxxxxxxxxxxx-long-domain-name-number-0.exam-460db1e5"),
              // A cut that ends on a separator drops it rather than leave "…+-hash".
              ([String(repeating: "a", count: 54), String(repeating: "b", count: 20)],
               String(repeating: "a", count: 54) + "-" + Registry.stableHash(String(repeating: "a", count: 54) + "+" + String(repeating: "b", count: 20))),
          ] as [([String], String)])
    func names(selections: [String], expected: String) throws {
        let name = Registry.defaultBlockName(for: selections)
        #expect(name == expected)
        #expect(name.utf8.count <= Registry.defaultNameLimit)
        try Names.validate(name, what: "block name")
    }

    @Test("the hash is FNV-1a, the same on every run and machine (it is persisted)",
          arguments: [("", "4fd0bfc1"), ("a", "296230c0")])
    func stableHash(text: String, expected: String) {
        #expect(Registry.stableHash(text) == expected)
    }

    @Test("lists that share a long prefix get different names")
    func distinct() {
        var other = DefaultNameTests.tenLong
        other[9] = "www.other.example.com"
        #expect(Registry.defaultBlockName(for: other) != Registry.defaultBlockName(for: DefaultNameTests.tenLong))
        #expect(Registry.defaultBlockName(for: other).hasPrefix("www.xxxxxxxxxxxxxxxxxxxx-long-domain-name-number-0.exam-"))
    }

    @Test("T10: ten long domains start a block, and starting them again extends that block")
    func startAndExtend() throws {
        var r = Registry()
        let first = try r.startBlock(name: nil, selections: DefaultNameTests.tenLong, end: now + 600, locked: false, by: member, now: now)
        #expect(first == .created(first.block))
        let again = try r.startBlock(name: nil, selections: DefaultNameTests.tenLong, end: now + 1200, locked: false, by: member, now: now + 1)
        guard case .extended(_, let to) = again else { Issue.record("not extended: \(again)"); return }
        #expect(to.name == first.block.name)
        #expect(to.end == now + 1200)
        #expect(r.activities.count == 1)
    }
}
