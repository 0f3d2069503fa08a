import Foundation
import Testing
@testable import BlockCore

@Suite("Civil calendar arithmetic")
struct CivilTests {
    @Test("day numbers round-trip over four centuries", arguments: [-800_000, -1, 0, 1, 59, 10_956, 20_000, 146_097, 800_000])
    func roundTrip(day: Int) {
        #expect(CivilDate(dayNumber: day).dayNumber == day)
    }

    @Test("known dates and weekdays", arguments: [
        ("1970-01-01", 0, Weekday.thu), ("2000-02-29", 11_016, .tue), ("2026-11-29", 20_786, .sun),
        ("2026-03-08", 20_520, .sun),
    ])
    func known(text: String, day: Int, weekday: Weekday) {
        let parts = text.split(separator: "-").map { Int($0)! }
        let date = CivilDate(year: parts[0], month: parts[1], day: parts[2])
        #expect(date.description == text)
        #expect(date.weekday == weekday)
        #expect(date.dayNumber == day)
    }

    @Test("WallTime parses HH:MM and refuses anything else", arguments: [
        ("22:00", "22:00"), ("7:05", "07:05"), ("00:00", "00:00"), ("23:59", "23:59"),
        ("24:00", nil), ("12:60", nil), ("1200", nil), ("12:5", nil), ("", nil), ("ab:cd", nil), ("-1:00", nil), ("１２:００", nil),
    ] as [(String, String?)])
    func wallTime(text: String, expected: String?) {
        #expect((try? WallTime.parse(text))?.description == expected)
    }

    /// T2: the one window parser behind --daily, the protocol's `window` and `Window=`.
    @Test("a window is two times joined by '-': nil when it is not, WallTime's error for a bad time", arguments: [
        ("22:00-07:00", false, "22:00-07:00"), ("09:00-09:00", false, "09:00-09:00"), (" 22:00 - 07:00 ", true, "22:00-07:00"),
        ("22:00", false, "nil"), ("22:00-07:00-08:00", false, "nil"), ("-", false, "error"), ("22:00-25:00", false, "error"),
        (" 22:00-07:00", false, "error"),
    ] as [(String, Bool, String)])
    func window(text: String, trimming: Bool, expected: String) {
        let got: String
        do {
            got = try WallTime.window(text, trimmingINISpace: trimming).map { "\($0.start)-\($0.end)" } ?? "nil"
        } catch {
            #expect(error.code == .invalidTime)
            got = "error"
        }
        #expect(got == expected, "\(text)")
    }
}

@Suite("DAYS parsing (§6)")
struct WeekdayTests {
    @Test("weekday sets", arguments: [
        ("mon,wed", "mon,wed"), ("mon-fri", "mon-fri"), ("fri-mon", "mon,fri-sun"), ("sat,sun", "sat,sun"),
        ("daily", "daily"), ("weekdays", "mon-fri"), ("weekends", "sat,sun"), ("MON-Wed,sat", "mon-wed,sat"),
        ("monday,friday", "mon,fri"), ("mon-sun", "daily"), ("tue-tue", "tue"),
    ])
    func parse(text: String, canonical: String) throws {
        #expect(try WeekdaySet.parse(text).description == canonical)
    }

    @Test("bad day sets are refused with invalid-days", arguments: ["", "mon,", "funday", "mon--fri", "mon-fri-sat", ",", "mon;tue"])
    func refuse(text: String) {
        #expect(throws: CoreError.self) { try WeekdaySet.parse(text) }
        do { _ = try WeekdaySet.parse(text) } catch { #expect(error.code == .invalidDays) }
    }
}
