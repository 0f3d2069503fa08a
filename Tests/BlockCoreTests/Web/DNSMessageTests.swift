import Testing
@testable import BlockCore

/// E5: the DNS messages blockd uses to learn a blocked domain's current addresses without the
/// hosts file (RFC 1035 §4).
@Suite("E5: DNS query building and reply parsing")
struct DNSMessageTests {
    /// A reply to `query` with `answers` records; names may be compression pointers.
    static func reply(to query: [UInt8], rcode: UInt8 = 0, truncated: Bool = false, answers: [[UInt8]]) -> [UInt8] {
        var m = query
        m[2] = 0x81 | (truncated ? 0x02 : 0)
        m[3] = 0x80 | rcode
        m[6] = 0
        m[7] = UInt8(answers.count)
        for a in answers { m += a }
        return m
    }

    /// One resource record: owner name bytes, type, class IN, TTL 60, rdata.
    static func rr(_ owner: [UInt8], _ type: UInt16, _ rdata: [UInt8], klass: UInt16 = 1) -> [UInt8] {
        owner + [UInt8(type >> 8), UInt8(type & 0xff), UInt8(klass >> 8), UInt8(klass & 0xff), 0, 0, 0, 60,
                 UInt8(rdata.count >> 8), UInt8(rdata.count & 0xff)] + rdata
    }

    static let question: [UInt8] = [0xc0, 12]  // pointer to the name in the question
    static func name(_ text: String) -> [UInt8] { DNSMessage.encodeName(text) }
    static let v6: [UInt8] = [0x2a, 0x03, 0x28, 0x80, 0xf1, 0x2f, 0, 0x83, 0xfa, 0xce, 0xb0, 0x0c, 0, 0, 0x25, 0xde]

    @Test("a query is a standard recursive question for one name and type")
    func query() {
        let q = DNSMessage.query(id: 0xbeef, name: "www.instagram.com", type: .aaaa)
        #expect(q == [0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
                      3, 0x77, 0x77, 0x77, 9] + Array("instagram".utf8) + [3] + Array("com".utf8) + [0, 0, 28, 0, 1])
    }

    static let cases: [(String, DNSMessage.RecordType, @Sendable ([UInt8]) -> [UInt8], DNSMessage.Answer)] = [
        ("one A record", .a, { reply(to: $0, answers: [rr(question, 1, [157, 240, 1, 174])]) },
         .addresses([IPAddress("157.240.1.174")!])),
        ("two A records, a duplicate dropped", .a,
         { reply(to: $0, answers: [rr(question, 1, [10, 0, 0, 1]), rr(question, 1, [10, 0, 0, 2]), rr(question, 1, [10, 0, 0, 1])]) },
         .addresses([IPAddress("10.0.0.1")!, IPAddress("10.0.0.2")!])),
        ("an AAAA record", .aaaa, { reply(to: $0, answers: [rr(question, 28, v6)]) },
         .addresses([IPAddress("2a03:2880:f12f:83:face:b00c:0:25de")!])),
        ("a CNAME chain to the addresses", .a, { q in
            // www.social.test → edge.cdn.test (compressed: "edge" + pointer to "cdn.test" later) → 10.1.1.1
            let cname1 = rr(question, 5, name("edge.cdn.test"))
            let edgeOffset = q.count + 12  // first answer's rdata starts after owner(2)+10 bytes
            return reply(to: q, answers: [cname1, rr([0xc0, UInt8(edgeOffset)], 1, [10, 1, 1, 1])])
        }, .addresses([IPAddress("10.1.1.1")!])),
        ("records of other names are ignored", .a,
         { reply(to: $0, answers: [rr(name("other.test"), 1, [10, 9, 9, 9]), rr(question, 1, [10, 0, 0, 3])]) },
         .addresses([IPAddress("10.0.0.3")!])),
        ("a CNAME loop ends the chain", .a, { q in
            reply(to: q, answers: [rr(question, 5, name("b.test")), rr(name("b.test"), 5, name("www.social.test")),
                                   rr(name("b.test"), 1, [10, 0, 0, 4])])
        }, .addresses([IPAddress("10.0.0.4")!])),
        ("an A record of the wrong size is skipped", .a, { reply(to: $0, answers: [rr(question, 1, [1, 2, 3])]) }, .addresses([])),
        ("a record of class CH is skipped", .a, { reply(to: $0, answers: [rr(question, 1, [1, 2, 3, 4], klass: 3)]) }, .addresses([])),
        ("NODATA: no records", .aaaa, { reply(to: $0, answers: []) }, .addresses([])),
        ("NXDOMAIN", .a, { reply(to: $0, rcode: 3, answers: []) }, .noSuchName),
    ]

    @Test("replies are parsed to the addresses at the end of the CNAME chain", arguments: cases.indices)
    func parse(_ i: Int) {
        let (what, type, build, expected) = DNSMessageTests.cases[i]
        let q = DNSMessage.query(id: 0x1234, name: "www.social.test", type: type)
        #expect(DNSMessage.parse(build(q), id: 0x1234, name: "www.social.test", type: type) == expected, "\(what)")
    }

    @Test("unusable replies: another id, truncated, SERVFAIL, a pointer loop, cut short")
    func unusable() {
        let q = DNSMessage.query(id: 7, name: "a.test", type: .a)
        let good = DNSMessageTests.reply(to: q, answers: [DNSMessageTests.rr(DNSMessageTests.question, 1, [1, 2, 3, 4])])
        let bad: [(String, [UInt8], UInt16)] = [
            ("another id", good, 8),
            ("truncated", DNSMessageTests.reply(to: q, truncated: true, answers: []), 7),
            ("SERVFAIL", DNSMessageTests.reply(to: q, rcode: 2, answers: []), 7),
            ("the query itself", q, 7),
            ("a pointer loop", DNSMessageTests.reply(to: q, answers: [[0xc0, UInt8(q.count)] + [0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 1, 1, 1]]), 7),
            ("cut short", Array(good.dropLast(2)), 7),
            ("empty", [], 7),
        ]
        for (what, bytes, id) in bad {
            guard case .unusable = DNSMessage.parse(bytes, id: id, name: "a.test", type: .a) else {
                Issue.record("\(what) was accepted")
                continue
            }
        }
    }

    @Test("resolv.conf: nameserver lines in order, at most three, comments and zones skipped")
    func resolvConf() {
        let text = "# generated\nsearch lan\nnameserver 127.0.0.1\nnameserver\t::1\n;nameserver 9.9.9.9\nnameserver fe80::1%eth0\nnameserver 127.0.0.1\nnameserver 1.1.1.1\nnameserver 8.8.8.8\n"
        #expect(DNSMessage.nameservers(resolvConf: text).map(\.description) == ["127.0.0.1", "::1", "1.1.1.1"])
        #expect(DNSMessage.nameservers(resolvConf: "").isEmpty)
    }

    @Test("IP addresses print in RFC 5952 form and parse back")
    func addresses() {
        let cases = [("0.0.0.0", "0.0.0.0"), ("::", "::"), ("::1", "::1"), ("100::1", "100::1"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
                     ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"), ("fe80::1:0:0:0", "fe80::1:0:0:0"), ("1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0")]
        for (text, canonical) in cases {
            #expect(IPAddress(text)?.description == canonical, "\(text)")
        }
        for bad in ["1.2.3", "1.2.3.256", "::1::", "1:2:3:4:5:6:7:8:9", "g::1", "", "01234::"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        #expect(IPAddress("10.0.0.1")?.v4Mapped?.description == "::ffff:a00:1")
    }
}
