import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// Per-user blocks, §5 for `watch`, over the real control socket: each watching connection
/// gets only the events its peer may see. The peers are injected where SO_PEERCRED would be
/// read (the test runs as one user), in the order the connections are accepted.
@Suite("Per-user blocks: each watcher gets only its own events")
struct WatchScopeTests {
    /// The events a watcher got up to and including the lock of `last`, as "event selection".
    static func events(_ c: RawClient, until last: String) throws -> [(String, JSONObject)] {
        var got: [(String, JSONObject)] = []
        while let line = try c.readLine() {
            guard line.hasPrefix("EVENT "), let o = try JSON.parse(String(line.dropFirst(6))).object else { continue }
            let word = "\(o["event"]?.string ?? "?") \(o["selection"]?.string ?? o["code"]?.string ?? "")"
            got.append((word, o))
            if word == "lock \(last)" { return got }
        }
        throw TestFailure("the stream ended before the lock of \(last); got \(got.map(\.0))")
    }

    @Test("§5: a member watches the machine's blocks and their own, never another user's; an admin watches everything")
    func perWatcher() throws {
        let f = try ServerFixture(peers: [UserScopeTests.kid, UserScopeTests.parent, UserScopeTests.admin], users: UserScopeTests.users)
        let (kid, parent, admin) = (try f.watcher(), try f.watcher(), try f.watcher())
        let h = f.harness
        _ = ok(h.send(#"start {"selections":["reddit"],"seconds":600}"#))  // root: the whole machine
        _ = ok(h.send(#"start {"selections":["youtube"],"seconds":600}"#, as: UserScopeTests.kid))  // kid's own
        _ = ok(h.send(#"start {"selections":["instagram"],"seconds":600,"users":["parent"]}"#, as: UserScopeTests.admin))
        if case .ok = h.send(#"start {"selections":["steam"],"seconds":600,"users":["parent"]}"#, as: UserScopeTests.kid) {
            Issue.record("a member scoped a block to another user")
        }
        _ = ok(h.send(#"more {"selection":"youtube","seconds":60}"#, as: UserScopeTests.kid))  // more-time, kid's
        _ = ok(h.send(#"start {"selections":["end.example.com"],"seconds":600}"#))

        let kids = try Self.events(kid, until: "end.example.com")
        let parents = try Self.events(parent, until: "end.example.com")
        let admins = try Self.events(admin, until: "end.example.com")
        let seen = { (events: [(String, JSONObject)]) in Set(events.map(\.0)) }
        #expect(seen(kids).isSuperset(of: ["lock reddit", "lock youtube", "refusal permission-denied", "more-time youtube", "lock end.example.com"]),
                "kid: \(kids.map(\.0))")
        #expect(!seen(kids).contains("lock instagram"), "kid must not see the parent's block: \(kids.map(\.0))")
        #expect(seen(parents) == ["lock reddit", "lock instagram", "lock end.example.com"], "parent: \(parents.map(\.0))")
        #expect(seen(admins).isSuperset(of: seen(kids).union(seen(parents))), "admin: \(admins.map(\.0))")

        let lock = { (events: [(String, JSONObject)], selection: String) in events.first { $0.0 == "lock \(selection)" }?.1 }
        #expect(lock(admins, "youtube")?["users"] == .array([.int(1001)]), "a lock carries whom it blocks")
        #expect(lock(admins, "instagram")?["users"] == .array([.int(1002)]))
        #expect(lock(admins, "reddit")?["users"] == nil, "no users: the whole machine")
        #expect(admins.first { $0.0 == "refusal permission-denied" }?.1["uid"] == .int(1001), "a refusal carries whose request it was")
    }
}

extension ServerFixture {
    /// A watching connection, accepted (and so given its peer) before the next one.
    func watcher() throws -> RawClient {
        let c = try RawClient(path: sandbox.socket)
        let answer = try c.request("watch")
        guard answer.hasPrefix("OK ") else { throw TestFailure("watch answered \(answer)") }
        return c
    }
}
