import BlockCore
import Foundation
import Testing

/// The fault and abuse suite's bounded fast subset, in-process: a seeded random + mutation loop over the request
/// parser (the same properties as torture/fuzz/FuzzRequest.swift, which `make torture` runs
/// under libFuzzer for a million inputs). The daemon-level subset runs from `make check` as
/// `torture/run BIN --quick`.
@Suite("Torture (fast subset)")
struct TortureTests {
    static let seeds = [
        "hello", "status", #"start {"selections":["instagram"],"seconds":1800}"#,
        #"start {"selections":["a.example.com","b"],"until":"2026-03-08T01:59:00-05:00","lock":true,"name":"x"}"#,
        #"stop {"name":"bedtime"}"#, #"schedule-add {"name":"bedtime","window":"22:00-07:00","days":"mon-fri","selections":["social"]}"#,
        #"schedule-remove {"name":"b"}"#, #"selection-show {"name":"social"}"#, #"limit-add {"name":"l","seconds":3600,"selections":["x"]}"#,
        "failures-clear", "watch", "reload",
    ]
    static let tokens = [
        "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u0000", "\\ud800", "\\udc00", "null", "true", "1e400", "-0", "9223372036854775808",
        "\"seconds\":", "\"until\":", "\"name\":", "\"window\":", "24:00", "T23:59:60Z", "+14:00", "\r", "\u{0}", "\u{2028}", "é", "🙂",
    ]

    /// SplitMix64: reproducible from the seed printed on failure.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutate(_ input: [UInt8], _ g: inout Generator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &g) {
            let at = bytes.isEmpty ? 0 : Int.random(in: 0...bytes.count, using: &g)
            switch Int.random(in: 0..<6, using: &g) {
            case 0 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] = UInt8.random(in: 0...255, using: &g)
            case 1: bytes.insert(contentsOf: Array(tokens.randomElement(using: &g)!.utf8), at: at)
            case 2 where !bytes.isEmpty: bytes.removeSubrange(min(at, bytes.count - 1)..<min(bytes.count, at + Int.random(in: 1...8, using: &g)))
            case 3: bytes = Array(bytes.prefix(at))
            case 4: bytes.insert(contentsOf: bytes.prefix(Int.random(in: 0...64, using: &g)), at: at)
            default: bytes.insert(contentsOf: [UInt8](repeating: UInt8.random(in: 32...126, using: &g), count: Int.random(in: 1...5000, using: &g)), at: at)
            }
        }
        return bytes
    }

    @Test("§8: 20,000 mutated requests: the parser never traps, accepted requests have a stable canonical line, errors are one line")
    func parserMutationLoop() {
        let seed = UInt64(ProcessInfo.processInfo.environment["TORTURE_SEED"] ?? "") ?? UInt64(Date().timeIntervalSince1970)
        var g = Generator(state: seed)
        var accepted = 0, refused = 0
        for _ in 0..<20_000 {
            let input = TortureTests.mutate(Array(TortureTests.seeds.randomElement(using: &g)!.utf8), &g)
            let line = String(decoding: input, as: UTF8.self)
            do {
                let request = try Request.parse(line)
                accepted += 1
                let canonical = request.line
                let again = try? Request.parse(canonical)
                #expect(again?.line == canonical, "seed \(seed): canonical line not stable: \(canonical.prefix(200))")
            } catch {
                refused += 1
                let wire = Response.error(error).line
                #expect(!wire.utf8.contains(10) && !wire.utf8.contains(13), "seed \(seed): error spans lines: \(wire.prefix(200))")
                #expect(wire.utf8.count < 1200, "seed \(seed): error line of \(wire.utf8.count) bytes")
            }
        }
        #expect(accepted + refused == 20_000)
        #expect(accepted > 0, "seed \(seed): no mutated request was accepted; the loop is not exploring")
    }
}
