import BlockCore
import Foundation
import Testing
@testable import BlockDaemon

/// M4, S4: the daemon tells the agent in each lock event what `more SELECTION 15m` would get,
/// using the same rules `more` answers with, so the agent shows a button only when it works.
@Suite("M4: the more-time offer in lock events")
struct MoreTimeOfferTests {
    static let asker = Peer(uid: 1000, mayModify: true)

    /// The `more` key of the last lock event for `selection` (nil: none, or no key).
    func offer(_ h: Harness, _ selection: String) -> String? {
        let locks = h.events.all.filter { $0["event"] == "lock" && $0["selection"] == .string(selection) }
        return locks.last?["more"]?.string
    }

    @Test("M4: self gives '15 more minutes', approval an 'ask', --lock and MoreTime=no nothing", arguments: [
        (#"{"selections":["instagram"],"seconds":3600}"#, "grant"),
        (#"{"selections":["instagram"],"seconds":3600,"moreTime":{"mode":"approval"}}"#, "ask"),
        (#"{"selections":["instagram"],"seconds":3600,"lock":true}"#, nil),
        (#"{"selections":["instagram"],"seconds":3600,"moreTime":{"mode":"no"}}"#, nil),
    ] as [(String, String?)])
    func modes(start: String, expected: String?) throws {
        let h = Harness(users: .only(nameless: [1000]))
        _ = ok(h.send("start " + start, as: Self.asker))
        #expect(h.events.all.contains { $0["event"] == "lock" })
        #expect(offer(h, "instagram") == expected)
    }

    @Test("M4: with less than 15 min of MoreTimePerDay= left only the one more minute is offered, and after it nothing")
    func allowance() throws {
        let h = Harness(users: .only(nameless: [1000]))
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":3600,"moreTime":{"mode":"self","perDay":600}}"#, as: Self.asker))
        #expect(offer(h, "instagram") == "minute")
        _ = ok(h.send(#"more {"selection":"instagram","seconds":60}"#, as: Self.asker))
        h.advance(60)
        #expect(h.enforcer.current == ["instagram"])
        #expect(h.events.all.filter { $0["event"] == "lock" }.count == 2)
        #expect(offer(h, "instagram") == nil, "the minute is taken and 10 min < 15 min: pressing would be refused")
        guard case .error = h.send(#"more {"selection":"instagram","seconds":900}"#, as: Self.asker) else {
            Issue.record("the offer said no, but more was granted"); return
        }
    }
}
