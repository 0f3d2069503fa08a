import Testing
@testable import BlockCore

/// E1 at scale: the keyed section (HostsSection) against a rendering from scratch, and the
/// region-wise scans of the hosts file against the line-by-line ones they replaced.
@Suite("E1: the hosts section as a keyed structure")
struct HostsSectionTests {
    /// Names that overlap on purpose: a domain and its www. and m. forms, a name given in
    /// upper case, invalid ones, so that selections share names and drop some.
    static let pool = ["a.example", "www.a.example", "m.a.example", "b.example", "B.Example", "c.example", "www.c.example",
                       "d.test", "e.test", "m.e.test", "f.test", "not a domain", "localhost", "g.example.org", "www.g.example.org",
                       "h.example", "i.example", "j.example", "x-.example", "k.example"]

    /// The section as the hosts enforcer built it before the keyed structure: every valid
    /// name with its common prefixes, first appearance wins, in the order given.
    static func fromScratch(_ selections: [(name: String, domains: [String])], sink: HostsFile.Sink)
        -> (section: [UInt8]?, owners: [String: String], failures: [String: [String]]) {
        var domains: [String] = [], owners: [String: String] = [:], failures: [String: [String]] = [:], seen: Set<String> = []
        for s in selections where seen.insert(s.name).inserted {
            for raw in s.domains {
                do throws(CoreError) {
                    for d in Site.hostsNames(try Domain.normalize(raw)) where owners[d] == nil {
                        owners[d] = s.name
                        domains.append(d)
                    }
                } catch {
                    failures[s.name, default: []].append(error.message)
                }
            }
        }
        return (HostsFile.section(for: domains, sink: sink), owners, failures)
    }

    @Test("E1: after any random sequence of changes the keyed section equals one rendered from scratch",
          arguments: [UInt64(0xE1), 0xE1_0002, 0xE1_0003, 0xE1_0004])
    func incrementalEqualsFromScratch(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let sink = seed % 2 == 0 ? HostsFile.Sink.reject : .unspecified
        var section = HostsSection(sink: sink)
        var given: [(name: String, domains: [String])] = []
        let random = { (rng: inout SplitMix64) in
            (0..<Int(rng.next() % 7)).map { _ in HostsSectionTests.pool[Int(rng.next() % UInt64(HostsSectionTests.pool.count))] }
        }
        for step in 0..<400 {
            switch rng.next() % 5 {
            case 0, 1: given.append(("s\(rng.next() % 8)", random(&rng)))  // a name given twice counts once
            case 2: if !given.isEmpty { given.remove(at: Int(rng.next() % UInt64(given.count))) }
            case 3: if !given.isEmpty { given[Int(rng.next() % UInt64(given.count))].domains = random(&rng) }
            default: given.shuffle(using: &rng)
            }
            section.update(given)
            let reference = Self.fromScratch(given, sink: sink)
            let same = section.render() == reference.section && section.owners == reference.owners && section.count == reference.owners.count
                && Set(given.map(\.name)).allSatisfy { section.failures(of: $0) == reference.failures[$0] ?? [] }
                && reference.owners.keys.allSatisfy { section.owner(of: $0) == reference.owners[$0] && section.contains($0) }
                && Self.sharedMarksExact(section)
            #expect(same, "seed \(seed), step \(step): the keyed section differs from one rendered from scratch for \(given)")
            if !same { return }
        }
    }

    @Test("E1 at scale: the rendering kept from one change to the next is byte for byte the one made whole, shared names or not",
          arguments: [UInt64(0xE1_0021), 0xE1_0022, 0xE1_0023])
    func keptRenderingEqualsWhole(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var section = HostsSection(sink: .reject)
        var given: [String: [String]] = [:]
        var kept = 0
        for step in 0..<600 {
            var changed: Set<String> = []
            for _ in 0..<(1 + rng.next() % 2) {
                let n = rng.next() % 40
                changed.insert("s\(n)")
                // Mostly names of its own; now and then one another selection lists too.
                given["s\(n)"] = rng.next() % 3 == 0 ? nil
                    : [rng.next() % 16 == 0 ? "shared\(rng.next() % 3).example" : "s\(n)-\(rng.next() % 4).example", "s\(n).example"]
            }
            let sorted = given.keys.sorted().map { (name: $0, domains: given[$0]!) }
            let wasKept = section.cache != nil
            section.update(sorted, changed: changed)
            if wasKept && section.cache != nil { kept += 1 }
            let whole = section.render()
            #expect(section.rendered() == whole, "seed \(seed), step \(step)")
            #expect(whole == Self.fromScratch(sorted, sink: .reject).section, "seed \(seed), step \(step)")
        }
        #expect(kept > 100, "changes must often be made in the kept rendering: \(kept)")
    }

    @Test("E1: told which selections changed, the section updates those alone and still equals one rendered from scratch",
          arguments: [UInt64(0xE1_0011), 0xE1_0012, 0xE1_0013])
    func changesOnlyEqualFromScratch(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var section = HostsSection(sink: .reject)
        var given: [String: [String]] = [:]
        let random = { (rng: inout SplitMix64) in
            (0..<Int(rng.next() % 7)).map { _ in HostsSectionTests.pool[Int(rng.next() % UInt64(HostsSectionTests.pool.count))] }
        }
        var lastDropped: [HostsSection.Dropped] = []
        for step in 0..<400 {
            var changed: Set<String> = []
            for _ in 0..<(1 + rng.next() % 3) {
                let name = "s\(rng.next() % 12)"
                changed.insert(name)
                given[name] = rng.next() % 3 == 0 ? nil : random(&rng)
            }
            if rng.next() % 4 == 0 { changed.insert("s\(rng.next() % 12)") }  // said changed, the same: nothing to do
            let sorted = given.keys.sorted().map { (name: $0, domains: given[$0]!) }
            let before = section.chunks
            lastDropped = section.update(sorted, changed: changed)
            let reference = Self.fromScratch(sorted, sink: .reject)
            let same = section.render() == reference.section && section.owners == reference.owners && section.count == reference.owners.count
                && given.keys.allSatisfy { section.failures(of: $0) == reference.failures[$0] ?? [] }
                && section.failingSelections == reference.failures.keys.sorted()
                && reference.owners.keys.allSatisfy { section.owner(of: $0) == reference.owners[$0] }
                && Self.sharedMarksExact(section)
            #expect(same, "seed \(seed), step \(step): the keyed section differs from one rendered from scratch for \(sorted), changed \(changed)")
            // What it dropped is what it had for the selections that changed, not the others.
            let expected = before.values.filter { chunk in changed.contains(chunk.selection) && given[chunk.selection] != chunk.domains }
            #expect(Set(lastDropped.map(\.selection)) == Set(expected.map(\.selection)), "seed \(seed), step \(step)")
            if !same { return }
        }
    }

    @Test("E1: a section whose selections were not given by name takes the whole update when told what changed")
    func changesOnlyFallsBack() {
        var section = HostsSection()
        section.update([("b", ["b.example"]), ("a", ["a.example"])])
        section.update([("b", ["b.example"]), ("a", ["a.example"]), ("c", ["c.example"])], changed: ["c"])
        #expect(section.render() == HostsFile.section(for: ["b.example", "www.b.example", "m.b.example", "a.example", "www.a.example",
                                                             "m.a.example", "c.example", "www.c.example", "m.c.example"]))
    }

    /// The marks that let `render` copy a chunk whole: a position is marked shared exactly
    /// when another chunk lists its name too (a stale mark costs time, a missing one a repeat).
    static func sharedMarksExact(_ section: HostsSection) -> Bool {
        var listedBy: [String: Int] = [:]
        for chunk in section.chunks.values { for name in chunk.names { listedBy[name, default: 0] += 1 } }
        return section.chunks.values.allSatisfy { chunk in
            chunk.shared == Set(chunk.names.indices.filter { listedBy[chunk.names[$0]]! > 1 })
        }
    }

    @Test("E1: update reports the selections it dropped with their names, in their former order")
    func dropped() {
        var section = HostsSection()
        section.update([("one", ["a.example"]), ("two", ["b.example", "a.example"])])
        let dropped = section.update([("two", ["b.example"])])
        #expect(dropped == [.init(selection: "one", names: ["a.example", "www.a.example", "m.a.example"]),
                            .init(selection: "two", names: ["b.example", "www.b.example", "m.b.example", "a.example", "www.a.example", "m.a.example"])])
        #expect(section.render() == HostsFile.section(for: ["b.example", "www.b.example", "m.b.example"]))
        #expect(section.update([]).map(\.selection) == ["two"] && section.render() == nil && section.count == 0)
    }

    // MARK: The scans, against the line-by-line ones they replaced

    /// The section ranges as found before, from an array of every line.
    static func rangesByLines(_ file: [UInt8]) -> [Range<Int>] {
        var all: [(start: Int, end: Int, content: ArraySlice<UInt8>)] = []
        var start = 0
        while start < file.count {
            var end = start
            while end < file.count && file[end] != 10 { end += 1 }
            var content = file[start..<end]
            if content.last == 13 { content = content.dropLast() }
            let lineEnd = end < file.count ? end + 1 : end
            all.append((start, lineEnd, content))
            start = lineEnd
        }
        var ranges: [Range<Int>] = []
        var i = 0
        while i < all.count {
            guard all[i].content.elementsEqual(HostsFile.beginMarker) else { i += 1; continue }
            var j = i + 1
            while j < all.count && !all[j].content.elementsEqual(HostsFile.endMarker) && !all[j].content.elementsEqual(HostsFile.beginMarker) { j += 1 }
            if j < all.count && all[j].content.elementsEqual(HostsFile.endMarker) {
                ranges.append(all[i].start..<all[j].end)
                i = j + 1
            } else {
                var k = i + 1
                while k < all.count && HostsFile.entryDomain(all[k].content) != nil { k += 1 }
                ranges.append(all[i].start..<all[k - 1].end)
                i = k
            }
        }
        return ranges
    }

    /// `restore` as it was: every line of the file in turn, sections' lines copied one by one.
    static func restoreByLines(_ file: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        let lines = HostsOverrides.split(file), sections = rangesByLines(file)
        var i = 0
        while i < lines.count {
            let line = lines[i]
            guard !sections.contains(where: { $0.contains(line.start) }), line.content.starts(with: HostsOverrides.heldPrefix) else {
                out += file[line.start..<line.end]
                i += 1
                continue
            }
            out += line.content.dropFirst(HostsOverrides.heldPrefix.count)
            if i + 1 < lines.count, lines[i + 1].content.reversed().starts(with: HostsOverrides.keptSuffix.reversed()) {
                out += lines[i + 1].ending(in: file)
                i += 2
            } else {
                out += line.ending(in: file)
                i += 1
            }
        }
        return out
    }

    /// `hold` as it was: the restored file's lines in turn, those in a section copied.
    static func holdByLines(_ file: [UInt8], blocked: Set<String>) -> [UInt8] {
        let plain = restoreByLines(file), sections = rangesByLines(plain)
        var out: [UInt8] = []
        for line in HostsOverrides.split(plain) {
            let whole = plain[line.start..<line.end]
            guard !sections.contains(where: { $0.contains(line.start) }), let entry = HostsOverrides.parse(line.content) else {
                out += whole
                continue
            }
            let isBlocked = { (name: ArraySlice<UInt8>) in Site.cover(of: HostsOverrides.normalised(name), in: blocked) != nil }
            guard entry.names.contains(where: isBlocked) else {
                out += whole
                continue
            }
            let ending = line.ending(in: plain), kept = entry.names.filter { !isBlocked($0) }
            out += HostsOverrides.heldPrefix + line.content
            if kept.isEmpty {
                out += ending
            } else {
                out += ending.isEmpty ? [10] : ending
                out += entry.address
                for name in kept { out += [32] + name }
                out += HostsOverrides.keptSuffix + ending
            }
        }
        return out
    }

    /// Random files of user lines, held and kept lines, whole and broken sections, CRLF.
    static func randomFile(_ rng: inout SplitMix64) -> [UInt8] {
        let parts = ["10.0.0.7 nas a.example # mine", "# blockd-held: 10.0.0.7 nas a.example", "10.0.0.7 nas # blockd-kept",
                     "# blockd-held: 1.2.3.4 b.example", String(decoding: HostsFile.beginMarker, as: UTF8.self),
                     String(decoding: HostsFile.endMarker, as: UTF8.self), "0.0.0.0 a.example", ":: a.example", "127.0.0.253 c.example",
                     "0.0.0.0 ", "127.0.0.1 localhost", "", "# a comment", "1.2.3.4 www.c.example c.example"]
        var out: [UInt8] = []
        for _ in 0..<Int(rng.next() % 14) {
            out += parts[Int(rng.next() % UInt64(parts.count))].utf8
            out += rng.next() % 4 == 0 ? [13, 10] : [10]
        }
        if rng.next() % 3 == 0, !out.isEmpty { out.removeLast() }
        return out
    }

    @Test("E1, E6: section ranges, restore and hold are byte for byte the line-by-line ones on 3,000 random files")
    func scansEqualLineByLine() {
        let seed: UInt64 = 0xE1_E6
        var rng = SplitMix64(seed: seed)
        for round in 0..<3000 {
            let file = Self.randomFile(&rng)
            let blocked: Set<String> = rng.next() % 4 == 0 ? [] : ["a.example", "c.example"]
            let same = HostsFile.sectionRanges(in: file) == Self.rangesByLines(file) && HostsOverrides.restore(file) == Self.restoreByLines(file)
                && HostsOverrides.hold(file, blocked: blocked).bytes == (blocked.isEmpty ? Self.restoreByLines(file) : Self.holdByLines(file, blocked: blocked))
            #expect(same, "seed \(seed), round \(round): \(String(decoding: file, as: UTF8.self).debugDescription)")
            if !same { return }
        }
    }

    @Test("E1, E6: the section spliced in with the rest held in one scan is byte for byte hold after splice, on 3,000 random files")
    func spliceAndHoldEqualsSteps() {
        let seed: UInt64 = 0xE1_E7
        var rng = SplitMix64(seed: seed)
        let sections: [[UInt8]?] = [nil, HostsFile.beginMarker + Array("\n0.0.0.0 a.example\n".utf8) + HostsFile.endMarker + [10]]
        for round in 0..<3000 {
            let file = Self.randomFile(&rng)
            let blocked: Set<String> = rng.next() % 4 == 0 ? [] : ["a.example", "c.example"]
            let section = sections[Int(rng.next() % 2)]
            let isBlocked: ((String) -> Bool)? = blocked.isEmpty ? nil : { Site.cover(of: $0, in: blocked) != nil }
            let same = HostsOverrides.splice(file, section: section, blocking: isBlocked)
                == HostsOverrides.hold(HostsFile.splice(file, section: section), blocking: isBlocked).bytes
            #expect(same, "seed \(seed), round \(round): \(String(decoding: file, as: UTF8.self).debugDescription)")
            if !same { return }
        }
    }
}
