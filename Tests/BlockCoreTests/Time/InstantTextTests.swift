import BlockCore
import Foundation
import Testing
import ZoneInfo

/// Instants on the wire and in `--json` carry milliseconds (§6), so that what the daemon
/// says is exact: a `--for 90s` block ends 90 s after its start, not at a rounded second.
@Suite("Instants as text, to the millisecond")
struct InstantTextTests {
    static let zones = ["UTC", "Asia/Tokyo", "America/New_York", "Australia/Lord_Howe", "America/St_Johns"]

    @Test("parse(format(x)) == x to the millisecond, in every zone", arguments: zones)
    func roundTrip(zone: String) throws {
        let clock = LocalClock(SystemTimeZone.named(zone)!)
        var generator = SystemRandomNumberGenerator()
        // From 1970: before standard time some zones' offsets had seconds (St John's was
        // -3:30:52), which ±HH:MM cannot say.
        for _ in 0..<2000 {
            let ms = Int64.random(in: 0...4_000_000_000_000, using: &generator)
            let x = Date(timeIntervalSince1970: Double(ms) / 1000)
            let text = clock.iso8601(x)
            let back = try TimeText.parseISO8601WithOffset(text)
            #expect(Int64((back.timeIntervalSince1970 * 1000).rounded()) == ms, "\(text)")
        }
    }

    @Test("the text has three fractional digits and the offset", arguments: [
        (1_796_053_850.606, "UTC", "2026-11-30T15:50:50.606+00:00"),
        (1_796_053_850.0, "Asia/Tokyo", "2026-12-01T00:50:50.000+09:00"),
        (1_796_053_850.0004, "UTC", "2026-11-30T15:50:50.000+00:00"),
        (1_796_053_850.9996, "UTC", "2026-11-30T15:50:51.000+00:00"),
        (-0.25, "UTC", "1969-12-31T23:59:59.750+00:00"),
    ])
    func format(seconds: Double, zone: String, expected: String) {
        #expect(LocalClock(SystemTimeZone.named(zone)!).iso8601(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test("the parser takes an instant with or without fractional seconds")
    func parse() throws {
        #expect(try TimeText.parseISO8601WithOffset("2026-11-30T15:50:50+00:00").timeIntervalSince1970 == 1_796_053_850)
        #expect(try TimeText.parseISO8601WithOffset("2026-11-30T15:50:50.606+00:00").timeIntervalSince1970 == 1_796_053_850.606)
        #expect(try TimeText.parseISO8601WithOffset("2026-11-30T15:50:50.5Z").timeIntervalSince1970 == 1_796_053_850.5)
    }

    @Test("a start until an instant with milliseconds keeps them on the wire")
    func startUntil() throws {
        let until = Date(timeIntervalSince1970: 1_796_053_850.606)
        let line = Request.start(.init(selections: ["instagram"], until: until)).line
        #expect(line.contains(#""until":"2026-11-30T15:50:50.606+00:00""#))
        guard case .start(let args) = try Request.parse(line) else { Issue.record("not a start: \(line)"); return }
        #expect(args.until.map { Int(($0.timeIntervalSince1970 * 1000).rounded()) } == 1_796_053_850_606)
    }
}
