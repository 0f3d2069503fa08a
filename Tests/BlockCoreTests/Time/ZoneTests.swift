import Foundation
import Testing
import ZoneInfo
@testable import BlockCore

/// T7's zone rules come from the system's tzdata files, parsed here (Zone, ZoneRule), not from
/// ICU. The reference is tzcode's own `zdump` (libc-bin, on every Debian system) reading the
/// same files: every transition it lists, on both sides, must give the offset it prints.
@Suite("Time zones from tzdata (T7)")
struct ZoneTests {
    static let zdump = "/usr/bin/zdump"
    static let hasTzdata = FileManager.default.fileExists(atPath: SystemTimeZone.zoneinfo + "/Europe/Berlin")

    /// Every zone tzdata lists (zone1970.tab and the backward links people still set).
    static func allZones() -> [String] {
        guard let tab = try? String(contentsOfFile: SystemTimeZone.zoneinfo + "/tzdata.zi", encoding: .utf8) else { return [] }
        return tab.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ")
            if f.first == "Z", f.count > 1 { return String(f[1]) }  // zone
            if f.first == "L", f.count > 2 { return String(f[2]) }  // link
            return nil
        }
    }

    /// `zdump -v` lines: `Zone  Sun Mar 29 00:59:59 2026 UT = ... isdst=0 gmtoff=3600`.
    static func transitions(_ zones: [String], from: Int, to: Int) throws -> [(zone: String, at: Int, offset: Int)] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: zdump)
        p.arguments = ["-v", "-c", "\(from),\(to)"] + zones
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        var out: [(String, Int, Int)] = []
        // Split by hand: a Regex over a hundred thousand lines is most of a minute in debug.
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count >= 8, f[6] == "UT", let month = months.firstIndex(of: String(f[2])),
                  let day = Int(f[3]), let year = Int(f[5]), let last = f.last, last.hasPrefix("gmtoff="),
                  let offset = Int(last.dropFirst(7)) else { continue }
            let hms = f[4].split(separator: ":").compactMap { Int($0) }
            guard hms.count == 3 else { continue }
            let at = CivilDate(year: year, month: month + 1, day: day).dayNumber * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2]
            out.append((String(f[0]), at, offset))
        }
        return out
    }

    @Test("T7: every zone agrees with zdump at every transition 1995-2040, both sides",
          .enabled(if: hasTzdata && FileManager.default.isExecutableFile(atPath: zdump), "needs tzdata and zdump (libc-bin)"))
    func allZonesAgreeWithZdump() throws {
        let zones = Self.allZones()
        #expect(zones.count > 300, "tzdata.zi lists the zones")
        var checked = 0
        var wrong: [String] = []
        for chunk in stride(from: 0, to: zones.count, by: 100) {
            let names = Array(zones[chunk..<min(chunk + 100, zones.count)])
            var loaded: [String: Zone] = [:]
            for name in names { loaded[name] = SystemTimeZone.named(name) }
            for t in try Self.transitions(names, from: 1995, to: 2040) {
                let zone = try #require(loaded[t.zone], "cannot load \(t.zone)")
                // One expectation for the lot: a hundred thousand #expects take a minute.
                let ours = zone.offset(at: t.at)
                if ours != t.offset { wrong.append("\(t.zone) at \(t.at): \(ours) s, zdump says \(t.offset) s") }
                checked += 1
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(checked) disagree: \(wrong.prefix(5))")
        #expect(checked > 20_000)
    }

    /// Zones whose rules test the footer far past the last listed transition: southern
    /// hemisphere, half-hour DST, negative DST (Dublin), DST of two hours (Troll), Morocco.
    @Test("T7: the POSIX rule after the last transition agrees with zdump to 2200",
          .enabled(if: hasTzdata && FileManager.default.isExecutableFile(atPath: zdump), "needs tzdata and zdump (libc-bin)"),
          arguments: ["Europe/Berlin", "America/New_York", "America/Santiago", "Australia/Lord_Howe", "Australia/Sydney",
                      "Pacific/Chatham", "Europe/Dublin", "Antarctica/Troll", "Africa/Casablanca", "America/Godthab",
                      "Asia/Tehran", "Pacific/Auckland", "America/Asuncion", "Asia/Gaza", "America/Havana", "Asia/Tokyo"])
    func footerAgreesWithZdump(zone name: String) throws {
        let zone = try #require(SystemTimeZone.named(name))
        for t in try Self.transitions([name], from: 2030, to: 2200) {
            #expect(zone.offset(at: t.at) == t.offset, "\(name) at \(t.at): \(zone.offset(at: t.at)) s, zdump says \(t.offset) s")
        }
    }

    @Test("POSIX TZ rules: offsets either side of their transitions", arguments: [
        // rule, UTC instant, offset expected (seconds east)
        ("CET-1CEST,M3.5.0,M10.5.0/3", "2026-03-29T00:59:59Z", 3600),
        ("CET-1CEST,M3.5.0,M10.5.0/3", "2026-03-29T01:00:00Z", 7200),
        ("CET-1CEST,M3.5.0,M10.5.0/3", "2026-10-25T00:59:59Z", 7200),
        ("CET-1CEST,M3.5.0,M10.5.0/3", "2026-10-25T01:00:00Z", 3600),
        ("EST5EDT,M3.2.0,M11.1.0", "2026-03-08T06:59:59Z", -18000),
        ("EST5EDT,M3.2.0,M11.1.0", "2026-03-08T07:00:00Z", -14400),
        // Southern hemisphere: DST spans the new year; transition times as large as 24:00.
        ("<-04>4<-03>,M9.1.6/24,M4.1.6/24", "2026-06-01T00:00:00Z", -14400),
        ("<-04>4<-03>,M9.1.6/24,M4.1.6/24", "2026-12-25T00:00:00Z", -10800),
        // Half-hour DST.
        ("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "2026-07-01T00:00:00Z", 37800),
        ("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "2026-01-01T00:00:00Z", 39600),
        // DST all year (RFC 8536's extension): always the daylight offset.
        ("EST5EDT,0/0,J365/25", "2026-06-01T00:00:00Z", -14400),
        ("EST5EDT,0/0,J365/25", "2026-01-01T00:00:00Z", -14400),
        // No DST.
        ("JST-9", "2026-06-01T00:00:00Z", 32400),
        ("<+0545>-5:45", "2026-06-01T00:00:00Z", 20700),
        // Julian days: J60 is March 1 every year, 59 (zero-based) is Feb 29 in leap years.
        ("AAA0BBB,J60/0,J300/0", "2028-02-29T23:59:59Z", 0),
        ("AAA0BBB,J60/0,J300/0", "2028-03-01T00:00:00Z", 3600),
        ("AAA0BBB,59/0,300/0", "2028-02-29T00:00:00Z", 3600),
    ])
    func posixRules(rule: String, instant: String, offset: Int) throws {
        let zone = try Zone.parse(posix: rule)
        let t = Int(at(instant).timeIntervalSince1970)
        #expect(zone.offset(at: t) == offset, "\(rule) at \(instant)")
    }

    @Test("POSIX TZ strings that are not rules are refused", arguments: [
        "", "C", "CET", "CET-", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,M3.6.0,M10.5.0",
        "CET-1CEST,M3.5.7,M10.5.0", "CET-25", "<+01-1", "CET-1CEST,J0,J300", "CET-1CEST,M3.5.0,M10.5.0/168", "CET-1 x",
    ])
    func badPosixRules(rule: String) {
        #expect(throws: CoreError.badZoneRule(rule)) { try Zone.parse(posix: rule) }
    }

    @Test("TZif files that are not, or are cut short, are refused; never a crash")
    func badFiles() throws {
        #expect(throws: CoreError.notTZif) { try Zone.parse(tzif: Array("hello, world".utf8), identifier: "x") }
        #expect(throws: CoreError.notTZif) { try Zone.parse(tzif: [], identifier: "x") }
        guard Self.hasTzdata, let data = FileManager.default.contents(atPath: SystemTimeZone.zoneinfo + "/Europe/Berlin") else { return }
        let bytes = [UInt8](data)
        #expect(try Zone.parse(tzif: bytes, identifier: "Europe/Berlin").offset(at: 1_782_864_000) == 7200)  // July 2026
        // Every truncation is refused cleanly (the fuzz-style sweep runs over the whole file).
        for cut in stride(from: 0, to: bytes.count - 1, by: 7) {
            #expect(throws: CoreError.self) { try Zone.parse(tzif: Array(bytes[0..<cut]), identifier: "x") }
        }
    }

    @Test("zone names cannot leave the zoneinfo directory", arguments: [
        ("Europe/Berlin", true), ("UTC", true), ("Etc/GMT+5", true), ("America/Argentina/Buenos_Aires", true),
        ("../etc/shadow", false), ("/etc/shadow", false), ("Europe/../../x", false), ("", false), ("a//b", false),
        ("Europe/Berlin\n", false), ("./UTC", false),
    ])
    func identifiers(name: String, valid: Bool) {
        #expect(Zone.isValidIdentifier(name) == valid)
    }

    @Test("T7: TZ wins (a name, a file, a POSIX rule), then the localtime link, then /etc/timezone, then UTC",
          .enabled(if: hasTzdata, "needs tzdata"))
    func systemZone() throws {
        let none = "/nonexistent"
        #expect(SystemTimeZone.current(environment: ["TZ": "America/New_York"], localtime: none).identifier == "America/New_York")
        #expect(SystemTimeZone.current(environment: ["TZ": ":Europe/Berlin"], localtime: none).identifier == "Europe/Berlin")
        let file = SystemTimeZone.current(environment: ["TZ": SystemTimeZone.zoneinfo + "/Asia/Tokyo"], localtime: none)
        #expect(file.identifier == "Asia/Tokyo" && file.offset(at: 0) == 32400)
        let posix = SystemTimeZone.current(environment: ["TZ": "JST-9"], localtime: none)
        #expect(posix.offset(at: 1_782_864_000) == 32400)
        // A name that is not a zone and not a rule falls through to the system's zone.
        let system = SystemTimeZone.current(environment: [:], localtime: none)
        #expect(SystemTimeZone.current(environment: ["TZ": "../../etc/passwd"], localtime: none) == system)

        let dir = NSTemporaryDirectory() + "zone-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let link = dir + "/localtime"
        #expect(symlink(SystemTimeZone.zoneinfo + "/posix/Australia/Lord_Howe", link) == 0 || symlink(SystemTimeZone.zoneinfo + "/Australia/Lord_Howe", link) == 0)
        #expect(SystemTimeZone.current(environment: [:], localtime: link).identifier == "Australia/Lord_Howe")
        // A copied file (no link to name it) still gives its rules.
        let copy = dir + "/copied"
        try FileManager.default.copyItem(atPath: SystemTimeZone.zoneinfo + "/Asia/Kolkata", toPath: copy)
        #expect(SystemTimeZone.current(environment: ["TZ": copy], localtime: none).offset(at: 0) == 19800)
    }
}
