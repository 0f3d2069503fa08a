import Testing
@testable import BlockCore

/// The sorted structures a change updates in place (T5 at scale) against a plain dictionary
/// and a sort from scratch.
@Suite("T5: values kept by name equal a dictionary sorted from scratch")
struct ByNameTests {
    @Test("after any random sequence of sets and removals, names and values are the dictionary's, sorted",
          arguments: [1, 2, 3] as [UInt64])
    func equalsSortedDictionary(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var kept = ByName<Int>()
        var reference: [String: Int] = [:]
        for step in 0..<2000 {
            let name = "n\(Int.random(in: 0..<60, using: &rng))"
            let value: Int? = Int.random(in: 0..<4, using: &rng) == 0 ? nil : step
            kept[name] = value
            reference[name] = value
            #expect(kept[name] == reference[name])
        }
        #expect(kept.names == reference.keys.sorted())
        #expect(kept.values == reference.keys.sorted().map { reference[$0]! })
        #expect(kept.count == reference.count)
    }

    @Test("sortedPosition finds the first place not below the key, and whether the key is there")
    func positions() {
        let list = ["b", "d", "d", "f"]
        let cases: [(String, Int, Bool)] = [("a", 0, false), ("b", 0, true), ("c", 1, false), ("d", 1, true), ("e", 3, false), ("f", 3, true), ("g", 4, false)]
        for (key, index, found) in cases {
            #expect(list.sortedPosition(of: key) == (index, found), "\(key)")
        }
        #expect([String]().sortedPosition(of: "a") == (0, false))
        #expect(list[1...].sortedPosition(of: "e", by: { $0 }) == 3, "a slice keeps its own indices")
    }

    @Test("targets(named:) finds each name's targets in a list in name order as a walk over it does")
    func targetsNamed() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<200 {
            var list: [Selection] = []
            for name in (0..<Int.random(in: 0..<20, using: &rng)).map({ "n\($0 * 3)" }).sorted() {
                for part in 0..<Int.random(in: 1...2, using: &rng) { list.append(Selection(name: name, domains: ["p\(part).example"])) }
            }
            let asked = Set((0..<5).map { _ in "n\(Int.random(in: 0..<60, using: &rng))" })
            var walked: [String: [Selection]] = [:]
            for s in list where asked.contains(s.name) { walked[s.name, default: []].append(s) }
            #expect(list.targets(named: asked) == walked)
        }
    }
}
