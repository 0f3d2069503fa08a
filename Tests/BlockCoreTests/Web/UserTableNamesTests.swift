import Testing
@testable import BlockCore

/// U3 at scale: a table rendered from each selection's names kept in order and merged is the
/// table rendered from scratch, byte for byte, after any sequence of changes.
@Suite("U3: the per-user tables kept by selection")
struct UserTableNamesTests {
    /// Names that collide across selections, repeat within one, differ only in case or a
    /// trailing dot, nest (a.example under example), and a few that are not names at all.
    static func domain(_ rng: inout SplitMix64) -> String {
        let labels = ["a", "b", "www", "x1", "api", "m"]
        let sites = ["example.com", "example.org", "reddit.com", "b.example", "xn--bcher-kva.example"]
        var name = sites[Int(rng.next() % UInt64(sites.count))]
        if rng.next() % 2 == 0 { name = labels[Int(rng.next() % UInt64(labels.count))] + "." + name }
        switch rng.next() % 12 {
        case 0: return name.uppercased()
        case 1: return name + "."
        case 2: return "not a name"
        default: return name
        }
    }

    @Test("U3, E1: after any random sequence of starts, stops and edits, the merged table equals one rendered from scratch",
          arguments: [1, 2, 3, 4] as [UInt64])
    func incrementalEqualsFromScratch(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var cache = UserTable.NameCache()
        var blocked: [String: Selection] = [:]
        for step in 0..<300 {
            let name = "s\(rng.next() % 40)"
            if blocked[name] != nil && rng.next() % 3 == 0 {
                blocked[name] = nil  // stop
            } else {
                // start, or an edit of the configuration under the same name; now and then a big list
                // (a big list draws from 1,500 more names, so two big lists share some)
                let big = rng.next() % 10 == 0
                let count = big ? 200 + Int(rng.next() % 300) : Int(rng.next() % 4)
                blocked[name] = Selection(name: name, domains: (0..<count).map { _ in
                    big && rng.next() % 4 != 0 ? "h\(rng.next() % 1500).example.net" : Self.domain(&rng)
                })
            }
            let selections = blocked.values.sorted { $0.name < $1.name }
            let lists = selections.map { cache.names(of: $0) }
            cache.keep(Set(blocked.keys))
            let valid = selections.flatMap { $0.domains.compactMap { try? Domain.normalize($0) } }
            let scratch = try UserTable.render(uid: UserTable.everyone, domains: valid)
            let kept = try UserTable.render(uid: UserTable.everyone, sorted: UserTable.merged(lists))
            #expect(kept == scratch, "seed \(seed), step \(step)")
            if kept != scratch { return }
        }
    }

    @Test("merging keeps byte order and drops repeats across and within lists")
    func mergeOrder() {
        #expect(UserTable.merged([["a.example", "c.example"], ["b.example", "c.example"], []]) == ["a.example", "b.example", "c.example"])
        let long = (0..<100).map { "n\(1000 + $0).example" }
        #expect(UserTable.merged([long, ["a.example", "n1050.example"], long]) == ["a.example"] + long)
    }
}
