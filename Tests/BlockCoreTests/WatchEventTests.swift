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
        (.problem(.refusal, time: t, code: "locked", message: "m"),
         #"{"event":"refusal","time":"2026-11-29T13:05:00+09:00","code":"locked","message":"m"}"#),
        (.hit(.shieldHit, time: t, kind: "denied-launch", selection: "discord", path: "/usr/bin/discord", app: "Discord", until: nil),
         #"{"event":"shield-hit","time":"2026-11-29T13:05:00+09:00","kind":"denied-launch","selection":"discord","path":"/usr/bin/discord","app":"Discord","until":null}"#),
        (.hit(.tamper, time: t, kind: "tamper", selection: "s", path: "/etc/hosts", app: nil, until: "2026-11-29T14:00:00+09:00"),
         #"{"event":"tamper","time":"2026-11-29T13:05:00+09:00","kind":"tamper","selection":"s","path":"/etc/hosts","until":"2026-11-29T14:00:00+09:00"}"#),
        (.limit(time: t, activity: "games", selections: ["steam"], until: "2026-11-30T00:00:00+09:00"),
         #"{"event":"limit","time":"2026-11-29T13:05:00+09:00","activity":"games","selections":["steam"],"until":"2026-11-30T00:00:00+09:00"}"#),
        (.warning(time: t, activity: "games", selection: "steam", starts: "2026-11-29T13:10:00+09:00", remaining: "5m"),
         #"{"event":"warning","time":"2026-11-29T13:05:00+09:00","activity":"games","selection":"steam","starts":"2026-11-29T13:10:00+09:00","remaining":"5m"}"#),
        (.dropped(count: 3, time: t), #"{"event":"dropped","count":3,"time":"2026-11-29T13:05:00+09:00"}"#),
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

    @Test("a newer daemon's event, or a key this build does not know, is kept as it came")
    func unknown() throws {
        let newer: JSONObject = ["event": "pause", "time": .string(WatchEventTests.t), "z": 1, "a": "b"]
        #expect(WatchEvent(newer).name == nil)
        #expect(WatchEvent(newer).json == newer)
        let extra: JSONObject = ["event": "unlock", "time": .string(WatchEventTests.t), "selection": "x", "why": "w", "extra": true]
        #expect(WatchEvent(extra).json == extra)
        #expect(WatchEvent(["event": "lock", "until": 5]).until == nil, "a wrong type reads as absent")
    }
}
