import Foundation
import Testing
@testable import BlockCore

@Suite("§8: the line protocol")
struct ProtocolTests {
    @Test("requests round-trip through their line form", arguments: [
        Request.hello, .status(), .status(all: true), .scheduleList, .selections, .failures, .failuresClear, .limitList, .stats, .watch, .reload,
        .stop(name: "instagram"), .scheduleRemove(name: "bedtime"), .selectionShow(name: "youtube"), .limitRemove(name: "games"),
        .start(.init(selections: ["instagram"], seconds: 1800)),
        .start(.init(selections: ["instagram", "example.com"], until: at("2026-11-29T13:35:00Z"), lock: true, name: "focus")),
        .scheduleAdd(Schedule(name: "bedtime", selections: ["instagram", "reddit"], days: .weekdays,
                              start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0))),
        .limitAdd(Limit(name: "games", selections: ["steam"], seconds: 3600)),
        .limitAdd(Limit(name: "games", selections: ["steam"], seconds: 3600, days: .weekend, warnSeconds: 300)),
    ])
    func roundTrip(request: Request) throws {
        let line = request.line
        #expect(!line.contains("\n"))
        #expect(try Request.parse(line) == request)
        #expect(try Request.parse(line + "\r") == request, "CRLF is tolerated")
    }

    @Test("the documented examples parse", arguments: [
        ("hello", Request.hello),
        (#"start {"selections":["instagram"],"seconds":1800}"#, .start(.init(selections: ["instagram"], seconds: 1800))),
        (#"start {"selections":["x"],"until":"2026-11-29T13:35:00+09:00","lock":true}"#,
         .start(.init(selections: ["x"], until: at("2026-11-29T04:35:00Z"), lock: true))),
        (#"stop {"name":"instagram"}"#, .stop(name: "instagram")),
        (#"schedule-add {"name":"bedtime","window":"22:00-07:00","selections":["instagram"]}"#,
         .scheduleAdd(Schedule(name: "bedtime", selections: ["instagram"], start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0)))),
        ("status   ", .status()),
        (#"status {"all":true}"#, .status(all: true)),
        (#"status {"all":false}"#, .status(all: false)),
    ])
    func examples(line: String, request: Request) throws {
        #expect(try Request.parse(line) == request)
    }

    @Test("bad requests get a stable code", arguments: [
        ("", ErrorCode.usage),
        ("frobnicate", .unknownCommand),
        ("HELLO", .unknownCommand),
        ("hello {}", nil),
        ("hello []", .usage),
        ("hello {\"x\":1}", .usage),
        ("start", .usage),
        (#"start {"selections":[]}"#, .usage),
        (#"start {"selections":["x"]}"#, .usage),
        (#"start {"selections":["x"],"seconds":0}"#, .invalidDuration),
        (#"start {"selections":["x"],"seconds":31622401}"#, .invalidDuration),
        (#"start {"selections":["x"],"seconds":"30"}"#, .usage),
        (#"start {"selections":["x"],"seconds":1.5}"#, .usage),
        (#"start {"selections":["x"],"seconds":60,"until":"2026-11-29T13:35:00Z"}"#, .usage),
        (#"start {"selections":["x"],"until":"tomorrow"}"#, .invalidTime),
        (#"start {"selections":["x"],"until":"2026-11-29T13:35:00"}"#, .invalidTime),
        (#"start {"selections":["x"],"seconds":60,"name":"a b"}"#, .invalidName),
        (#"start {"selections":["x"],"seconds":60,"lock":"yes"}"#, .usage),
        (#"start {"selections":[1],"seconds":60}"#, .usage),
        (#"stop {"name":"x","name":"y"}"#, .usage),
        (#"stop {"name":"../etc"}"#, .invalidName),
        (#"schedule-add {"name":"b","window":"22:00","selections":["x"]}"#, .invalidTime),
        (#"schedule-add {"name":"b","window":"22:00-07:00","days":"funday","selections":["x"]}"#, .invalidDays),
        ("status {", .usage),
        (String(repeating: "a", count: 5000), .lineTooLong),
    ] as [(String, ErrorCode?)])
    func errors(line: String, code: ErrorCode?) {
        do {
            _ = try Request.parse(line)
            #expect(code == nil, "accepted \(line.prefix(60))")
        } catch {
            #expect(error.code == code)
        }
    }

    @Test("an unknown command gets a did-you-mean and the command list")
    func unknownCommand() {
        do { _ = try Request.parse("stauts") } catch {
            #expect(error.message.contains("did you mean 'status'?"))
            #expect(error.message.contains("hello"))
        }
    }

    @Test("responses: one line each, whatever the message holds")
    func responses() throws {
        let ok = Response.ok(["protocol": 1, "version": "0.1.0"])
        #expect(ok.line == #"OK {"protocol":1,"version":"0.1.0"}"#)
        #expect(try Response.parse(ok.line) == ok)
        let hostile = Response.error(CoreError(.notFound, "no block named 'a\nOK {\"forged\":true}'"))
        #expect(!hostile.line.contains("\n"))
        #expect(hostile.line.hasPrefix("ERR not-found no block named 'a OK"))
        guard case .error(let e) = try Response.parse(hostile.line) else { Issue.record("not an error"); return }
        #expect(e.code == .notFound)
        #expect(try Response.parse("ERR some-future-code it happened") == .error(CoreError(.internal, "some-future-code: it happened")))
        #expect(try Response.parse(#"EVENT {"event":"unlock"}"#) == .event(["event": "unlock"]))
        #expect(throws: CoreError.self) { try Response.parse("HELLO THERE") }
    }

    @Test("fuzz: thousands of random and mutated lines yield a request or a typed error, never a crash")
    func fuzz() {
        var rng = SplitMix64(seed: 0x5eed_b10c)
        let seeds = [
            #"start {"selections":["instagram"],"seconds":1800,"lock":true,"name":"focus"}"#,
            #"schedule-add {"name":"bedtime","window":"22:00-07:00","days":"mon-fri","selections":["instagram"]}"#,
            #"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#,
            #"stop {"name":"instagram"}"#, "hello", "status", "watch",
        ]
        let alphabet = Array(#"{}[]":,0123456789-+.eE tfnrul\ abcdefghijklmnopqrstuvwxyzé日"#.utf8) + [0, 10, 13, 0xff, 0xc3]
        var parsed = 0, refused = 0
        for i in 0..<30_000 {
            var bytes: [UInt8]
            if i % 3 == 0 {
                bytes = (0..<Int(rng.next() % 120)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            } else {
                bytes = Array(seeds[Int(rng.next() % UInt64(seeds.count))].utf8)
                for _ in 0..<(1 + Int(rng.next() % 4)) where !bytes.isEmpty {
                    let at = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 4 {
                    case 0: bytes[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                    case 1: bytes.remove(at: at)
                    case 2: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                    default: bytes = Array(bytes[..<at])
                    }
                }
            }
            let line = String(decoding: bytes, as: UTF8.self)
            do {
                let request = try Request.parse(line)
                parsed += 1
                #expect(try Request.parse(request.line) == request)
            } catch {
                refused += 1
                #expect(!Response.error(error).line.contains("\n"))
            }
        }
        #expect(parsed > 100, "the fuzzer also produced valid requests")
        #expect(refused > 10_000)
    }
}
