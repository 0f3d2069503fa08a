import BlockCore
import Testing

/// Per-user blocks, §5 for `watch`: the daemon sends each watcher only the events its
/// SO_PEERCRED peer may see (`WatchEvent.isShown(to:)`), and the events carry their scope.
@Suite("watch events carry their scope and reach only who may see them")
struct WatchAudienceTests {
    static let t = "2026-11-29T13:05:00+09:00"
    static let kid = Peer(uid: 1001, mayModify: true)
    static let parent = Peer(uid: 1002, mayModify: true)
    static let reader = Peer(uid: 1005, mayModify: false)  // may connect, not in group blockd
    static var admin: Peer { var p = Peer(uid: 1003, mayModify: true); p.isAdmin = true; return p }

    static let watchers = [("kid", kid), ("parent", parent), ("reader", reader), ("admin", admin), ("root", Peer.root)]

    /// Event, then who gets it among kid, parent, reader, admin, root.
    static let table: [(String, WatchEvent, Set<String>)] = [
        ("lock for everyone", .lock(time: t, selection: "reddit", until: nil, reasons: ["reddit"]),
         ["kid", "parent", "reader", "admin", "root"]),
        ("lock for kid", .lock(time: t, selection: "youtube", until: nil, reasons: ["bedtime"], users: [1001]), ["kid", "admin", "root"]),
        ("lock for kid and kid2", .lock(time: t, selection: "steam", until: nil, reasons: ["b"], users: [1001, 1004]),
         ["kid", "admin", "root"]),
        ("unlock of a block that was the parent's", .unlock(time: t, selection: "x", why: "w", users: [1002]), ["parent", "admin", "root"]),
        ("unlock of a machine-wide block", .unlock(time: t, selection: "x", why: "w"), ["kid", "parent", "reader", "admin", "root"]),
        ("shield hit on kid's block", .shieldHit(time: t, kind: .deniedLaunch, selection: "steam", path: "/p", app: nil, until: nil,
                                           users: [1001]), ["kid", "admin", "root"]),
        ("tamper (the hosts file is machine-wide)", .tamper(time: t, kind: .tamper, selection: "s", path: "/etc/hosts", app: nil,
                                                        until: nil), ["kid", "parent", "reader", "admin", "root"]),
        ("limit for kid", .limit(time: t, activity: "games", selections: ["steam"], until: t, users: [1001]), ["kid", "admin", "root"]),
        ("warning of the parent's limit", .warning(time: t, activity: "g", selection: "s", starts: t, remaining: "5m", users: [1002]),
         ["parent", "admin", "root"]),
        ("refusal of kid's request", .refusal(time: t, code: "permission-denied", message: "m", uid: 1001), ["kid", "admin", "root"]),
        ("failure of no one's request", .failure(time: t, code: "internal", message: "m"), ["kid", "parent", "reader", "admin", "root"]),
        ("kid asked for more time", .moreTime(time: t, kind: .asked, id: "r1", selection: "youtube", until: nil, message: "m", uid: 1001),
         ["kid", "admin", "root"]),
        ("the answer to the parent's request", .moreTime(time: t, kind: .granted, id: "r2", selection: "x", until: t, message: "m", uid: 1002),
         ["parent", "admin", "root"]),
        ("a more-time event of no known asker", .moreTime(time: t, kind: .ended, id: "g", selection: "x", until: t, message: "m"), ["admin", "root"]),
        ("dropped (about the watcher's own stream)", .dropped(count: 2, time: t), ["kid", "parent", "reader", "admin", "root"]),
    ]

    @Test("event × watcher → delivered?", arguments: table)
    func delivered(what: String, event: WatchEvent, audience: Set<String>) throws {
        let got = Set(Self.watchers.filter { event.isShown(to: $0.1) }.map(\.0))
        #expect(got == audience, "\(what)")
        // The daemon decides from the line it sends: the filter must give the same on the decoded event.
        let decoded = WatchEvent(try #require(try JSON.parse(JSON.object(event.json).serialized()).object))
        #expect(Set(Self.watchers.filter { decoded.isShown(to: $0.1) }.map(\.0)) == audience, "\(what), after the wire")
    }

    @Test("the scope is on the wire: users for blocks and limits (absent: everyone), uid for refusals")
    func wire() {
        let lock = WatchEvent.lock(time: Self.t, selection: "youtube", until: nil, reasons: ["bedtime"], users: [1001, 1004])
        #expect(JSON.object(lock.json).serialized()
            == #"{"event":"lock","time":"2026-11-29T13:05:00+09:00","selection":"youtube","until":null,"reasons":["bedtime"],"users":[1001,1004]}"#)
        let unlock = WatchEvent.unlock(time: Self.t, selection: "x", why: "w", users: [1002])
        #expect(JSON.object(unlock.json).serialized() == #"{"event":"unlock","time":"2026-11-29T13:05:00+09:00","selection":"x","why":"w","users":[1002]}"#)
        let refusal = WatchEvent.refusal(time: Self.t, code: "locked", message: "m", uid: 1001)
        #expect(JSON.object(refusal.json).serialized() == #"{"event":"refusal","time":"2026-11-29T13:05:00+09:00","code":"locked","message":"m","uid":1001}"#)
        #expect(WatchEvent.lock(time: Self.t, selection: "x", until: nil, reasons: []).json["users"] == nil, "machine-wide: no users key")
    }
}

/// U2: `except` on the wire and in what a watcher is sent.
@Suite("U2: events for everyone but some users")
struct WatchExceptTests {
    static let t = "2026-11-29T23:00:00+09:00"

    @Test("U2: a lock for everyone but kid reaches parent and root, not kid; it round-trips")
    func exceptKid() {
        let e = WatchEvent.lock(time: Self.t, selection: "youtube", until: nil, reasons: ["focus"], except: [1001])
        #expect(e.json["except"] == .array([.int(1001)]) && e.json["users"] == nil)
        #expect(WatchEvent(e.json) == e)
        #expect(!e.isShown(to: Peer(uid: 1001, mayModify: true)))
        #expect(e.isShown(to: Peer(uid: 1002, mayModify: true)))
        #expect(e.isShown(to: Peer(uid: 0, mayModify: true)), "root sees every event")
        #expect(!e.concerns(1001) && e.concerns(1002))
        #expect(WatchEvent.unlock(time: Self.t, selection: "x", why: "w").json["except"] == nil, "no except key when no one is left out")
        #expect(WatchEvent.unlock(time: Self.t, selection: "x", why: "w", users: [1001], except: [1002]).except == nil,
                "except only qualifies an event for everyone")
    }
}
