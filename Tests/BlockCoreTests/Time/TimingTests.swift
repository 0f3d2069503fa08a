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

    @Test("T1: durations as people type them: unit words, spaces, a bare number after hours or minutes, a decimal that makes whole seconds", arguments: [
        ("2 hours", 7200), ("2hours", 7200), ("2 Hours", 7200), ("1 hour", 3600), ("90min", 5400), ("90 mins", 5400),
        ("30 minutes", 1800), ("1 minute", 60), ("45 sec", 45), ("45secs", 45), ("1 second", 1), ("10 seconds", 10),
        ("2 hrs", 7200), ("1 hr", 3600), ("1 day", 86_400), ("3 days", 259_200), ("5 m", 300),
        ("2h 15m", 8100), ("2 hours 15 minutes", 8100), ("1 day 2 hours", 93_600), ("1h 30 min", 5400), ("  25m  ", 1500),
        ("1h30", 5400), ("1m30", 90), ("1 hour 30", 5400), ("2h05", 7500), ("1d2h30", 95_400),
        ("1.5h", 5400), ("0.5m", 30), ("1.5 hours", 5400), ("2.5d", 216_000), (".5h", 1800), ("0.25h", 900), ("1.0s", 1),
    ])
    func typedDurations(text: String, seconds: Int) throws {
        #expect(try DurationText.parse(text) == seconds)
    }

    @Test("T1: format is unchanged, and what it writes reads back", arguments: [
        (1, "1s"), (90, "1m30s"), (5400, "1h30m"), (86_400, "1d"), (93_784, "1d2h3m4s"), (31_622_400, "366d"), (0, "0s"),
    ])
    func formatted(seconds: Int, text: String) throws {
        #expect(DurationText.format(seconds) == text)
        if seconds > 0 { #expect(try DurationText.parse(text) == seconds) }
    }

    @Test("T1: out-of-range, malformed or ambiguous durations are refused with invalid-duration, naming the nearest accepted form built from what was typed", arguments: [
        ("0s", "it must be at least 1s"),
        ("367d", "it must be at most 366d; write 366d or less"),
        ("366d1s", "it must be at most 366d"),
        ("", "it is empty; write e.g. 90s"),
        ("   ", "it is empty"),
        ("90", "'90' is not a duration: it has no unit; write 90m for minutes or 90s for seconds"),
        ("1.5", "it has no unit; write 1.5h for hours or 1.5m for minutes"),
        ("m", "'m' has no number before it; write a number before the unit, as in 5m"),
        ("30m1h", "units go from largest to smallest, each once; did you mean '1h30m'?"),
        ("1h1h", "units go from largest to smallest, each once; did you mean '2h'?"),
        ("-5m", "a duration cannot be negative"),
        ("1w", "weeks are not a unit; count them in days; did you mean '7d'?"),
        ("2 weeks", "did you mean '14d'?"),
        ("1 week 2 days", "did you mean '9d'?"),
        ("3 months", "months and years are not units; a duration is at most 366d"),
        ("500ms", "a duration is a whole number of seconds"),
        ("99999999999s", "the number is too large"),
        ("999999999.999999999d", "the number is too large"),
        ("0.999999999999999999s", "'0.999999999999999999' is not a number"),
        ("2 hourz", "'2 hourz' is not a duration: 'hourz' is not a unit (s, m, h or d, or a word such as minutes); did you mean '2 hours'?"),
        ("10 minuts", "did you mean '10 minutes'?"),
        ("1 hourz", "did you mean '1 hour'?"),
        ("1 minz", "did you mean '1 min'?"),
        ("5 secnds", "did you mean '5 seconds'?"),
        ("for 2 hours", "did you mean '2 hours'?"),
        ("1 hour and 30 minutes", "did you mean '1 hour 30 minutes'?"),
        ("2 fortnights", "'fortnights' is not a unit (s, m, h or d, or a word such as minutes); write e.g. 90s"),
        ("1h+30m", "'+' has no place in a duration; did you mean '1h 30m'?"),
        ("1,5h", "did you mean '1.5h'?"),
        ("1:30", "could be hours and minutes or minutes and seconds; write 1h30m for hours and minutes or 1m30s for minutes and seconds"),
        ("0.3s", "a duration is a whole number of seconds; write 1s"),
        ("1.0001h", "a duration is a whole number of seconds; write 1h or 1h1s"),
        ("1.5h30m", "a decimal number goes only on a duration of one unit, such as 1.5h; did you mean '2h'?"),
        ("1h90", "a bare number after hours counts whole minutes, 0 to 59; did you mean '2h30m'?"),
        ("1m60", "a bare number after minutes counts whole seconds, 0 to 59; did you mean '2m'?"),
        ("2d4", "'4' after days has no unit; did you mean '2d4h'?"),
        ("30s5", "'5' after seconds has no unit"),
        ("2 30", "'2' has no unit"),
        ("1.2.3h", "'1.2.3' is not a number"),
        ("h1", "'h' has no number before it"),
    ])
    func badDurations(text: String, message: String) {
        do {
            let seconds = try DurationText.parse(text)
            Issue.record("'\(text)' was accepted as \(seconds) s")
        } catch {
            #expect(error.code == .invalidDuration)
            #expect(error.message.hasPrefix("'\(text)' is not a duration: "), "\(error.message)")
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("T1: a suggested duration is itself accepted", arguments: [
        "30m1h", "1h1h", "1w", "2 hourz", "10 minuts", "for 2 hours", "1h+30m", "1,5h", "1.5h30m", "1h90", "2d4", "1 hour and 30 minutes",
    ])
    func suggestionsParse(text: String) throws {
        do {
            _ = try DurationText.parse(text)
            Issue.record("'\(text)' was accepted")
        } catch {
            let meant = try #require(error.message.split(separator: "did you mean '").last?.split(separator: "'").first)
            #expect(try DurationText.parse(String(meant)) > 0)
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

    @Test("T3: --until as people type it: the 12-hour clock, today, tomorrow (the calendar day after today's) and a weekday (its next one still ahead)", arguments: [
        ("2026-11-29T13:05:00+09:00", "10pm", "2026-11-29T22:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "10:30pm", "2026-11-29T22:30:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "10:30 PM", "2026-11-29T22:30:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "7am", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "7 a.m.", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "12am", "2026-11-30T00:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "12pm", "2026-11-30T12:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "12:30pm", "2026-11-30T12:30:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "7:00", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "today 22:00", "2026-11-29T22:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "today 10pm", "2026-11-29T22:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "tomorrow 07:00", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "Tomorrow 7am", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "7am tomorrow", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "tomorrow  7 am", "2026-11-30T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "tomorrow 22:00", "2026-11-30T22:00:00+09:00"),
        ("2026-11-29T23:58:00+09:00", "tomorrow 00:05", "2026-11-30T00:05:00+09:00"),
        ("2026-11-30T00:10:00+09:00", "tomorrow 07:00", "2026-12-01T07:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "sat 09:00", "2026-12-05T09:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "Saturday 9am", "2026-12-05T09:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "9am sat", "2026-12-05T09:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "mon 00:05", "2026-11-30T00:05:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "sun 14:00", "2026-11-29T14:00:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "sun 13:05", "2026-12-06T13:05:00+09:00"),
        ("2026-11-29T13:05:00+09:00", "sunday 13:00", "2026-12-06T13:00:00+09:00"),
    ])
    func typedTimes(now: String, text: String, expected: String) throws {
        #expect(try TimeText.parse(text, now: at(now), clock: zone("Asia/Tokyo")) == at(expected))
    }

    @Test("T3, T7: --until on a DST night keeps the schedules' rule: a time in the gap is the first instant after it; on a fall-back night, the first occurrence still ahead", arguments: [
        ("America/New_York", "2026-03-07T12:00:00-05:00", "tomorrow 02:30", "2026-03-08T03:00:00-04:00"),
        ("America/New_York", "2026-03-07T12:00:00-05:00", "sun 2:30am", "2026-03-08T03:00:00-04:00"),
        ("America/New_York", "2026-03-08T01:00:00-05:00", "today 02:30", "2026-03-08T03:00:00-04:00"),
        ("America/New_York", "2026-03-08T01:00:00-05:00", "2:30am", "2026-03-08T03:00:00-04:00"),
        ("America/New_York", "2026-10-31T12:00:00-04:00", "tomorrow 01:30", "2026-11-01T01:30:00-04:00"),
        ("America/New_York", "2026-11-01T01:40:00-04:00", "today 01:30", "2026-11-01T01:30:00-05:00"),
        ("America/New_York", "2026-11-01T01:40:00-04:00", "today 01:50", "2026-11-01T01:50:00-04:00"),
        ("America/New_York", "2026-11-01T01:40:00-04:00", "1:30am", "2026-11-01T01:30:00-05:00"),
        ("Europe/Berlin", "2026-03-28T12:00:00+01:00", "tomorrow 02:30", "2026-03-29T03:00:00+02:00"),
        ("Europe/Berlin", "2026-10-24T12:00:00+02:00", "sun 02:30", "2026-10-25T02:30:00+02:00"),
        ("Australia/Lord_Howe", "2026-10-03T12:00:00+10:30", "tomorrow 02:15", "2026-10-04T02:30:00+11:00"),
        ("Australia/Lord_Howe", "2026-04-04T12:00:00+11:00", "tomorrow 01:45", "2026-04-05T01:45:00+11:00"),
    ])
    func typedTimesAcrossDST(zoneID: String, now: String, text: String, expected: String) throws {
        #expect(try TimeText.parse(text, now: at(now), clock: zone(zoneID)) == at(expected))
    }

    @Test("T3: a refused --until says why and names the nearest TIME built from what was typed, or lists the forms", arguments: [
        ("today 09:00", "'today 09:00' has passed (it is 13:05 now); write 'tomorrow 09:00', or 09:00 alone for the next 09:00"),
        ("tomorrow", "'tomorrow' is not a time: 'tomorrow' needs a time of day; write one after it, as in tomorrow 07:00"),
        ("tomorow 07:00", "did you mean 'tomorrow 07:00'?"),
        ("satuday 9am", "did you mean 'saturday 9am'?"),
        ("tomorrow at 7am", "did you mean 'tomorrow 7am'?"),
        ("until 22:00", "did you mean '22:00'?"),
        ("13pm", "the 12-hour clock goes from 1 to 12; did you mean '13:00'?"),
        ("0am", "did you mean '00:00'?"),
        ("10", "'10' has no minutes; write 10:00, 10am or 10pm"),
        ("22", "'22' has no minutes; did you mean '22:00'?"),
        ("tomorrow 24:00", "the day ends at 23:59; did you mean 'tomorrow 00:00'?"),
        ("noon", "did you mean '12:00'?"),
        ("midnight", "did you mean '00:00'?"),
        ("tomorrow sat 07:00", "it names two days"),
        ("07:00 08:00", "it names two times of day"),
        ("25:00", "'25:00' is not a time of day (00:00 to 23:59); write HH:MM (22:00), 10pm or 10:30pm, with today, tomorrow or a weekday"),
        ("10:61pm", "'10:61pm' is not a time of day; write HH:MM"),
        ("someday 07:00", "'someday' is neither a day nor a time of day; did you mean '07:00'?"),
        ("someday", "'someday' is neither a day nor a time of day; write HH:MM"),
        ("2026-11-29", "'2026-11-29' is not a time: write HH:MM (22:00), 10pm or 10:30pm"),
        ("", "it is empty; write HH:MM"),
    ])
    func badTypedTimes(text: String, message: String) {
        do {
            let end = try TimeText.parse(text, now: at("2026-11-29T13:05:00+09:00"), clock: zone("Asia/Tokyo"))
            Issue.record("'\(text)' was accepted as \(end)")
        } catch {
            #expect(error.code == .invalidTime)
            #expect(error.message.contains(message), "\(error.message)")
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
