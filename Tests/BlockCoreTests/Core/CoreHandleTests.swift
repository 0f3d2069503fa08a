import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// Events in, effects out: `Core.handle` alone decides the order of a request's steps (§7:
/// saved before it is enforced, answered after), stopping at each effect that waits for its
/// outcome. Each row is an input, the outcomes the edge hands back, and what the core waited
/// for and answered, in order.
@Suite("§7, T5: Core.handle takes inputs and returns effects, waiting for the save and the enforcers")
struct CoreHandleTests {
    static let start = #"start {"selections":["instagram"],"seconds":600}"#
    static let kid = Peer(uid: 1001, mayModify: true)

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var line: String
        var peer: Peer = .root
        /// The save's outcome (nil: it works).
        var save: CoreError?
        /// What the core waits for, then its answer ("OK", "ERR code", "view").
        var expected: [String]
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "a block is begun, saved, enforced, then answered", line: start, expected: ["beginChange", "commit", "enforce", "OK"]),
        Row(name: "a save that fails puts the change back and answers not-saved before anything is enforced", line: start,
            save: CoreError(.notSaved, "the change was not made: disk full"), expected: ["beginChange", "commit", "ERR not-saved"]),
        Row(name: "reload reads the files at the edge once the change is begun", line: "reload",
            expected: ["beginChange", "loadConfig", "commit", "enforce", "OK"]),
        Row(name: "a refusal is answered before anything is begun", line: "reload", peer: kid, expected: ["ERR permission-denied"]),
        Row(name: "bad input changes nothing", line: #"start {"selections":["no-such-thing"],"seconds":60}"#,
            expected: ["beginChange", "ERR unknown-selection"]),
        Row(name: "status is rendered from what the edge publishes", line: "status", expected: ["view"]),
        Row(name: "hello is answered from memory", line: "hello", expected: ["OK"]),
    ]

    @Test("§7, T5: what the core waits for and answers, in order", arguments: rows)
    func order(_ row: Row) throws {
        var d = Self.edge()
        d.saveFailure = row.save
        #expect(Self.steps(d.sending(.request(try Request.parse(row.line), from: row.peer))) == row.expected)
        #expect(!d.core.isWaiting, "the core is done with the input")
        if row.save != nil {
            #expect(d.core.registry.activities.isEmpty, "§7: the change that could not be saved is put back")
        }
    }

    @Test("T9, §7: a read past a boundary the timer has not brought in is answered after the reconcile that brings it in")
    func readCatchesUp() throws {
        var d = Self.edge()
        _ = ok(d.run(Self.start))
        d.pass(601)
        let effects = d.sending(.request(.status(), from: .root))
        #expect(Self.steps(effects) == ["enforce", "view"])
        #expect(effects.contains { if case .journal(let e) = $0 { e.event == .unlock } else { false } }, "the unlock is said before the answer")
    }

    @Test("M2: at a wake, a loosening whose delay passed is carried out as its asker's request, saved, then the wake's reconcile")
    func dueLoosening() throws {
        var d = Self.edge()
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":600,"moreTime":{"mode":"self","delay":60}}"#))
        d.pass(10)
        #expect(Self.steps(d.sending(.request(.stop(name: "instagram"), from: .root))) == ["beginChange", "commit", "OK"],
                "kept until its delay passes, nothing enforced")
        d.pass(61)
        let effects = d.sending(.wake)
        #expect(Self.steps(effects) == ["beginChange", "commit", "enforce"])
        #expect(effects.contains(.persist), "the loosenings are saved")
        #expect(d.core.registry.activities.isEmpty)
    }

    static func edge() -> FakeEdge {
        var d = FakeEdge(users: FakeEdge.users(["kid": 1001]))
        d.files = .success(.builtIn)
        return d
    }

    /// What the core waited for and its answer ("OK", "ERR code", "view"), in order.
    static func steps(_ effects: [Effect]) -> [String] {
        effects.compactMap { effect in
            switch effect {
            case .beginChange: "beginChange"
            case .loadConfig: "loadConfig"
            case .commit: "commit"
            case .enforce: "enforce"
            case .reply(.ok): "OK"
            case .reply(.error(let e)): "ERR \(e.code.rawValue)"
            case .reply(.event): "EVENT"
            case .replyFromView: "view"
            default: nil
            }
        }
    }
}

extension FakeEdge {
    /// The effects of one input, in order.
    mutating func sending(_ input: Core.Input) -> [Effect] {
        let from = effects.count
        send(input)
        return Array(effects[from...])
    }
}
