import Foundation
@testable import BlockCore
import ZoneInfo

/// An instant from an ISO 8601 string with an explicit offset (tests never read the clock).
func at(_ iso: String) -> Date {
    do { return try TimeText.parseISO8601(iso, clock: LocalClock.utc) } catch {
        fatalError("bad test instant \(iso): \(error)")
    }
}

func zone(_ id: String) -> LocalClock {
    guard let tz = SystemTimeZone.named(id) else { fatalError("no time zone \(id) on this machine") }
    return LocalClock(tz)
}

func schedule(_ window: String, days: String = "daily") -> Schedule {
    schedule("s", window, days: days)
}

func schedule(_ name: String, _ window: String, days: String = "daily", _ selections: [String] = ["instagram"]) -> Schedule {
    let parts = window.split(separator: "-").map(String.init)
    do {
        return Schedule(name: name, selections: selections, days: try WeekdaySet.parse(days),
                        start: try WallTime.parse(parts[0]), end: try WallTime.parse(parts[1]))
    } catch {
        fatalError("bad test schedule \(window): \(error)")
    }
}

func block(_ name: String, _ selections: [String], from start: String, to end: String, locked: Bool = false) -> Activity {
    .block(Block(name: name, selections: selections, start: at(start), end: at(end), locked: locked))
}
