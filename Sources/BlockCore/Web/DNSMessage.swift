/// E5: the DNS messages blockd needs to learn a blocked domain's current addresses without
/// the hosts file (RFC 1035 §4): one A or AAAA question, and the answer section of the reply,
/// CNAME chains included. Pure bytes in, bytes out; the socket I/O is the daemon's.
public enum DNSMessage {
    public enum RecordType: UInt16, Sendable, CaseIterable {
        case a = 1, cname = 5, aaaa = 28
    }

    /// What a reply says about the question.
    public enum Answer: Equatable, Sendable {
        /// The addresses of the asked type at the end of the CNAME chain (maybe none: NODATA).
        case addresses([IPAddress])
        /// NXDOMAIN: the name does not exist.
        case noSuchName
        /// Not an answer to use: another reply's id, truncated, or a server failure. Ask the
        /// next server.
        case unusable(String)
    }

    /// A standard query with recursion desired for `name` (a normalised domain) and `type`.
    public static func query(id: UInt16, name: String, type: RecordType) -> [UInt8] {
        var out: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xff), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        out += encodeName(name)
        out += [UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xff), 0, 1]
        return out
    }

    static func encodeName(_ name: String) -> [UInt8] {
        var out: [UInt8] = []
        for label in name.split(separator: ".") {
            let bytes = Array(label.utf8.prefix(63))
            out.append(UInt8(bytes.count))
            out += bytes
        }
        return out + [0]
    }

    /// Parses `reply` to the query `id` for `name`/`type`. Throws on a malformed message (a
    /// name pointer loop, a record running past the end), which the caller treats as unusable.
    public static func parse(_ reply: [UInt8], id: UInt16, name: String, type: RecordType) -> Answer {
        do throws(CoreError) {
            return try answer(reply, id: id, name: name, type: type)
        } catch {
            return .unusable(error.message)
        }
    }

    static func answer(_ m: [UInt8], id: UInt16, name: String, type: RecordType) throws(CoreError) -> Answer {
        var r = Reader(bytes: m)
        let gotID = try r.u16()
        let flags = try r.u16()
        guard gotID == id, flags & 0x8000 != 0 else { return .unusable("not a reply to this query") }
        guard flags & 0x0200 == 0 else { return .unusable("the reply was truncated") }
        switch flags & 0x000f {
        case 0: break
        case 3: return .noSuchName
        case let rcode: return .unusable("the server answered with error code \(rcode)")
        }
        let questions = try r.u16(), answers = try r.u16()
        r.offset += 4  // authority and additional counts: not needed
        for _ in 0..<questions {
            _ = try r.name()
            r.offset += 4
        }
        var cnames: [String: String] = [:]
        var found: [(owner: String, address: IPAddress)] = []
        for _ in 0..<answers {
            let owner = try r.name()
            let rrType = try r.u16(), rrClass = try r.u16()
            r.offset += 4  // TTL
            let length = Int(try r.u16())
            let rdata = try r.take(length)
            guard rrClass == 1 else { continue }
            if rrType == RecordType.cname.rawValue {
                var inner = Reader(bytes: m, offset: r.offset - length)
                cnames[owner] = try inner.name()
            } else if rrType == type.rawValue, let address = IPAddress(bytes: rdata),
                      address.isIPv4 == (type == .a) {
                found.append((owner, address))
            }
        }
        // Follow the chain from the question's name; a loop or an over-long chain ends it.
        var chain: Set<String> = [name.lowercased()]
        var current = name.lowercased()
        while let next = cnames[current], !chain.contains(next), chain.count < 16 {
            chain.insert(next)
            current = next
        }
        var seen = Set<IPAddress>()
        return .addresses(found.filter { chain.contains($0.owner) && seen.insert($0.address).inserted }.map(\.address))
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        static func malformed(_ why: String) -> CoreError { CoreError(.internal, "malformed DNS reply: \(why)") }

        mutating func take(_ n: Int) throws(CoreError) -> [UInt8] {
            guard n >= 0, offset + n <= bytes.count else { throw Reader.malformed("a field runs past the end") }
            defer { offset += n }
            return Array(bytes[offset..<(offset + n)])
        }

        mutating func u16() throws(CoreError) -> UInt16 {
            let b = try take(2)
            return UInt16(b[0]) << 8 | UInt16(b[1])
        }

        /// A possibly compressed name (RFC 1035 §4.1.4), lowercased, without the final dot.
        mutating func name() throws(CoreError) -> String {
            var labels: [String] = []
            var at = offset
            var jumped = false
            var jumps = 0
            while true {
                guard at < bytes.count else { throw Reader.malformed("a name runs past the end") }
                let length = Int(bytes[at])
                if length & 0xc0 == 0xc0 {
                    guard at + 1 < bytes.count, jumps < 32 else { throw Reader.malformed("a name pointer loops") }
                    if !jumped { offset = at + 2 }
                    jumped = true
                    jumps += 1
                    at = (length & 0x3f) << 8 | Int(bytes[at + 1])
                    continue
                }
                guard length & 0xc0 == 0 else { throw Reader.malformed("an unknown label type") }
                if length == 0 {
                    if !jumped { offset = at + 1 }
                    return labels.joined(separator: ".").lowercased()
                }
                guard at + 1 + length <= bytes.count, labels.count < 128 else { throw Reader.malformed("a label runs past the end") }
                labels.append(String(decoding: bytes[(at + 1)...(at + length)], as: UTF8.self))
                at += 1 + length
            }
        }
    }
}

extension DNSMessage {
    /// The `nameserver` lines of a resolv.conf(5), in order (at most 3, as glibc uses). An
    /// IPv6 address with a zone (`fe80::1%eth0`) is skipped: blockd has no use for link-local
    /// servers.
    public static func nameservers(resolvConf text: String) -> [IPAddress] {
        var out: [IPAddress] = []
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver", let a = IPAddress(String(words[1])) else { continue }
            if out.count < 3 && !out.contains(a) { out.append(a) }
        }
        return out
    }
}
