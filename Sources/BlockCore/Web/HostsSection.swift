/// E1 at scale: the managed section kept as a keyed structure, so that a change costs the
/// size of the change, not of every name blocked.
///
/// Each selection's names (its valid domains with their `www.` and `m.` forms, W1) are
/// validated and rendered once, into a chunk of lines of their own, kept while the selection
/// stays blocked with the same domains. `holders` maps each name to the chunks that list it,
/// so a name listed by several selections is known as shared where it is. `render` then
/// concatenates the chunks in the order given: a chunk with no shared name is copied whole,
/// and a shared name goes to the first chunk that lists it. The bytes are exactly
/// `HostsFile.section(for:sink:)` of the names in first-appearance order (HostsSectionTests
/// checks that against random changes).
public struct HostsSection: Sendable {
    public let sink: HostsFile.Sink

    /// One selection's part: its names in order, without repeats, and their lines.
    struct Chunk: Sendable {
        var selection: String
        var domains: [String]  // as given: a selection given again with the same ones reuses the chunk
        var names: [String] = []
        var bytes: [UInt8] = []
        var starts: [Int] = [0]  // name p's lines are bytes[starts[p]..<starts[p + 1]]
        var shared: Set<Int> = []  // positions of names that another chunk lists too
        var failures: [String] = []  // why a domain was left out (E1: only valid names are written)
    }

    struct Holder: Equatable, Sendable {
        var chunk: Int
        var position: Int
        static let none = Holder(chunk: -1, position: -1)
    }

    var chunks: [Int: Chunk] = [:]
    var ids: [String: Int] = [:]  // selection → its chunk
    var order: [Int] = []
    /// Whether `order` is sorted by selection name (as the engine gives selections): then a
    /// change of a few selections is put in place without looking at the others. False until
    /// a whole update, which the changes that follow are relative to.
    var sortedOrder = false
    var failing: Set<Int> = []  // chunks with failures
    var nextID = 0
    /// The last rendering while no name is shared, kept up to date chunk by chunk (a change
    /// moves the bytes after it once instead of copying every chunk again), with the length of
    /// each chunk's lines in `order`'s order. Nil: rendered whole when next asked for.
    var cache: (bytes: [UInt8], lengths: [Int])?
    var holders: [String: Holder] = [:]  // name → a chunk that lists it
    var more: [String: [Holder]] = [:]  // name → the other chunks that list it (shared names only)

    public init(sink: HostsFile.Sink = .unspecified) { self.sink = sink }

    /// What `update` took out: selections no longer given, or given with other domains, each
    /// with the names it listed, in their former order (for the lines a failed write left).
    public struct Dropped: Equatable, Sendable {
        public var selection: String
        public var names: [String]
    }

    /// Makes the structure hold `selections` (machine-wide ones, in the order their lines go
    /// into the file). A name given twice counts once; so does a selection.
    @discardableResult
    public mutating func update(_ selections: [(name: String, domains: [String])]) -> [Dropped] {
        var given: [String: [String]] = [:]
        for s in selections where given[s.name] == nil { given[s.name] = s.domains }
        var dropped: [Dropped] = []
        cache = nil
        for id in order {
            guard let chunk = chunks[id] else { continue }
            if let domains = given[chunk.selection], domains == chunk.domains { continue }
            dropped.append(Dropped(selection: chunk.selection, names: chunk.names))
            remove(id)
            ids[chunk.selection] = nil
        }
        order = []
        var seen: Set<String> = []
        sortedOrder = true
        var last: String?
        for s in selections where seen.insert(s.name).inserted {
            let id = ids[s.name] ?? add(s.name, s.domains)
            ids[s.name] = id
            if let last, last >= s.name { sortedOrder = false }
            last = s.name
            order.append(id)
        }
        return dropped
    }

    /// Whether the section is in the order of the selections' names, as `update(_:changed:)`
    /// keeps it (else it takes every selection, in the order given).
    public var isByName: Bool { sortedOrder }

    /// `update(_:)` when only the selections named in `changed` may differ from the last
    /// update's: the others are not looked at (a change costs the size of the change).
    /// `selections` holds every selection sorted by name, or (when `isByName`) at least the
    /// changed ones; falls back to the whole update when the section's order is not by name.
    @discardableResult
    public mutating func update(_ selections: [(name: String, domains: [String])], changed: Set<String>) -> [Dropped] {
        guard sortedOrder else { return update(selections) }
        var given: [String: [String]] = [:]
        for s in selections where changed.contains(s.name) && given[s.name] == nil { given[s.name] = s.domains }
        var dropped: [Dropped] = []
        for name in changed.sorted() {
            if let id = ids[name], let chunk = chunks[id] {
                if let domains = given[name], domains == chunk.domains { continue }
                dropped.append(Dropped(selection: name, names: chunk.names))
                let at = position(of: name)
                order.remove(at: at)
                if chunk.shared.isEmpty, var kept = cache {
                    cache = nil  // not shared while it moves
                    let start = offset(of: at, in: kept.lengths)
                    kept.bytes.removeSubrange(start..<(start + kept.lengths.remove(at: at)))
                    cache = kept
                } else {
                    cache = nil  // another chunk's lines may change with it
                }
                remove(id)
                ids[name] = nil
            }
            guard let domains = given[name] else { continue }
            let id = add(name, domains)
            ids[name] = id
            let at = position(of: name)
            order.insert(id, at: at)
            if let chunk = chunks[id], chunk.shared.isEmpty, var kept = cache {
                cache = nil
                kept.bytes.insert(contentsOf: chunk.bytes, at: offset(of: at, in: kept.lengths))
                kept.lengths.insert(chunk.bytes.count, at: at)
                cache = kept
            } else {
                cache = nil
            }
        }
        if holders.isEmpty { cache = nil }
        return dropped
    }

    /// Where the lines of the chunk at `position` in `order` start in the cached rendering.
    private func offset(of position: Int, in lengths: [Int]) -> Int {
        HostsFile.beginMarker.count + 1 + lengths[..<position].reduce(0, +)
    }

    /// `render()`, from the rendering kept since the last change when no name is shared
    /// (E1 at scale: a start at 5,000 blocked selections copied all 5,000 chunks again).
    public mutating func rendered() -> [UInt8]? {
        if let cache { return cache.bytes }
        let bytes = render()
        if let bytes, more.isEmpty {
            cache = (bytes, order.map { chunks[$0]?.bytes.count ?? 0 })
        }
        return bytes
    }

    /// Where the chunk of selection `name` is, or goes, in `order` (sorted by name): O(log n).
    private func position(of name: String) -> Int {
        order.sortedPosition(of: name, by: { chunks[$0]?.selection ?? "" })
    }

    /// The section's bytes (nil: no names), as `HostsFile.section(for:sink:)` renders them.
    public func render() -> [UInt8]? {
        guard !holders.isEmpty else { return nil }
        var out = HostsFile.beginMarker + [10]
        out.reserveCapacity(order.reduce(out.count + HostsFile.endMarker.count + 1) { $0 + (chunks[$1]?.bytes.count ?? 0) })
        var emitted: Set<String> = []
        for id in order {
            guard let chunk = chunks[id] else { continue }
            guard !chunk.shared.isEmpty else {
                out += chunk.bytes
                continue
            }
            var cursor = 0
            for p in chunk.shared.sorted() {
                out += chunk.bytes[cursor..<chunk.starts[p]]
                if emitted.insert(chunk.names[p]).inserted { out += chunk.bytes[chunk.starts[p]..<chunk.starts[p + 1]] }
                cursor = chunk.starts[p + 1]
            }
            out += chunk.bytes[cursor...]
        }
        out += HostsFile.endMarker
        out.append(10)
        return out
    }

    /// How many names the section lists.
    public var count: Int { holders.count }

    public func contains(_ name: String) -> Bool { holders[name] != nil }

    /// The selection whose lines list `name`: the first in the order given that names it.
    public func owner(of name: String) -> String? {
        guard let first = holders[name] else { return nil }
        let all = [first] + (more[name] ?? [])
        let rank = { (h: Holder) in order.firstIndex(of: h.chunk) ?? order.count }  // rare: tamper reports, tests
        let id = all.min { rank($0) < rank($1) }?.chunk
        return id.flatMap { chunks[$0]?.selection }
    }

    /// Every name with the selection it belongs to (see `owner(of:)`), for tamper reports.
    public var owners: [String: String] {
        var out: [String: String] = [:]
        out.reserveCapacity(holders.count)
        for id in order.reversed() {
            guard let chunk = chunks[id] else { continue }
            for name in chunk.names { out[name] = chunk.selection }
        }
        return out
    }

    /// Each selection given with its names (for the truth check after a failed write), and
    /// the domains it gave that are not valid, with why.
    public func names(of selection: String) -> [String] { ids[selection].flatMap { chunks[$0]?.names } ?? [] }
    public func failures(of selection: String) -> [String] { ids[selection].flatMap { chunks[$0]?.failures } ?? [] }
    /// The selections given with domains that are not valid (E1), by name.
    public var failingSelections: [String] { failing.compactMap { chunks[$0]?.selection }.sorted() }

    // MARK: Chunks

    mutating func add(_ selection: String, _ domains: [String]) -> Int {
        let id = nextID
        nextID += 1
        var chunk = Chunk(selection: selection, domains: domains)
        chunk.names.reserveCapacity(domains.count * (Site.commonPrefixes.count + 1))
        chunk.starts.reserveCapacity(chunk.names.capacity + 1)
        holders.reserveCapacity(holders.count + chunk.names.capacity)  // not 19 rehashes on the way to 300,000
        let v4 = Array("\(sink.v4) ".utf8), v6 = Array("\(sink.v6) ".utf8)
        for raw in domains {
            let domain: String
            do throws(CoreError) { domain = try Domain.normalize(raw) } catch {
                chunk.failures.append(error.message)
                continue
            }
            for name in Site.hostsNames(domain) where claim(name, Holder(chunk: id, position: chunk.names.count), in: &chunk) {
                chunk.names.append(name)
                chunk.bytes += v4
                chunk.bytes += name.utf8
                chunk.bytes.append(10)
                chunk.bytes += v6
                chunk.bytes += name.utf8
                chunk.bytes.append(10)
                chunk.starts.append(chunk.bytes.count)
            }
        }
        chunks[id] = chunk
        if !chunk.failures.isEmpty { failing.insert(id) }
        return id
    }

    /// Records that `holder` lists `name`; false when its chunk already does.
    mutating func claim(_ name: String, _ holder: Holder, in chunk: inout Chunk) -> Bool {
        var first = Holder.none
        Self.take(&holders[name, default: .none], holder, found: &first)  // one lookup for a new name
        guard first != .none else { return true }
        if first.chunk == holder.chunk || more[name]?.contains(where: { $0.chunk == holder.chunk }) == true { return false }
        if more[name] == nil { chunks[first.chunk]?.shared.insert(first.position) }
        more[name, default: []].append(holder)
        chunk.shared.insert(holder.position)
        return true
    }

    static func take(_ slot: inout Holder, _ holder: Holder, found: inout Holder) {
        if slot == .none { slot = holder } else { found = slot }
    }

    mutating func remove(_ id: Int) {
        guard let chunk = chunks.removeValue(forKey: id) else { return }
        failing.remove(id)
        guard !(chunk.shared.isEmpty && chunk.names.count == holders.count) else {
            // The chunk held every name (the usual lift of one big list): no name by name.
            holders = [:]
            more = [:]
            return
        }
        for (p, name) in chunk.names.enumerated() {
            guard !chunk.shared.isEmpty, chunk.shared.contains(p), let first = holders[name] else {
                holders[name] = nil
                continue
            }
            let rest = ([first] + (more[name] ?? [])).filter { $0.chunk != id }
            holders[name] = rest.first
            more[name] = rest.count > 1 ? Array(rest.dropFirst()) : nil
            if rest.count == 1 { chunks[rest[0].chunk]?.shared.remove(rest[0].position) }
        }
    }
}
