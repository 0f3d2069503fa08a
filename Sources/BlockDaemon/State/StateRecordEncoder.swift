import BlockCore
import FoundationEssentials

/// Writes state-log records (§7, `StateLog`) byte for byte as `JSONEncoder` does with the log's
/// options (sorted keys, slashes unescaped, dates as seconds since 1970, a double without a
/// trailing `.0`), by hand for what a change usually holds: a block, the targets a selection is
/// enforced with, a day of the usage history, the applied list, the reconcile time. A part a
/// record seldom holds (a schedule, a limit, the failure list, the usage ledger, the last good
/// configuration, more time) goes through `JSONEncoder` and is spliced in: a nested JSON value
/// does not depend on where it sits, so the line is the same either way. The loader still
/// decodes with `JSONDecoder`, so logs written before this encoder load as they did.
struct StateRecordEncoder {
    private var out: [UInt8] = []
    /// The targets last written per selection, with their bytes: a selection blocked again
    /// with the targets it had (a hundred thousand domains) is compared, not encoded again.
    private var targetsWritten: [String: (selection: Selection, bytes: [UInt8])] = [:]
    static let targetsKept = 64

    /// The record's line: the object, then its `"crc"` member, then LF (`StateLog.line`).
    mutating func line(_ record: StateLog.Record) throws -> [UInt8] {
        out.removeAll(keepingCapacity: true)
        try write(record)
        let crc = StateLog.crc32(out)
        out.removeLast()  // the closing brace
        out += Array(",\"crc\":\"".utf8)
        for shift in stride(from: 28, through: 0, by: -4) { out.append(Self.hex[Int((crc >> UInt32(shift)) & 0xF)]) }
        out += [UInt8(ascii: "\""), UInt8(ascii: "}"), 10]
        return out
    }

    private mutating func write(_ r: StateLog.Record) throws {
        var first = true
        open()
        if let a = r.activity { key("activity", &first); try write(a) }
        key("gen", &first); int(r.gen)
        key("kind", &first); string(r.kind.rawValue)
        if let name = r.name { key("name", &first); string(name) }
        key("seq", &first); int(r.seq)
        if let s = r.state { key("state", &first); try write(s) }
        close()
    }

    private mutating func write(_ a: StoredActivity) throws {
        guard case .block(let b) = a else { return try splice(a) }
        out += Array("{\"block\":{\"_0\":".utf8)
        var first = true
        open()
        key("end", &first); try date(b.end)
        key("locked", &first); bool(b.locked)
        if let m = b.moreTime { key("moreTime", &first); try splice(m) }
        key("name", &first); string(b.name)
        key("origin", &first)
        switch b.origin {
        case .client(let uid): out += Array("{\"client\":{\"uid\":".utf8); int(Int(uid)); out += Array("}}".utf8)
        case .config(let file): out += Array("{\"config\":{\"file\":".utf8); string(file); out += Array("}}".utf8)
        }
        key("selections", &first); strings(b.selections)
        key("start", &first); try date(b.start)
        if let u = b.users { key("users", &first); try splice(u) }
        close()
        out += Array("}}".utf8)
    }

    private mutating func write(_ d: StateDelta) throws {
        var first = true
        open()
        if let v = d.appliedAdd { key("appliedAdd", &first); strings(v) }
        if let v = d.appliedRemove { key("appliedRemove", &first); strings(v) }
        if let v = d.failures { key("failures", &first); try splice(v) }
        if let v = d.failuresAdd { key("failuresAdd", &first); try splice(v) }
        if let v = d.historyClosed { key("historyClosed", &first); strings(v) }
        if let v = d.historyDays { key("historyDays", &first); try dictionary(v) { try $0.write($1) } }
        if let v = d.historyDaysRemove { key("historyDaysRemove", &first); strings(v) }
        if let v = d.historyOpen { key("historyOpen", &first); try dictionary(v) { try $0.date($1) } }
        if let v = d.lastGoodConfig { key("lastGoodConfig", &first); try splice(v) }
        if let v = d.lastReconcile { key("lastReconcile", &first); try date(v) }
        if let v = d.moreTime { key("moreTime", &first); try splice(v) }
        if let v = d.shieldHits { key("shieldHits", &first); try dictionary(v) { try $0.dictionary($1) { $0.int($1) } } }
        if let v = d.targets { key("targets", &first); try dictionary(v) { try $0.targets($1) } }
        if let v = d.targetsRemove { key("targetsRemove", &first); strings(v) }
        if let v = d.usage { key("usage", &first); try splice(v) }
        close()
    }

    private mutating func write(_ day: UsageHistory.Day) throws {
        var first = true
        open()
        key("blocked", &first); try seconds(day.blocked)
        key("counts", &first); try dictionary(day.counts) { try $0.dictionary($1) { $0.int($1) } }
        key("foreground", &first); try seconds(day.foreground)
        key("limits", &first); try dictionary(day.limits) { try $0.double($1) }
        key("running", &first); try seconds(day.running)
        key("used", &first); try seconds(day.used)
        if !day.web.isEmpty { key("web", &first); try seconds(day.web) }  // B2: absent from a day without it, as Day encodes
        close()
    }

    private mutating func seconds(_ byUser: [String: [String: Double]]) throws {
        try dictionary(byUser) { try $0.dictionary($1) { try $0.double($1) } }
    }

    /// A selection's targets, from what was written for it last when they are the same.
    private mutating func targets(_ s: Selection) throws {
        if let kept = targetsWritten[s.name], kept.selection == s { return out += kept.bytes }
        let start = out.count
        try write(s)
        if targetsWritten[s.name] == nil && targetsWritten.count >= Self.targetsKept { targetsWritten.removeAll() }
        targetsWritten[s.name] = (s, Array(out[start...]))
    }

    private mutating func write(_ s: Selection) throws {
        var first = true
        open()
        if let v = s.allowed { key("allowed", &first); try array(v) { try $0.write($1) } }
        key("apps", &first); strings(s.apps)
        key("domains", &first); strings(s.domains)
        if let v = s.exceptions { key("exceptions", &first); strings(v) }
        if let v = s.execOnBlock { key("execOnBlock", &first); string(v) }
        if let v = s.execOnUnblock { key("execOnUnblock", &first); string(v) }
        if let v = s.firewall { key("firewall", &first); bool(v) }
        key("name", &first); string(s.name)
        if let v = s.openURL { key("openURL", &first); string(v) }
        key("paths", &first); strings(s.paths)
        key("texts", &first); try dictionary(s.texts) { $0.string($1) }
        if let v = s.users { key("users", &first); try array(v) { $0.int(Int($1)) } }
        close()
    }

    // MARK: Values

    private mutating func open() { out.append(UInt8(ascii: "{")) }
    private mutating func close() { out.append(UInt8(ascii: "}")) }

    /// `"name":`, after a comma unless it is the object's first member (names are plain ASCII).
    private mutating func key(_ name: StaticString, _ first: inout Bool) {
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        out += UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        out += [UInt8(ascii: "\""), UInt8(ascii: ":")]
    }

    /// RFC 8259 §7 escaping as `JSONEncoder` does it (`\b \t \n \f \r`, `\u00xx` for the other
    /// controls, `/` unescaped with `.withoutEscapingSlashes`): the protocol's writer does the same.
    private mutating func string(_ s: String) { JSON.serialize(key: s, into: &out) }
    private mutating func int(_ n: Int) { out += String(n).utf8 }
    private mutating func bool(_ b: Bool) { out += (b ? "true" : "false").utf8 }

    /// `JSONEncoder`'s form of a double: Swift's shortest round-tripping text without a
    /// trailing `.0`; like it, a NaN or an infinity is an error.
    private mutating func double(_ d: Double) throws {
        guard d.isFinite else {
            throw EncodingError.invalidValue(d, EncodingError.Context(codingPath: [], debugDescription: "\(d) is not valid JSON"))
        }
        let text = d.description
        if text.hasSuffix(".0") { out += text.utf8.dropLast(2) } else { out += text.utf8 }
    }

    private mutating func date(_ d: Date) throws { try double(d.timeIntervalSince1970) }

    private mutating func strings(_ list: [String]) {
        out.append(UInt8(ascii: "["))
        for (i, s) in list.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            string(s)
        }
        out.append(UInt8(ascii: "]"))
    }

    private mutating func array<T>(_ list: [T], _ element: (inout Self, T) throws -> Void) throws {
        out.append(UInt8(ascii: "["))
        for (i, v) in list.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            try element(&self, v)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// An object with its keys in `JSONEncoder`'s `.sortedKeys` order: by their UTF-8 bytes,
    /// not Swift's `<` (which puts `e` with a combining acute after `f`, as `é`).
    private mutating func dictionary<T>(_ d: [String: T], _ value: (inout Self, T) throws -> Void) throws {
        out.append(UInt8(ascii: "{"))
        for (i, member) in d.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            string(member.key)
            out.append(UInt8(ascii: ":"))
            try value(&self, member.value)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// A part this encoder does not write by hand, as `JSONEncoder` writes it.
    private mutating func splice<T: Encodable>(_ value: T) throws { out += try StateLog.encoder.encode(value) }

    private static let hex = Array("0123456789abcdef".utf8)
}
