import Foundation

/// The system time zone, read afresh each call (T7: schedules follow the zone in force, and
/// Foundation's `TimeZone.current` is cached for the life of the process).
public enum SystemTimeZone {
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment,
                               localtime: String = "/etc/localtime") -> TimeZone {
        if let tz = environment["TZ"], !tz.isEmpty {
            let id = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if let zone = TimeZone(identifier: id) { return zone }
        }
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: localtime),
           let range = target.range(of: "zoneinfo/") {
            var id = String(target[range.upperBound...])
            for prefix in ["posix/", "right/"] where id.hasPrefix(prefix) { id.removeFirst(prefix.count) }
            if let zone = TimeZone(identifier: id) { return zone }
        }
        if let text = try? String(contentsOfFile: "/etc/timezone", encoding: .utf8),
           let zone = TimeZone(identifier: text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            return zone
        }
        return TimeZone(identifier: "UTC")!
    }
}
