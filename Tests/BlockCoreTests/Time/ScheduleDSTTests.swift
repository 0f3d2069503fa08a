import Foundation
import Testing
@testable import BlockCore

/// T7 on both 2026 transition days of three zones: a boundary in a DST gap moves to the first
/// valid instant after it; an ambiguous one takes the first occurrence; a window is as long as
/// the wall clock says that night. T2 (equal ends = 24 h of wall time) is checked on the same days.
@Suite("T7: schedule windows across DST")
struct ScheduleDSTTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var zone: String
        var window: String
        var startDay: String
        var start: String?  // expected UTC start; nil = no window that day
        var end: String?
        var testDescription: String { "\(zone) \(window) on \(startDay)" }
    }

    static let cases: [Case] = [
        // America/New_York: spring forward 2026-03-08 02:00 EST -> 03:00 EDT.
        Case(zone: "America/New_York", window: "02:30-04:00", startDay: "2026-03-08", start: "2026-03-08T07:00:00Z", end: "2026-03-08T08:00:00Z"),
        Case(zone: "America/New_York", window: "22:00-07:00", startDay: "2026-03-07", start: "2026-03-08T03:00:00Z", end: "2026-03-08T11:00:00Z"),
        Case(zone: "America/New_York", window: "01:00-02:30", startDay: "2026-03-08", start: "2026-03-08T06:00:00Z", end: "2026-03-08T07:00:00Z"),
        Case(zone: "America/New_York", window: "02:10-02:50", startDay: "2026-03-08", start: nil, end: nil),
        Case(zone: "America/New_York", window: "13:05-13:05", startDay: "2026-03-07", start: "2026-03-07T18:05:00Z", end: "2026-03-08T17:05:00Z"),
        // America/New_York: fall back 2026-11-01 02:00 EDT -> 01:00 EST; 01:00-02:00 happens twice.
        Case(zone: "America/New_York", window: "01:30-03:00", startDay: "2026-11-01", start: "2026-11-01T05:30:00Z", end: "2026-11-01T08:00:00Z"),
        Case(zone: "America/New_York", window: "22:00-01:30", startDay: "2026-10-31", start: "2026-11-01T02:00:00Z", end: "2026-11-01T05:30:00Z"),
        Case(zone: "America/New_York", window: "22:00-07:00", startDay: "2026-10-31", start: "2026-11-01T02:00:00Z", end: "2026-11-01T12:00:00Z"),
        Case(zone: "America/New_York", window: "13:05-13:05", startDay: "2026-10-31", start: "2026-10-31T17:05:00Z", end: "2026-11-01T18:05:00Z"),
        // Europe/Berlin: spring forward 2026-03-29 02:00 CET -> 03:00 CEST.
        Case(zone: "Europe/Berlin", window: "02:30-06:00", startDay: "2026-03-29", start: "2026-03-29T01:00:00Z", end: "2026-03-29T04:00:00Z"),
        Case(zone: "Europe/Berlin", window: "22:00-07:00", startDay: "2026-03-28", start: "2026-03-28T21:00:00Z", end: "2026-03-29T05:00:00Z"),
        Case(zone: "Europe/Berlin", window: "02:00-02:59", startDay: "2026-03-29", start: nil, end: nil),
        // Europe/Berlin: fall back 2026-10-25 03:00 CEST -> 02:00 CET; 02:00-03:00 happens twice.
        Case(zone: "Europe/Berlin", window: "02:30-04:00", startDay: "2026-10-25", start: "2026-10-25T00:30:00Z", end: "2026-10-25T03:00:00Z"),
        Case(zone: "Europe/Berlin", window: "22:00-07:00", startDay: "2026-10-24", start: "2026-10-24T20:00:00Z", end: "2026-10-25T06:00:00Z"),
        Case(zone: "Europe/Berlin", window: "00:00-02:30", startDay: "2026-10-25", start: "2026-10-24T22:00:00Z", end: "2026-10-25T00:30:00Z"),
        // Australia/Lord_Howe: 30-minute DST. Ends 2026-04-05 02:00 (+11) -> 01:30 (+10:30);
        // starts 2026-10-04 02:00 (+10:30) -> 02:30 (+11).
        Case(zone: "Australia/Lord_Howe", window: "01:45-03:00", startDay: "2026-04-05", start: "2026-04-04T14:45:00Z", end: "2026-04-04T16:30:00Z"),
        Case(zone: "Australia/Lord_Howe", window: "22:00-07:00", startDay: "2026-04-04", start: "2026-04-04T11:00:00Z", end: "2026-04-04T20:30:00Z"),
        Case(zone: "Australia/Lord_Howe", window: "02:15-04:00", startDay: "2026-10-04", start: "2026-10-03T15:30:00Z", end: "2026-10-03T17:00:00Z"),
        Case(zone: "Australia/Lord_Howe", window: "22:00-07:00", startDay: "2026-10-03", start: "2026-10-03T11:30:00Z", end: "2026-10-03T20:00:00Z"),
        Case(zone: "Australia/Lord_Howe", window: "02:05-02:25", startDay: "2026-10-04", start: nil, end: nil),
    ]

    @Test("window boundaries", arguments: cases)
    func window(c: Case) throws {
        let clock = zone(c.zone)
        let s = schedule(c.window)
        let day = try TimeText.parseISO8601(c.startDay + "T12:00:00Z", clock: zone("UTC"))
        let date = LocalClock.utc.civil(of: day).date
        let w = s.window(startingOn: date, clock: clock)
        #expect(w?.start == c.start.map(at))
        #expect(w?.end == c.end.map(at))
        if let w {
            // The same window is found from any instant inside it, and not at its end (half-open).
            #expect(s.activeWindow(at: w.start, clock: clock) == w)
            #expect(s.activeWindow(at: w.end.addingTimeInterval(-1), clock: clock) == w)
            #expect(s.activeWindow(at: w.end, clock: clock) != w)
            #expect(s.nextBoundary(after: w.start.addingTimeInterval(-1), clock: clock) == w.start)
            #expect(s.nextBoundary(after: w.start, clock: clock) == w.end)
        }
    }

    @Test("T7: a window swallowed by a DST gap is skipped, and the next day's window is found")
    func skippedWindow() {
        let clock = zone("America/New_York")
        let s = schedule("02:10-02:50")
        #expect(s.activeWindow(at: at("2026-03-08T07:00:00Z"), clock: clock) == nil)
        let next = s.nextWindow(after: at("2026-03-08T06:00:00Z"), clock: clock)
        #expect(next?.start == at("2026-03-09T06:10:00Z"))
        #expect(next?.end == at("2026-03-09T06:50:00Z"))
    }

    @Test("T7: LocalClock resolves gaps forward and overlaps to the first occurrence", arguments: [
        ("America/New_York", "2026-03-08T02:00:00", "2026-03-08T07:00:00Z"),
        ("America/New_York", "2026-03-08T02:59:59", "2026-03-08T07:00:00Z"),
        ("America/New_York", "2026-03-08T03:00:00", "2026-03-08T07:00:00Z"),
        ("America/New_York", "2026-11-01T01:00:00", "2026-11-01T05:00:00Z"),
        ("America/New_York", "2026-11-01T01:59:59", "2026-11-01T05:59:59Z"),
        ("America/New_York", "2026-11-01T02:00:00", "2026-11-01T07:00:00Z"),
        ("Europe/Berlin", "2026-03-29T02:30:00", "2026-03-29T01:00:00Z"),
        ("Europe/Berlin", "2026-10-25T02:30:00", "2026-10-25T00:30:00Z"),
        ("Australia/Lord_Howe", "2026-10-04T02:00:00", "2026-10-03T15:30:00Z"),
        ("Australia/Lord_Howe", "2026-04-05T01:30:00", "2026-04-04T14:30:00Z"),
        ("Australia/Lord_Howe", "2026-04-05T02:00:00", "2026-04-04T15:30:00Z"),
    ])
    func resolve(zoneID: String, local: String, utc: String) throws {
        #expect(try TimeText.parseISO8601(local, clock: zone(zoneID)) == at(utc))
    }

    @Test("iso8601 prints the offset in force at the instant", arguments: [
        ("America/New_York", "2026-03-08T06:59:59Z", "2026-03-08T01:59:59.000-05:00"),
        ("America/New_York", "2026-03-08T07:00:00Z", "2026-03-08T03:00:00.000-04:00"),
        ("Australia/Lord_Howe", "2026-10-03T15:30:00Z", "2026-10-04T02:30:00.000+11:00"),
        ("Australia/Lord_Howe", "2026-10-03T15:29:00Z", "2026-10-04T01:59:00.000+10:30"),
        ("Asia/Tokyo", "2026-11-29T04:05:00Z", "2026-11-29T13:05:00.000+09:00"),
    ])
    func iso(zoneID: String, utc: String, local: String) {
        #expect(zone(zoneID).iso8601(at(utc)) == local)
    }
}
