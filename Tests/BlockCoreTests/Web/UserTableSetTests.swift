import Testing
@testable import BlockCore

/// U3 and W1 at scale: the per-user tables kept per selection, told what changed, equal the
/// tables worked out from scratch after any random sequence of changes.
@Suite("U3, W1, W2: the tables kept per selection equal tables worked out from scratch")
struct UserTableSetTests {
    /// One selection's targets in one of its forms: machine-wide, per user (split in two with
    /// their own exceptions, W2), allow-only, with a long list, or with no valid name.
    static func targets(of name: String, _ rng: inout SplitMix64) -> [Selection] {
        var s = Selection(name: name, domains: ["\(name).example", "shared.example"])
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: break
        case 1: s.users = [1000]
        case 2:
            var other = s
            (s.users, other.users, other.exceptions) = ([1000], [1001], ["ok.\(name).example"])
            return [s, other]
        case 3: s.allowed = [Selection(name: "school", domains: ["school.example", "\(name)-ok.example"])]
        case 4:
            s.allowed = [Selection(name: "school", domains: ["school.example"])]
            s.users = [1001]
        case 5: s.domains = (0..<40).map { "d\($0 % (25 + name.count)).long.example" } + ["\(name).example"]
        case 6: s.domains = ["not a domain"]
        default: s.exceptions = ["www.shared.example"]
        }
        return [s]
    }

    /// §7 "Truth": which selections rest on which table alone, from scratch.
    static func dependents(_ blocked: [Selection]) -> [UInt32: [String]] {
        var out: [UInt32: Set<String>] = [:]
        for s in blocked where s.isAllowOnly || (s.users != nil && !s.domains.isEmpty) {
            for key in s.users ?? [UserTable.everyone] { out[key, default: []].insert(s.name) }
        }
        return out.mapValues { $0.sorted() }
    }

    @Test("after any random sequence of changes, what each table must say equals it worked out from scratch",
          arguments: [1, 2, 3, 4] as [UInt64])
    func keptEqualsFromScratch(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let names = (0..<10).map { "s\($0)" }
        var kept = UserTableSet()
        var current: [String: [Selection]] = [:]
        var machineWide = true
        kept.update(blocked: [], changed: nil, machineWide: machineWide)
        for step in 0..<300 {
            var next = current
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let name = names.randomElement(using: &rng)!
                next[name] = Bool.random(using: &rng) ? nil : UserTableSetTests.targets(of: name, &rng)
            }
            var changed: Set<String>? = Set(names.filter { current[$0] != next[$0] })
            if Int.random(in: 0..<4, using: &rng) == 0 { changed?.insert(names.randomElement(using: &rng)!) }
            if Int.random(in: 0..<20, using: &rng) == 0 { changed = nil }
            if Int.random(in: 0..<25, using: &rng) == 0 { machineWide.toggle() }
            let before = kept.wanted
            current = next
            let blocked = current.keys.sorted().flatMap { current[$0]! }
            let touched = kept.update(blocked: blocked, changed: changed, machineWide: machineWide)
            let scratch = UserTableSet.wanted(from: blocked, machineWide: machineWide)
            #expect(kept.wanted == scratch, "seed \(seed), step \(step)")
            #expect(kept.dependents == UserTableSetTests.dependents(blocked), "seed \(seed), step \(step): dependents")
            if let touched {
                let differ = Set(before.keys).union(scratch.keys).filter { before[$0] != scratch[$0] }
                #expect(differ.isSubset(of: touched), "seed \(seed), step \(step): a table that changed was not said to")
            }
        }
    }

    @Test("a table's owners are the selections that put lines in it")
    func owners() {
        var kept = UserTableSet()
        var kid = Selection(name: "kid", domains: ["games.example"])
        kid.users = [1000]
        let all = Selection(name: "news", domains: ["news.example"])
        let empty = Selection(name: "bad", domains: ["not a domain"])
        kept.update(blocked: [all, empty, kid], changed: nil, machineWide: true)
        #expect(kept.owners(of: UserTable.everyone) == ["news"])
        #expect(kept.owners(of: 1000) == ["kid"])
        #expect(kept.uids == [UserTable.everyone, 1000])
    }
}
