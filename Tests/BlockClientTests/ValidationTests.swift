import BlockClient
import BlockCore
import Foundation
import Testing

/// Each request is validated once, by one function that blockc, the protocol and the registry
/// share (Validation.swift): the same bad request gets the same code and the same message
/// whichever layer sees it first.
@Suite("One validation per request: blockc, the protocol and the registry agree")
struct ValidationTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let peer = Peer(uid: 1000, mayModify: true)

    /// (blockc argv, protocol line, what the registry is asked to add).
    static let cases: [(String, [String], String, @Sendable (inout Registry) throws(CoreError) -> Void)] = [
        ("a bad block name", ["start", "--minutes", "5", "--name", "a b", "x"], #"start {"selections":["x"],"seconds":300,"name":"a b"}"#,
         { r throws(CoreError) in _ = try r.startBlock(name: "a b", selections: ["x"], end: now + 300, locked: false, by: peer, now: now) }),
        ("a zero-length block", ["start", "--minutes", "0", "x"], #"start {"selections":["x"],"seconds":0}"#,
         { _ throws(CoreError) in try Request.StartArguments(selections: ["x"], seconds: 0).validate() }),
        ("a bad schedule name", ["schedule", "add", ".b", "--daily", "22:00-07:00", "x"],
         #"schedule-add {"name":".b","window":"22:00-07:00","selections":["x"]}"#,
         { r throws(CoreError) in try r.addSchedule(Schedule(name: ".b", selections: ["x"], start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0)), by: peer, now: now) }),
        ("a limit over 24h", ["limit", "add", "games", "25h", "steam"], #"limit-add {"name":"games","seconds":90000,"selections":["steam"]}"#,
         { r throws(CoreError) in try r.addLimit(Limit(name: "games", selections: ["steam"], seconds: 90_000), by: peer, now: now) }),
        ("a warning as long as the limit", ["limit", "add", "games", "1h", "--warn", "1h", "steam"],
         #"limit-add {"name":"games","seconds":3600,"warn":3600,"selections":["steam"]}"#,
         { r throws(CoreError) in try r.addLimit(Limit(name: "games", selections: ["steam"], seconds: 3600, warnSeconds: 3600), by: peer, now: now) }),
        ("a bad limit name", ["limit", "add", ".g", "1h", "steam"], #"limit-add {"name":".g","seconds":3600,"selections":["steam"]}"#,
         { r throws(CoreError) in try r.addLimit(Limit(name: ".g", selections: ["steam"], seconds: 3600), by: peer, now: now) }),
    ]

    @Test("the same refusal from every layer", arguments: 0..<cases.count)
    func sameRefusal(index: Int) {
        let (what, argv, line, register) = ValidationTests.cases[index]
        var refusals: [CoreError] = []
        do { _ = try BlockcInvocation.parse(argv) } catch { refusals.append(error) }
        do { _ = try Request.parse(line) } catch { refusals.append(error) }
        var registry = Registry()
        do throws(CoreError) { try register(&registry) } catch { refusals.append(error) }
        #expect(refusals.count == 3, "\(what): every layer refuses, got \(refusals)")
        #expect(Set(refusals.map(\.code)).count == 1 && Set(refusals.map(\.message)).count == 1,
                "\(what): one rule, one message: \(refusals.map(\.description))")
    }
}
