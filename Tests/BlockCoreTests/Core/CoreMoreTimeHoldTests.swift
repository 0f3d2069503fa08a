import Foundation
import Testing
@testable import BlockCore

/// M1 and M5 on the core: `more NAME` takes a limit's name (the README's `more games 5m` used
/// to say "no selection named 'games'"), a name that is both says which it was taken as, and a
/// grant another activity still holds says what holds it and why (`more reddit 1m` under a
/// locked reddit.com block used to answer "More time ... until 06:53" and nothing else).
@Suite("M1, M5: more for a limit's name; a grant says what it cannot lift")
struct CoreMoreTimeHoldTests {
    static let asker = CoreMoreTimeTests.asker

    static func driver(at start: String = "2026-11-29T20:00:00+09:00") -> FakeEdge {
        FakeEdge(at: start, users: CoreMoreTimeTests.users)
    }

    static func refused(_ d: inout FakeEdge, _ line: String, as peer: Peer = asker) -> CoreError? {
        if case .error(let e) = d.run(line, as: peer) { return e }
        Issue.record("\(line) was not refused")
        return nil
    }

    @Test("M1: 'more games 5m' on the used-up limit games is 5 min more of its allowance, and says it took the name as a limit")
    func limitByName() throws {
        var d = Self.driver()
        CoreMoreTimeTests.usedUp(&d)
        let g = try #require(ok(d.run(#"more {"selection":"games","seconds":300}"#, as: Self.asker)))
        #expect(g["named"] == "limit" && g["also"] == nil && g["allowance"] == ["games"] && g["selection"] == "steam")
        #expect(g["lifts"] == "all" && g["held"] == .array([]))
        #expect(d.enforced == [])
        d.usage(running: ["games"], as: Self.asker.uid)
        d.advance(299.999)
        #expect(d.enforced == [])
        d.advance(0.001)
        #expect(d.enforced == ["steam"], "blocked again when the 5 min of use are used")
        #expect(d.entries(.moreGranted).first?.message.hasPrefix("More time for steam under limit 'games' granted to") == true)
    }

    @Test("M1: a name more cannot use is answered with what it is and what to ask instead", arguments: [
        ("games", "limit 'games' is not used up for you (1m of 1m left today); more time is for once it is, when it blocks steam"),
        ("gamez", "no selection or limit named 'gamez'; did you mean the limit 'games'? 'blockc limit list' lists the limits"),
        ("bedtime", "'bedtime' is a schedule, not a selection or a limit: more time is asked for what it blocks (instagram), such as 'blockc more instagram 15m'"),
        ("reddit", "reddit is not blocked now; there is nothing to ask more time for"),
    ])
    func unusableNames(name: String, message: String) throws {
        var d = Self.driver()
        _ = try #require(ok(d.run(#"limit-add {"name":"games","seconds":60,"selections":["steam"]}"#, as: Self.asker)))
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"19:00-23:00","selections":["instagram"]}"#, as: Self.asker)))
        let e = try #require(Self.refused(&d, #"more {"selection":"\#(name)","seconds":300}"#))
        #expect(e.message == message)
        #expect(d.core.book.grants.isEmpty && d.core.book.requests.isEmpty)
    }

    @Test("M1: a name that is a selection and a limit is the selection while it is blocked for the asker, else the limit; the answer says which",
          arguments: [true, false])
    func bothKinds(selectionBlocked: Bool) throws {
        var d = Self.driver()
        // The limit 'reddit' counts steam; the selection reddit is blocked only in one case.
        _ = try #require(ok(d.run(#"limit-add {"name":"reddit","seconds":60,"selections":["steam"]}"#, as: Self.asker)))
        d.usage(running: ["reddit"], as: Self.asker.uid)
        d.advance(60)
        d.usage(running: [], as: Self.asker.uid)
        #expect(d.enforced == ["steam"])
        if selectionBlocked { _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"focus"}"#, as: Self.asker))) }
        let g = try #require(ok(d.run(#"more {"selection":"reddit","seconds":300}"#, as: Self.asker)))
        if selectionBlocked {
            #expect(g["named"] == "selection" && g["also"] == "limit" && g["selection"] == "reddit" && g["allowance"] == nil)
            #expect(d.enforced == ["steam"], "the limit keeps steam blocked: the grant was for the selection reddit")
        } else {
            #expect(g["named"] == "limit" && g["also"] == "selection" && g["selection"] == "steam" && g["allowance"] == ["reddit"])
            #expect(d.enforced == [])
        }
    }

    @Test("M5: a grant over a selection whose sites another, locked block covers says what stays blocked, by what, until when", arguments: [
        // `more reddit`: reddit.com's block holds reddit.com and its subdomains, not redd.it: part of it.
        ("reddit", "some", "; part of reddit stays blocked by block 'reddit.com' on reddit.com (locked) until 21:00:00"),
        // An ad-hoc selection under reddit.com: every site it has is held, so nothing is lifted.
        ("old.reddit.com", "nothing", "; it lifts nothing now: old.reddit.com stays blocked by block 'reddit.com' on reddit.com (locked) until 21:00:00"),
    ])
    func heldByAnotherSelection(selection: String, lifts: String, journal: String) throws {
        var d = Self.driver()
        _ = try #require(ok(d.run(#"start {"selections":["\#(selection)"],"seconds":1800}"#, as: Self.asker)))
        _ = try #require(ok(d.run(#"start {"selections":["reddit.com"],"seconds":3600,"lock":true}"#, as: Self.asker)))
        let g = try #require(ok(d.run(#"more {"selection":"\#(selection)","seconds":60}"#, as: Self.asker)))
        #expect(g["lifts"] == .string(lifts))
        let held = try #require(g["held"]?.array?.first?.object)
        #expect(held == ["selection": "reddit.com", "activity": "reddit.com", "kind": "block", "moreTime": "no", "locked": true,
                         "until": "2026-11-29T21:00:00.000+09:00"])
        #expect(d.entries(.moreGranted).first?.message.hasSuffix(journal) == true, "\(d.entries(.moreGranted).first?.message ?? "")")
        let event = try #require(d.events("more-time").last)
        #expect(event["lifts"] == .string(lifts) && event["heldUntil"] == "2026-11-29T21:00:00.000+09:00")
        #expect(d.enforced == ["reddit.com"], "the grant lifts \(selection) itself; the locked block stays enforced")
        let unlock = d.entries(.unlock).last { $0.message.hasPrefix("Unblocked \(selection) ") }?.message ?? ""
        #expect(unlock.hasSuffix(journal), "the unlock says what still holds it: \(unlock)")
    }

    @Test("M5: 'more games 5m' gives the limit allowance and leaves bedtime (MoreTime=no) on steam, and says so; 'more steam' is refused by it")
    func limitLeavesOtherReasons() throws {
        var d = Self.driver()
        CoreMoreTimeTests.usedUp(&d)
        _ = try #require(ok(d.run(#"schedule-add {"name":"bedtime","window":"19:00-23:00","selections":["steam"],"moreTime":{"mode":"no"}}"#, as: Self.asker)))
        let e = try #require(Self.refused(&d, #"more {"selection":"steam","seconds":300}"#))
        #expect(e.code == .locked && e.message.hasPrefix("schedule 'bedtime' gives no more time to steam"))
        let g = try #require(ok(d.run(#"more {"selection":"games","seconds":300}"#, as: Self.asker)))
        #expect(g["named"] == "limit" && g["lifts"] == "nothing")
        #expect(g["held"]?.array?.map { $0["activity"] } == ["bedtime"] && g["held"]?[0]?["moreTime"] == "no" && g["held"]?[0]?["kind"] == "schedule")
        #expect(d.enforced == ["steam"], "bedtime still holds steam")
        #expect(d.events("more-time").last?["heldUntil"] == "2026-11-29T23:00:00.000+09:00")
    }

    @Test("M5: an administrator's approval says what still holds the asker's selection too")
    func approvalSaysHolds() throws {
        var d = Self.driver()
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":1800,"moreTime":{"mode":"approval"}}"#, as: Self.asker)))
        _ = try #require(ok(d.run(#"start {"selections":["reddit.com"],"seconds":3600,"lock":true}"#, as: Self.asker)))
        let r = try #require(ok(d.run(#"more {"selection":"reddit","seconds":600}"#, as: Self.asker)))
        let g = try #require(ok(d.run(#"approve {"id":"\#(r["id"]?.string ?? "")"}"#, as: CoreMoreTimeTests.admin)))
        #expect(g["lifts"] == "some" && g["held"]?[0]?["activity"] == "reddit.com" && g["named"] == nil)
    }

    @Test("M5: which of a selection's sites and apps another blocked selection holds (W1 whole sites, URL prefixes, apps, W2 allow-only)", arguments: [
        (Selection(name: "a", domains: ["reddit.com", "redd.it"]), Selection(name: "b", domains: ["reddit.com"]), ["reddit.com"]),
        (Selection(name: "a", domains: ["old.reddit.com"]), Selection(name: "b", domains: ["reddit.com"]), ["old.reddit.com"]),
        (Selection(name: "a", domains: ["reddit.com"]), Selection(name: "b", domains: ["old.reddit.com"]), []),
        (Selection(name: "a", domains: ["badreddit.com"]), Selection(name: "b", domains: ["reddit.com"]), []),
        (Selection(name: "a", paths: ["youtube.com/shorts"]), Selection(name: "b", domains: ["youtube.com"]), ["youtube.com/shorts"]),
        (Selection(name: "a", paths: ["youtube.com/shorts/x"]), Selection(name: "b", paths: ["youtube.com/shorts"]), ["youtube.com/shorts/x"]),
        (Selection(name: "a", apps: ["steam", "lutris"]), Selection(name: "b", apps: ["steam"]), ["steam"]),
        (Selection(name: "a", domains: ["wikipedia.org", "reddit.com"], apps: ["steam"]),
         { var s = Selection(name: "only:wiki"); s.allowed = [Selection(name: "wiki", domains: ["wikipedia.org"])]; return s }(),
         ["reddit.com", "steam"]),
    ] as [(Selection, Selection, [String])])
    func targetsHeld(selection: Selection, other: Selection, held: [String]) {
        #expect(selection.targets(heldBy: other) == Set(held))
    }
}
