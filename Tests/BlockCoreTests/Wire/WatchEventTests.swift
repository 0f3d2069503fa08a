import BlockCore
import Testing

/// The `watch` events (§8) are written by `WatchEvent.json` and read by
/// `WatchEvent.init(_:)`, nowhere else; the wire shapes are pinned here.
@Suite("watch events: one encoder, one decoder")
struct WatchEventTests {
    static let t = "2026-11-29T13:05:00+09:00"

    @Test("each event's line is exactly what the daemon has always sent", arguments: [
        (WatchEvent.lock(time: t, selection: "instagram", until: "2026-11-29T13:35:00+09:00", reasons: ["instagram"]),
         #"{"event":"lock","time":"2026-11-29T13:05:00+09:00","selection":"instagram","until":"2026-11-29T13:35:00+09:00","reasons":["instagram"]}"#),
        (.lock(time: t, selection: "x", until: nil, reasons: ["a", "b"]),
         #"{"event":"lock","time":"2026-11-29T13:05:00+09:00","selection":"x","until":null,"reasons":["a","b"]}"#),
        (.unlock(time: t, selection: "x", why: "timed block 'x' ended (30m)"),
         #"{"event":"unlock","time":"2026-11-29T13:05:00+09:00","selection":"x","why":"timed block 'x' ended (30m)"}"#),
        (.refusal(time: t, code: "locked", message: "m"),
         #"{"event":"refusal","time":"2026-11-29T13:05:00+09:00","code":"locked","message":"m"}"#),
        (.shieldHit(time: t, kind: .deniedLaunch, selection: "discord", path: "/usr/bin/discord", app: "Discord", until: nil),
         #"{"event":"shield-hit","time":"2026-11-29T13:05:00+09:00","kind":"denied-launch","selection":"discord","path":"/usr/bin/discord","app":"Discord","until":null}"#),
        (.tamper(time: t, kind: .tamper, selection: "s", path: "/etc/hosts", app: nil, until: "2026-11-29T14:00:00+09:00"),
         #"{"event":"tamper","time":"2026-11-29T13:05:00+09:00","kind":"tamper","selection":"s","path":"/etc/hosts","until":"2026-11-29T14:00:00+09:00"}"#),
        (.limit(time: t, activity: "games", selections: ["steam"], until: "2026-11-30T00:00:00+09:00"),
         #"{"event":"limit","time":"2026-11-29T13:05:00+09:00","activity":"games","selections":["steam"],"until":"2026-11-30T00:00:00+09:00"}"#),
        (.warning(time: t, activity: "games", selection: "steam", starts: "2026-11-29T13:10:00+09:00", remaining: "5m"),
         #"{"event":"warning","time":"2026-11-29T13:05:00+09:00","activity":"games","selection":"steam","starts":"2026-11-29T13:10:00+09:00","remaining":"5m"}"#),
        (.dropped(count: 3, time: t), #"{"event":"dropped","count":3,"time":"2026-11-29T13:05:00+09:00"}"#),
        (.dropped(count: 1, time: nil), #"{"event":"dropped","count":1}"#),
        (.failure(time: t, code: "internal", message: "m", uid: 1001),
         #"{"event":"failure","time":"2026-11-29T13:05:00+09:00","code":"internal","message":"m","uid":1001}"#),
        (.moreTime(time: t, kind: .granted, id: "r1", selection: "steam", until: "2026-11-29T13:20:00+09:00", message: "m", uid: 1001),
         #"{"event":"more-time","time":"2026-11-29T13:05:00+09:00","kind":"granted","activity":"r1","selection":"steam","until":"2026-11-29T13:20:00+09:00","message":"m","uid":1001}"#),
        (.moreTime(time: t, kind: .denied, id: "r1", selection: "steam", until: nil, message: "m"),
         #"{"event":"more-time","time":"2026-11-29T13:05:00+09:00","kind":"denied","activity":"r1","selection":"steam","message":"m"}"#),
        (.lock(time: t, selection: "x", until: nil, reasons: ["a"], except: [1001]).offering(.ask),
         #"{"event":"lock","time":"2026-11-29T13:05:00+09:00","selection":"x","until":null,"reasons":["a"],"except":[1001],"more":"ask"}"#),
        (.shieldHit(time: t, kind: .killed, selection: "s", path: "/p", app: nil, until: nil, users: [1001]).offering(.grant),
         #"{"event":"shield-hit","time":"2026-11-29T13:05:00+09:00","kind":"killed","selection":"s","path":"/p","until":null,"users":[1001],"more":"grant"}"#),
    ])
    func wire(event: WatchEvent, line: String) throws {
        #expect(JSON.object(event.json).serialized() == line)
        let parsed = try #require(try JSON.parse(line).object)
        #expect(WatchEvent(parsed) == event, "decodes to what was encoded")
    }

    @Test("every event name has a shape")
    func everyName() {
        #expect(Set(WatchEvent.Name.allCases.map(\.rawValue)) == ["lock", "unlock", "refusal", "failure", "shield-hit", "tamper", "limit", "warning", "dropped", "more-time"])
    }

    @Test("§8: a newer daemon's event, or a key this build does not know, is kept as it came")
    func unknown() throws {
        let newer: JSONObject = ["event": "pause", "time": .string(WatchEventTests.t), "z": 1, "a": "b"]
        #expect(WatchEvent(newer) == .unknown("pause", ["time": .string(WatchEventTests.t), "z": 1, "a": "b"]))
        #expect(WatchEvent(newer).name == nil && WatchEvent(newer).word == "pause" && WatchEvent(newer).time == WatchEventTests.t)
        #expect(WatchEvent(newer).json == newer)
        let line = #"{"event":"pause","time":"2026-11-29T13:05:00+09:00","z":1,"a":"b"}"#
        #expect(JSON.object(WatchEvent(try #require(try JSON.parse(line).object)).json).serialized() == line, "in the order it came")
        let extra: JSONObject = ["event": "unlock", "time": .string(WatchEventTests.t), "selection": "x", "why": "w", "extra": true]
        #expect(WatchEvent(extra).json == extra)
        #expect(WatchEvent(["event": "lock", "until": 5]) == .lock(time: "", selection: "", until: nil, reasons: []), "a wrong type reads as absent")
    }

    @Test("§8: every known word decodes to its own case, and a known event keeps a newer daemon's extra key after its own")
    func everyWordHasACase() throws {
        for name in WatchEvent.Name.allCases {
            let e = WatchEvent(["event": .string(name.rawValue), "time": .string(WatchEventTests.t), "newer": true])
            #expect(e.name == name && e.word == name.rawValue, "\(name)")
            #expect(e.json["newer"] == true && e.json.map(\.key).last == "newer", "\(name): the extra key is kept, after the known ones")
        }
    }

    @Test("§8: an older daemon's event, without the keys it did not know yet (users, except, more, uid), reads as the whole machine's")
    func olderDaemon() throws {
        let lock = WatchEvent(["event": "lock", "time": .string(WatchEventTests.t), "selection": "x", "until": .null, "reasons": ["a"]])
        #expect(lock == .lock(time: WatchEventTests.t, selection: "x", until: nil, reasons: ["a"]))
        #expect(lock.users == nil && lock.except == nil && lock.isForEveryone && lock.concerns(1001))
        let more = WatchEvent(["event": "more-time", "time": .string(WatchEventTests.t), "kind": "ended", "activity": "g1", "selection": "x",
                               "message": "m"])
        #expect(more == .moreTime(time: WatchEventTests.t, kind: .ended, id: "g1", selection: "x", until: nil, message: "m"))
        #expect(!more.isShown(to: Peer(uid: 1001, mayModify: true)), "no uid: no member's own request")
    }
}
