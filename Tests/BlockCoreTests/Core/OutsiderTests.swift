import Foundation
import Testing
@testable import BlockCore

/// A1 as an outsider tried it: a child and a sibling, each a member of blockd, and a
/// parent. Nothing a member is answered tells them of what is neither theirs nor machine-wide:
/// an add answers with what was added, a refusal about another's activity or request reads as
/// one about a name nobody holds, and request ids are not guessable. Each test failed on the
/// code before (what it did is said in each).
@Suite("A1: nobody learns what is not theirs")
struct OutsiderTests {
    static let users = FakeEdge.users(["kid": 1001, "parent": 1000, "kid2": 1003], groups: ["blockd-admin": [1000]])
    static let kid = Peer(uid: 1001, mayModify: true)
    static let kid2 = Peer(uid: 1003, mayModify: true)
    static var parent: Peer { var p = Peer(uid: 1000, mayModify: true); p.isAdmin = true; return p }

    static func driver() -> FakeEdge { FakeEdge(at: "2026-11-29T20:00:00+09:00", users: users) }

    /// The answer's text, with every quoted name `name` replaced by NAME.
    static func refusal(_ r: Response, _ name: String) -> String? {
        guard case .error(let e) = r else { Issue.record("expected a refusal, got \(r.line)"); return nil }
        return "\(e.code.rawValue) " + e.message.replacingOccurrences(of: name, with: "NAME")
    }

    @Test("A1: schedule add and limit add by a member answer with the member's own new activity, nothing of the sibling's (they described the sibling's: window, selections, scope, today's use)")
    func addAnswersWithWhatWasAdded() throws {
        var d = Self.driver()
        _ = try #require(ok(d.run(#"schedule-add {"name":"secret","window":"03:00-04:00","selections":["reddit"]}"#, as: Self.kid2)))
        _ = try #require(ok(d.run(#"limit-add {"name":"secretlim","seconds":2700,"selections":["steam"]}"#, as: Self.kid2)))
        let s = try #require(ok(d.run(#"schedule-add {"name":"secret","window":"05:00-06:00","selections":["youtube"]}"#, as: Self.kid)))
        #expect(s["name"] == "kid/secret" && s["window"] == "05:00-06:00" && s["selections"] == .array(["youtube"]), "\(s)")
        #expect(s["users"] == .array(["kid"]) && s["uid"] == .int(1001), "kid's own scope and origin: \(s)")
        let l = try #require(ok(d.run(#"limit-add {"name":"secretlim","seconds":600,"selections":["discord"]}"#, as: Self.kid)))
        #expect(l["name"] == "kid/secretlim" && l["limit"] == .int(600) && l["selections"] == .array(["discord"]), "\(l)")
        for reply in [s, l] {
            let text = JSON.object(reply).serialized()
            for theirs in ["kid2", "1003", "03:00", "reddit", "2700", "steam"] {
                #expect(!text.contains(theirs), "'\(theirs)' of kid2's is in kid's answer: \(text)")
            }
        }
    }

    @Test("A1: a member's stop, remove or cancel of what is neither theirs nor machine-wide is refused as for a name nobody holds (it said whose it was, that it was locked, who asked)")
    func refusalsSayNothingOfOthers() throws {
        var d = Self.driver()
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"k2"}"#, as: Self.kid2)))
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"diary9","lock":true}"#, as: Self.kid2)))
        _ = try #require(ok(d.run(#"schedule-add {"name":"nightly","window":"19:00-23:00","selections":["steam"]}"#, as: Self.kid2)))
        _ = try #require(ok(d.run(#"limit-add {"name":"daily","seconds":3600,"selections":["steam"]}"#, as: Self.kid2)))
        _ = try #require(ok(d.run(#"schedule-add {"name":"games","window":"19:00-23:00","selections":["discord"],"users":["kid2"]}"#, as: Self.parent)))
        let asked = try #require(ok(d.run(#"more {"selection":"discord","seconds":300}"#, as: Self.kid2)))
        let id = try #require(asked["id"]?.string)
        let cases: [(theirs: String, none: String, command: (String) -> String)] = [
            ("k2", "zz-none", { #"stop {"name":"\#($0)"}"# }),
            ("diary9", "zz-none", { #"stop {"name":"\#($0)"}"# }),
            ("nightly", "zz-none", { #"stop {"name":"\#($0)"}"# }),
            ("nightly", "zz-none", { #"schedule-remove {"name":"\#($0)"}"# }),
            ("daily", "zz-none", { #"limit-remove {"name":"\#($0)"}"# }),
            ("games", "zz-none", { #"schedule-remove {"name":"\#($0)"}"# }),
            ("kid2/k2", "kid2/zz-none", { #"stop {"name":"\#($0)"}"# }),
            (id, "mzzzzzzzzzz", { #"cancel {"name":"\#($0)"}"# }),
        ]
        for c in cases {
            let theirs = Self.refusal(d.run(c.command(c.theirs), as: Self.kid), c.theirs)
            let none = Self.refusal(d.run(c.command(c.none), as: Self.kid), c.none)
            #expect(theirs != nil && theirs == none, "\(c.command(c.theirs)): \(theirs ?? "-") against \(none ?? "-")")
            for word in ["kid2", "belongs", "--lock", "locked", "asked", "1003"] {
                #expect(theirs?.contains(word) != true, "\(c.command(c.theirs)) tells kid '\(word)': \(theirs ?? "")")
            }
        }
        #expect(d.core.registry.activity(named: "k2") != nil && d.core.book.requests.count == 1, "nothing of kid2's was touched")
        // What is machine-wide is in everyone's view, and its refusal may say why.
        _ = try #require(ok(d.run(#"start {"selections":["youtube"],"seconds":3600,"name":"focus","lock":true}"#, as: Self.parent)))
        guard case .error(let e) = d.run(#"stop {"name":"focus"}"#, as: Self.kid) else { Issue.record("kid stopped the parent's block"); return }
        #expect(e.code == .locked, "\(e)")
        // An administrator is told whose it is.
        _ = try #require(ok(d.run(#"stop {"name":"k2"}"#, as: Self.parent)))
    }

    @Test("§6, A1: stop, schedule remove, limit remove, cancel and approve of a name nobody holds suggest the nearest name the caller may know of, never another's; the code stays not-found")
    func didYouMeanOnlyWhatIsYours() throws {
        var d = Self.driver()
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"secret-plans"}"#, as: Self.kid2)))
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"reddit"}"#, as: Self.kid)))
        _ = try #require(ok(d.run(#"start {"selections":["reddit"],"seconds":3600,"name":"reddit"}"#, as: Self.kid2)))  // kid2/reddit
        _ = try #require(ok(d.run(#"schedule-add {"name":"homework","window":"19:00-23:00","selections":["steam"]}"#, as: Self.kid)))
        _ = try #require(ok(d.run(#"limit-add {"name":"games","seconds":3600,"selections":["steam"]}"#, as: Self.parent)))
        _ = try #require(ok(d.run(#"schedule-add {"name":"chat","window":"19:00-23:00","selections":["discord"],"users":["kid"]}"#, as: Self.parent)))
        let asked = try #require(ok(d.run(#"more {"selection":"discord","seconds":300}"#, as: Self.kid)))
        let id = try #require(asked["id"]?.string)
        let typo = String(id.dropLast()) + (id.last == "x" ? "y" : "x")
        let cases: [(line: String, peer: Peer, message: String)] = [
            (#"stop {"name":"redit"}"#, Self.kid, "no block named 'redit'; did you mean 'reddit'? 'blockc status' lists the active ones"),
            // kid2's own is kid2/reddit, which kid2 types as reddit.
            (#"stop {"name":"redit"}"#, Self.kid2, "no block named 'redit'; did you mean 'reddit'? 'blockc status' lists the active ones"),
            (#"schedule-remove {"name":"homewrk"}"#, Self.kid, "no schedule named 'homewrk'; did you mean 'homework'? 'blockc schedule list' lists them"),
            (#"limit-remove {"name":"gmes"}"#, Self.kid, "no limit named 'gmes'; did you mean 'games'? 'blockc limit list' lists them"),
            (#"stop {"name":"secret-plan"}"#, Self.kid, "no block named 'secret-plan'; 'blockc status' lists the active ones"),
            (#"stop {"name":"secret-plan"}"#, Self.parent, "no block named 'secret-plan'; did you mean 'secret-plans'? 'blockc status' lists the active ones"),
            (#"schedule-remove {"name":"homewrk"}"#, Self.kid2, "no schedule named 'homewrk'; 'blockc schedule list' lists them"),
            (#"stop {"name":"homework"}"#, Self.kid, "'homework' is a schedule; remove it with 'blockc schedule remove homework'"),
            (#"stop {"name":"zzzz"}"#, Self.parent, "no block named 'zzzz'; 'blockc status' lists the active ones"),
            (#"cancel {"name":"\#(typo)"}"#, Self.kid, "did you mean '\(id)'?"),
            (#"cancel {"name":"\#(typo)"}"#, Self.kid2, "nothing named '\(typo)' is waiting: no delayed stop or removal and no pending request; 'blockc status' shows what waits"),
            (#"approve {"id":"\#(typo)"}"#, Self.parent, "no pending request '\(typo)'; did you mean '\(id)'? 'blockc requests' lists them"),
        ]
        for c in cases {
            guard case .error(let e) = d.run(c.line, as: c.peer) else { Issue.record("\(c.line) was done"); continue }
            #expect(e.message.contains(c.message), "\(c.line) as \(c.peer.uid): \(e.message)")
            #expect(e.code == (c.message.contains("is a schedule") ? .usage : .notFound), "\(e)")
            if c.peer.uid != 1000 { #expect(!e.message.contains("secret-plans") && !e.message.contains("kid2"), "\(e.message)") }
        }
    }

    @Test("A1: with the daemon's key, request ids are ten characters of a keyed hash, unique, and not a count (they were m1, m2, ...)")
    func requestIDsAreNotGuessable() {
        var book = MoreTimeBook()
        book.idKey = [0x0706050403020100, 0x0f0e0d0c0b0a0908]
        var ids: [String] = []
        for _ in 0..<2000 { ids.append(book.takeID()) }
        #expect(Set(ids).count == ids.count, "ids repeat")
        #expect(ids.allSatisfy { $0.count == 11 && $0.hasPrefix("m") && Int($0.dropFirst()) == nil }, "\(ids.prefix(3))")
        var other = MoreTimeBook()
        other.idKey = [1, 2]
        #expect(other.takeID() != ids[0], "another key, other ids")
        // An id in use is never given again, even when the counter comes round to it.
        var again = MoreTimeBook()
        again.idKey = book.idKey
        let first = again.takeID()
        again.requests = [MoreTimeRequest(id: first, selection: "x", seconds: 60, activities: [], uid: 1, reason: nil,
                                          asked: Date(timeIntervalSince1970: 0), expires: Date(timeIntervalSince1970: 60))]
        again.nextID = 1
        #expect(again.takeID() == ids[1], "the counter skips the id in use")
        #expect(ids[0] == first)
    }

    @Test("A1: SipHash-2-4 gives the reference tags (the paper's test vectors)")
    func sipHashVectors() {
        let h = SipHash24(k0: 0x0706050403020100, k1: 0x0f0e0d0c0b0a0908)
        #expect(h.hash([UInt8]()) == 0x726fdb47dd0e0e31)
        #expect(h.hash(Array(UInt8(0)...UInt8(14))) == 0xa129ca6149be45e5)
        #expect(h.hash(Array(UInt8(0)...UInt8(7))) == 0x93f5f5799a932462)
    }
}
