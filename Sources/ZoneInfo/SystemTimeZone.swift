import BlockCore
import FoundationEssentials

/// The system's time zone and the zones it names, read from tzdata's files (T7). Read afresh
/// on each call: schedules follow the zone in force, and a daemon runs for months.
public enum SystemTimeZone {
    /// Where Debian's `tzdata` package keeps the zone files.
    public static let zoneinfo = "/usr/share/zoneinfo"

    /// `TZ` if set and usable, else the zone `/etc/localtime` names, else `/etc/timezone`'s,
    /// else UTC. `TZ` may be a zone name (`Europe/Berlin`, with or without glibc's leading
    /// `:`), an absolute file, or a POSIX rule (`JST-9`).
    public static func current(environment: [String: String] = ProcessInfo.processInfo.environment,
                               localtime: String = "/etc/localtime", zoneinfo: String = zoneinfo) -> Zone {
        if let tz = environment["TZ"], !tz.isEmpty {
            let id = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if id.hasPrefix("/"), let zone = load(file: id, identifier: identifier(ofFile: id, zoneinfo: zoneinfo) ?? id) {
                return zone
            }
            if let zone = named(id, zoneinfo: zoneinfo) ?? (try? Zone.parse(posix: id)) { return zone }
        }
        let linked = (try? FileManager.default.destinationOfSymbolicLink(atPath: localtime))
            .flatMap { identifier(ofFile: $0, zoneinfo: zoneinfo) }
        if let id = linked, let zone = named(id, zoneinfo: zoneinfo) { return zone }
        let configured = (try? String(contentsOfFile: "/etc/timezone", encoding: .utf8))?.trimmed()
        if let id = configured, let zone = named(id, zoneinfo: zoneinfo) { return zone }
        // A copied (not linked) /etc/localtime: its rules, under the best name there is.
        if let zone = load(file: localtime, identifier: linked ?? configured ?? "localtime") { return zone }
        return named("UTC", zoneinfo: zoneinfo) ?? .utc
    }

    /// The zone a tz name names (`Asia/Tokyo`), or nil if there is no such file or the name
    /// is not one (`../x`).
    public static func named(_ identifier: String, zoneinfo: String = zoneinfo) -> Zone? {
        guard Zone.isValidIdentifier(identifier) else { return nil }
        return load(file: "\(zoneinfo)/\(identifier)", identifier: identifier)
    }

    static func load(file: String, identifier: String) -> Zone? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        return try? Zone.parse(tzif: [UInt8](data), identifier: identifier)
    }

    /// `Europe/Berlin` from `/usr/share/zoneinfo/Europe/Berlin` or `../usr/share/zoneinfo/posix/
    /// Europe/Berlin` (the leap-second `right/` rules are read as the plain ones).
    static func identifier(ofFile path: String, zoneinfo: String) -> String? {
        let marker = zoneinfo.hasSuffix("/zoneinfo") ? "zoneinfo/" : Path.lastComponent(zoneinfo) + "/"
        guard let range = path.firstRange(of: marker) else { return nil }
        var id = String(path[range.upperBound...])
        for prefix in ["posix/", "right/"] where id.hasPrefix(prefix) { id.removeFirst(prefix.count) }
        return id.isEmpty ? nil : id
    }
}
