import Foundation
import Testing
@testable import BlockCore

@Suite("T1, T2, T3: durations, times and midnight")
struct TimingTests {
    @Test("T1: any duration from 1 s to 366 d is exact, never rounded up", arguments: [
        ("1s", 1), ("90s", 90), ("5m", 300), ("25m", 1500), ("1h30m", 5400), ("2d", 172_800),
        ("24h", 86_400), ("1d2h3m4s", 93_784), ("366d", 31_622_400), ("14m59s", 899), ("1H", 3600),
    ])
    func durations(text: String, seconds: Int) throws {
        #expect(try DurationText.parse(text) == seconds)
        #expect(try DurationText.parse(DurationText.format(seconds)) == seconds)
    }

    @Test("T1: out-of-range or malformed durations are refused with invalid-duration", arguments: [
        "0s", "367d", "366d1s", "", "90", "m", "30m1h", "1h1h", "1.5h", "-5m", "5 m", "1w", "99999999999s",
    ])
    func badDurations(text: String) {
        do {
            _ = try DurationText.parse(text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.code == .invalidDuration)
            #expect(error.message.contains("e.g."))
        }
    }

    @Test("T1: a 5-minute block lasts exactly 300 s")
    func fiveMinuteBlock() throws {
        var registry = Registry()
        let now = at("2026-11-29T13:05:00.25Z")
        let outcome = try registry.startBlock(name: nil, selections: ["instagram"],
                                              end: now.addingTimeInterval(TimeInterval(try DurationText.parse("5m"))),
                                              locked: false, by: .root, now: now)
        #expect(outcome.block.end.timeIntervalSince(outcome.block.start) == 300)
    }

    @Test("T2: --for 24h is 86,400 s of elapsed time, even across a DST change")
    func twentyFourHours() throws {
        #expect(try DurationText.parse("24h") == 86_400)
    }

    @Test("T3: HH:MM is the next occurrence strictly after now", arguments: [
        ("Asia/Tokyo", "2026-11-29T23:58:00+09:00", "00:05", "2026-11-30T00:05:00+09:00"),
        ("Asia/Tokyo", "2026-11-29T13:05:00+09:00", "13:35", "2026-11-29T13:35:00+09:00"),
        ("Asia/Tokyo", "2026-11-29T13:05:00+09:00", "13:05", "2026-11-30T13:05:00+09:00"),
        ("Asia/Tokyo", "2026-11-29T13:05:30+09:00", "13:05", "2026-11-30T13:05:00+09:00"),
        ("Asia/Tokyo", "2026-11-29T13:04:59+09:00", "13:05", "2026-11-29T13:05:00+09:00"),
        ("America/New_York", "2026-03-08T01:00:00-05:00", "02:30", "2026-03-08T03:00:00-04:00"),
        ("America/New_York", "2026-11-01T01:10:00-04:00", "01:05", "2026-11-01T01:05:00-05:00"),
        ("Europe/Berlin", "2026-12-31T23:30:00+01:00", "00:15", "2027-01-01T00:15:00+01:00"),
    ])
    func nextOccurrence(zoneID: String, now: String, text: String, expected: String) throws {
        let end = try TimeText.parse(text, now: at(now), clock: zone(zoneID))
        #expect(end == at(expected))
    }

    @Test("T3: --until 00:05 at 23:58 is a 7-minute block")
    func sevenMinutes() throws {
        let now = at("2026-11-29T23:58:00+09:00")
        let end = try TimeText.parse("00:05", now: now, clock: zone("Asia/Tokyo"))
        #expect(end.timeIntervalSince(now) == 7 * 60)
    }

    @Test("TIME accepts ISO 8601 with and without offset", arguments: [
        ("2026-11-29T22:00:00+09:00", "2026-11-29T13:00:00Z"),
        ("2026-11-29T22:00+09:00", "2026-11-29T13:00:00Z"),
        ("2026-11-29T22:00:00Z", "2026-11-29T22:00:00Z"),
        ("2026-11-29 22:00", "2026-11-29T13:00:00Z"),
        ("2026-11-29T22:00:00-0330", "2026-11-30T01:30:00Z"),
    ])
    func iso(text: String, utc: String) throws {
        #expect(try TimeText.parse(text, now: at("2026-11-29T00:00:00Z"), clock: zone("Asia/Tokyo")) == at(utc))
    }

    @Test("TIME refuses malformed input with invalid-time", arguments: [
        "25:00", "12:61", "noon", "2026-02-30T10:00", "2026-11-29T22:00:00+24:00", "2026-11-29T22:00:00 junk",
        "2026-11-29", "2026-1-29T10:00", "",
    ])
    func badTimes(text: String) {
        do {
            _ = try TimeText.parse(text, now: at("2026-11-29T00:00:00Z"), clock: zone("Asia/Tokyo"))
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.code == .invalidTime)
        }
    }

    @Test("T3: a 22:00-07:00 window belongs to the day it starts on", arguments: [
        ("2026-11-27T23:00:00+09:00", true),   // Friday night
        ("2026-11-28T03:00:00+09:00", true),   // Saturday early morning: still Friday's window
        ("2026-11-28T07:00:00+09:00", false),  // the end is exclusive
        ("2026-11-28T23:00:00+09:00", false),  // Saturday night: Saturday is not selected
        ("2026-11-27T21:59:59+09:00", false),
    ])
    func weekdayOfStart(time: String, active: Bool) {
        let s = schedule("22:00-07:00", days: "fri")
        #expect((s.activeWindow(at: at(time), clock: zone("Asia/Tokyo")) != nil) == active)
    }

    @Test("T2: equal start and end is a 24-hour window, never zero-length")
    func equalEnds() {
        let clock = zone("Asia/Tokyo")
        let s = schedule("13:05-13:05", days: "sun")
        let w = s.activeWindow(at: at("2026-11-29T13:05:00+09:00"), clock: clock)
        #expect(w?.duration == 86_400)
        #expect(s.activeWindow(at: at("2026-11-30T13:04:59+09:00"), clock: clock) != nil)
        #expect(s.activeWindow(at: at("2026-11-30T13:05:00+09:00"), clock: clock) == nil)
        // Every day: back-to-back windows, so the schedule is always on.
        let daily = schedule("13:05-13:05")
        for hour in stride(from: 0, to: 72, by: 5) {
            #expect(daily.activeWindow(at: at("2026-11-29T00:00:00Z").addingTimeInterval(Double(hour) * 3600), clock: clock) != nil)
        }
    }

    @Test("formatRemaining rounds up and keeps two units", arguments: [
        (29.0 * 60, "29m"), (29.0 * 60 + 1, "30m"), (45, "45s"), (3600, "1h"), (5399, "1h30m"), (86_400 + 3 * 3600, "1d3h"), (0, "0s"),
    ] as [(Double, String)])
    func remaining(seconds: Double, text: String) {
        #expect(DurationText.formatRemaining(seconds) == text)
    }
}
