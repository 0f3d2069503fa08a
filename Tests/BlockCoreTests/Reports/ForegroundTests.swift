import Foundation
import Testing
@testable import BlockCore

/// R1: foreground time in the ledger (pure, with an injected clock) and its request on the wire.
@Suite("R1: foreground time")
struct ForegroundTests {
    let tokyo = zone("Asia/Tokyo")
    static let kid = "1001", steam = "steam", tux = "/usr/games/supertux2"

    static func running(_ app: String, user: String = kid) -> UsageHistory.Open { .init(.running, user: user, name: app) }

    @Test("R1: foreground closes with running: the app's exit ends its focus too, so foreground ≤ running")
    func closesWithRunning() {
        var h = UsageHistory()
        h.set(Self.running(Self.steam), true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        #expect(h.setForeground([Self.steam], user: Self.kid, at: at("2026-11-29T10:05:00+09:00"), clock: tokyo) == [Self.steam])
        h.set(Self.running(Self.steam), false, at: at("2026-11-29T10:30:00+09:00"), clock: tokyo)
        let day = h.day(CivilDate(year: 2026, month: 11, day: 29))
        #expect(day.running == [Self.kid: [Self.steam: 1800]])
        #expect(day.foreground == [Self.kid: [Self.steam: 1500]])
        #expect(h.open.isEmpty, "no foreground left open after its app stopped")
    }

    @Test("R1: foreground opens only for an app that runs for that user; a new word replaces the last")
    func onlyRunningAndReplaced() {
        var h = UsageHistory()
        let t0 = at("2026-11-29T10:00:00+09:00")
        h.set(Self.running(Self.steam), true, at: t0, clock: tokyo)
        h.set(Self.running(Self.tux), true, at: t0, clock: tokyo)
        #expect(h.setForeground([Self.steam], user: "1002", at: t0, clock: tokyo).isEmpty, "steam runs for 1001, not for 1002")
        #expect(h.setForeground(["/usr/bin/not-running"], user: Self.kid, at: t0, clock: tokyo).isEmpty)
        h.setForeground([Self.steam], user: Self.kid, at: t0, clock: tokyo)
        h.setForeground([Self.steam], user: Self.kid, at: t0 + 60, clock: tokyo)  // the same again: no change
        h.setForeground([Self.tux], user: Self.kid, at: t0 + 120, clock: tokyo)
        h.setForeground([], user: Self.kid, at: t0 + 300, clock: tokyo)
        let date = CivilDate(year: 2026, month: 11, day: 29)
        #expect(h.day(date).foreground == [Self.kid: [Self.steam: 120, Self.tux: 180]])
        #expect(h.seconds(.foreground, on: date, user: "1002", at: t0 + 600, clock: tokyo).isEmpty)
        #expect(h.open.keys.sorted() == ["running 1001 /usr/games/supertux2", "running 1001 steam"])
    }

    @Test("R1, T7: foreground splits at local midnight, and seconds() counts what is open; for the machine it adds up over users")
    func midnight() {
        var h = UsageHistory()
        for user in [Self.kid, "1002"] {
            h.set(Self.running(Self.steam, user: user), true, at: at("2026-11-29T23:40:00+09:00"), clock: tokyo)
            h.setForeground([Self.steam], user: user, at: at("2026-11-29T23:50:00+09:00"), clock: tokyo)
        }
        h.checkpoint([.foreground], at: at("2026-11-30T00:05:00+09:00"), clock: tokyo)
        let (sun, mon) = (CivilDate(year: 2026, month: 11, day: 29), CivilDate(year: 2026, month: 11, day: 30))
        #expect(h.day(sun).foreground == [Self.kid: [Self.steam: 600], "1002": [Self.steam: 600]])
        #expect(h.day(mon).foreground == [Self.kid: [Self.steam: 300], "1002": [Self.steam: 300]])
        let now = at("2026-11-30T00:15:00+09:00")
        #expect(h.seconds(.foreground, on: mon, user: Self.kid, at: now, clock: tokyo) == [Self.steam: 900])
        #expect(h.seconds(.foreground, on: mon, user: nil, at: now, clock: tokyo) == [Self.steam: 1800])
        #expect(h.seconds(.running, on: mon, user: Self.kid, at: now, clock: tokyo) == [Self.steam: 900])
    }

    @Test("R1, T8: after a restart no app is in the foreground until it is reported again; a day without foreground decodes")
    func restartAndOldFiles() throws {
        var h = UsageHistory()
        h.set(Self.running(Self.steam), true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        h.setForeground([Self.steam], user: Self.kid, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        h.forgetRunning()
        #expect(h.open.isEmpty)
        let old = #"{"running":{"1001":{"steam":60}},"blocked":{},"counts":{}}"#
        let day = try JSONDecoder().decode(UsageHistory.Day.self, from: Data(old.utf8))
        #expect(day.foreground.isEmpty && day.running == [Self.kid: [Self.steam: 60]])
    }

    @Test("R1: a day's change carries only the users whose foreground changed, and merges back to the same day")
    func changeAndMerge() {
        var old = UsageHistory.Day()
        old.foreground = [Self.kid: [Self.steam: 60], "1002": [Self.steam: 30]]
        var new = old
        new.foreground[Self.kid]?[Self.steam]? += 60
        let change = new.changed(since: old)
        #expect(change.foreground == [Self.kid: [Self.steam: 120]])
        #expect(UsageHistory.Day().changed(since: UsageHistory.Day()).foreground.isEmpty)
        var replayed = old
        replayed.merge(change)
        #expect(replayed == new)
        var empty = UsageHistory.Day()
        empty.merge(UsageHistory.Day())
        #expect(empty == UsageHistory.Day() && empty.isEmpty)
    }

    @Test("R1: foreground on the wire: an absolute path of at most 1024 bytes, or nothing; each mistake says what is accepted",
          arguments: [
              (#"foreground {"app":"/usr/lib/firefox-esr/firefox-esr"}"#, nil),
              (#"foreground {}"#, nil),
              (#"foreground"#, nil),
              (#"foreground {"app":null}"#, nil),
              (#"foreground {"app":"firefox"}"#, "foreground: 'app' must be an absolute path to an executable (/proc/PID/exe), not 'firefox'"),
              (#"foreground {"app":""}"#, "foreground: 'app' must be an absolute path to an executable (/proc/PID/exe), not ''"),
              (#"foreground {"app":42}"#, "foreground: 'app' must be a string"),
              (#"foreground {"app":"/usr/bin/a\nb"}"#, "foreground: 'app' must not contain control characters"),
              (#"foreground {"app":"/x","uid":0}"#, "foreground: unknown argument 'uid'"),
              (#"foreground {"app":"/"# + String(repeating: "a", count: 1024) + #""}"#, "foreground: 'app' is a path of at most 1024 bytes"),
              (#"foreground ["/usr/bin/x"]"#, "foreground: the arguments must be a JSON object"),
          ] as [(String, String?)])
    func wire(line: String, expected: String?) throws {
        do throws(CoreError) {
            let request = try Request.parse(line)
            #expect(expected == nil, "\(line) parsed")
            #expect(try Request.parse(request.line) == request, "the line a client sends parses back to the same request")
            #expect(!request.line.contains("{}"), "no app: the bare word")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message == expected)
        }
    }
}
