@testable import BlockCore
import BlockTestTools
import Foundation
import Testing

/// R2: the HTML report as a real browser draws it: headless Chromium takes a screenshot of the
/// page and Tests/Render/pngbars.py (python3's zlib and struct, no other library) measures the
/// solid-coloured bars and lines in it. Chromium is one of the tools scripts/deps installs: with
/// BLOCKD_PRIVILEGED_TESTS=1 these tests run and fail without it; elsewhere they are skipped
/// without it, saying why.
///
/// `BLOCKD_REPORT_PNG=docs/report.png swift test --skip-build --filter ReportHTMLRenderTests`
/// also saves the realistic week's screenshot there (the picture in the docs).
@Suite("R2: the HTML report in a real browser", .serialized)
struct ReportHTMLRenderTests {
    static let python = "/usr/bin/python3"
    static let tools = [Headless.chromium, python]
    static let script = Repo.root + "/Tests/Render/pngbars.py"

    /// A week of the selection `games`: every day a different time, nothing on Thursday, and a
    /// limit of 1 h every day.
    static let games: [Int64] = [1800, 3600, 7200, 0, 5400, 2700, 900]

    static func day(_ i: Int, _ o: JSONObject) -> JSON {
        let date = CivilDate(year: 2026, month: 11, day: 23).adding(days: i)
        var d: JSONObject = ["date": .string(date.description), "weekday": .string(date.weekday.description)]
        for (k, v) in o { d[k] = v }
        return .object(d)
    }

    static var week: JSONObject {
        ["schema": 1, "from": "2026-11-23", "to": "2026-11-29", "user": 1001,
         "days": .array(games.indices.map { i in
             day(i, ["used": ["games": .int(games[i])], "apps": ["/usr/bin/steam": .int(games[i])],
                     "limits": ["games": ["used": .int(games[i]), "allowance": 3600, "selections": ["games"]]]])
         })]
    }

    /// The page for `report` drawn `width` pixels wide, and the measures of `colours` in it.
    static func render(_ report: JSONObject, width: Int, height: Int, colours: [String], keep: String? = nil) throws -> JSONObject {
        let dir = try TempDir()
        let html = dir.path + "/report.html", png = dir.path + "/report.png"
        try ReportHTML.page(ReportReply(report), title: "Screen time", generated: "2026-11-29 18:04") { $0 == 1001 ? "kid" : nil }
            .write(toFile: html, atomically: true, encoding: .utf8)
        try Headless.screenshot(html, to: png, width: width, height: height, in: dir.path)
        if let keep {
            let cropped = try Run.capture(python, [script, "crop", png, keep])
            guard cropped.status == 0 else { throw Headless.Failure(description: "pngbars.py crop: \(cropped.output)") }
        }
        let measured = try Run.capture(python, [script, "measure", png] + colours)
        guard measured.status == 0, let o = try JSON.parse(measured.output).object else {
            throw Headless.Failure(description: "pngbars.py measure: \(measured.output)")
        }
        return o
    }

    struct Box: Equatable {
        var x0, x1, top, bottom: Int
        var height: Int { bottom - top + 1 }
        var centre: Double { Double(x0 + x1) / 2 }
    }

    static func boxes(_ o: JSONObject, _ colour: String, _ key: String) -> [Box] {
        (o["colours"]?[colour]?[key]?.array ?? []).map { b in
            Box(x0: b["x0"]?.int ?? -1, x1: b["x1"]?.int ?? -1, top: b["top"]?.int ?? b["y0"]?.int ?? -1,
                bottom: b["bottom"]?.int ?? b["y1"]?.int ?? -1)
        }
    }

    @Test("R2: in Chromium the week's bars stand in day order at heights in proportion to the time, the empty day has none, the limit line is at 1 h",
          .enabled(if: Privileged.can(tools: ReportHTMLRenderTests.tools), Privileged.needsTools))
    func weekShape() throws {
        if Privileged.unavailable(tools: Self.tools) != nil { return }
        let used = String(ReportHTML.Kind.used.colour.dropFirst()), limit = String(ReportHTML.limitColour.dropFirst())
        let o = try Self.render(Self.week, width: 1000, height: 1400, colours: [used, limit])
        #expect(o["width"] == 1000 && o["height"] == 1400)
        let bars = Self.boxes(o, used, "bars")
        let days = Self.games.indices.filter { Self.games[$0] > 0 }
        try #require(bars.count == days.count, "one bar per day with time, none for the empty day: \(bars)")

        // Proportion: pixels per second from the tallest (2 h) bar, which must be a real height.
        let tallest = try #require(bars.max { $0.height < $1.height })
        #expect(tallest == bars[2] && tallest.height >= 100, "the 2 h bar is Wednesday's and tall: \(bars)")
        let perSecond = Double(tallest.height) / 7200
        for (bar, i) in zip(bars, days) {
            #expect(abs(Double(bar.height) - Double(Self.games[i]) * perSecond) <= 3,
                    "day \(i): \(Self.games[i]) s is \(bar.height) px, expected \(Double(Self.games[i]) * perSecond)")
        }
        // Order and place: evenly spaced slots, Thursday's left empty; all on one baseline.
        let slot = (bars.last!.centre - bars[0].centre) / Double(days.last! - days[0])
        for (bar, i) in zip(bars, days) {
            #expect(abs(bar.centre - (bars[0].centre + Double(i - days[0]) * slot)) <= 2, "day \(i) in its slot: \(bars)")
        }
        #expect(Set(bars.map { $0.bottom }).count == 1, "one baseline: \(bars)")
        #expect(Set(bars.map { $0.x1 - $0.x0 }).count == 1, "one width: \(bars)")

        // The limit: one 2-pixel line across the chart at 1 h above the baseline.
        let lines = Self.boxes(o, limit, "lines")
        try #require(lines.count == 1, "one limit line: \(lines)")
        let line = lines[0], baseline = Double(bars[0].bottom + 1)
        #expect(line.height == 2, "\(line)")
        #expect(abs(Double(line.top + line.bottom + 1) / 2 - (baseline - 3600 * perSecond)) <= 2,
                "the line at 1 h: \(line), baseline \(baseline), \(perSecond * 3600) px an hour")
        #expect(line.x0 < bars[0].x0 && line.x1 > bars.last!.x1, "across every day: \(line)")
    }

    /// A week as a family might see it: two selections with limits (shorter on weekdays),
    /// an allow-only window blocked on school days, apps with focus time, sites, the week before.
    static var realistic: JSONObject {
        let previous: JSONObject = ["from": "2026-11-16", "to": "2026-11-22",
                                    "blocked": ["only:school.example,wikipedia.org": 90000, "games": 36000],
                                    "used": ["games": 36000, "video": 9000]]
        return ["schema": 1, "from": "2026-11-23", "to": "2026-11-29", "user": 1001,
                "days": .array((0..<7).map(realisticDay)), "previous": .object(previous)]
    }

    static func realisticDay(_ i: Int) -> JSON {
        let games: Int64 = [2700, 3300, 1500, 3600, 4500, 7800, 6600][i]
        let video: Int64 = [1200, 600, 2400, 900, 1800, 3600, 2700][i]
        let school: Int64 = [21600, 21600, 14400, 21600, 19800, 0, 0][i]
        let weekend = i >= 5
        let limit: JSON = ["used": .int(games), "allowance": .int(weekend ? 7200 : 3600), "selections": ["games"]]
        let apps: JSON = ["/usr/games/supertuxkart": .int(games * 2 / 3), "/usr/bin/steam": .int(games / 3),
                          "/usr/bin/firefox": .int(video + 1800), "/usr/bin/mpv": .int(video / 2)]
        let counts: [(String, Int)] = [("started", 2), ("stoppedEarly", i == 4 ? 1 : 0), ("asked", i % 2),
                                       ("granted", i == 5 ? 1 : 0), ("denied", i == 3 ? 1 : 0)]
        let blocked: JSON = ["only:school.example,wikipedia.org": .int(school), "games": .int(weekend ? 0 : 7200)]
        return day(i, [
            "used": ["games": .int(games), "video": .int(video)], "limits": ["games": limit], "blocked": blocked, "apps": apps,
            "foreground": ["/usr/games/supertuxkart": .int(games / 2), "/usr/bin/firefox": .int(video)],
            "web": ["youtube.com": .int(video), "wikipedia.org": .int(weekend ? 0 : 900), "scratch.mit.edu": 600],
            "counts": .object(JSONObject(uniqueKeysWithValues: counts.map { ($0.0, JSON.int(Int64($0.1))) })),
        ])
    }

    @Test("R2, B2: in Chromium a realistic week shows every kind of bar (the sites' too) and its limit lines within the width; BLOCKD_REPORT_PNG keeps the picture",
          .enabled(if: Privileged.can(tools: ReportHTMLRenderTests.tools), Privileged.needsTools))
    func realisticWeek() throws {
        if Privileged.unavailable(tools: Self.tools) != nil { return }
        let kinds: [ReportHTML.Kind] = [.used, .blocked, .app]
        let colours: [String] = kinds.map { String($0.colour.dropFirst()) } + [String(ReportHTML.limitColour.dropFirst()), String(ReportHTML.Kind.site.colour.dropFirst())]
        let dir = try TempDir()
        let keep = ProcessInfo.processInfo.environment["BLOCKD_REPORT_PNG"].map { $0.hasPrefix("/") ? $0 : Repo.root + "/" + $0 } ?? dir.path + "/kept.png"
        let o = try Self.render(Self.realistic, width: 900, height: 2600, colours: colours, keep: keep)
        let used = Self.boxes(o, colours[0], "bars"), blocked = Self.boxes(o, colours[1], "bars")
        // Charts stacked in a column share their bars' columns: a run of columns per day.
        #expect(used.count == 7, "app time every day: \(used)")
        #expect(blocked.count == 5, "blocked on school days only: \(blocked)")
        let apps = Self.boxes(o, colours[2], "bars")
        #expect(apps.count == 1 && apps.allSatisfy { $0.x1 < 900 }, "the apps' bars share their left edge, inside the page: \(apps)")
        #expect(Self.boxes(o, colours[3], "lines").count == 2, "the games limit: 1 h on weekdays, 2 h at the weekend")
        let sites = Self.boxes(o, colours[4], "bars")
        #expect(sites.count == 1 && sites.allSatisfy { $0.x1 < 900 } && sites.first.map { $0.x1 - $0.x0 } == apps.first.map { $0.x1 - $0.x0 },
                "the sites' bars share their left edge, inside the page, as long as the apps' longest: \(sites), \(apps)")
        let cropped = try Run.capture(Self.python, [Self.script, "measure", keep])
        let height = try JSON.parse(cropped.output)["height"]?.int ?? 0
        #expect(height > 800 && height < 2600, "the whole page fits the window: \(height) px")
    }

    @Test("R2: a browser that does not finish in time is stopped with all it started: its process group, and what left the group naming its profile")
    func timeout() throws {
        let dir = try TempDir()
        let marker = dir.path + "/profile"
        #expect(FileManager.default.createFile(atPath: marker, contents: nil))
        let script = "sleep 60 & echo $! > \(dir.path)/in-group; setsid tail -f \(marker) & echo $! > \(dir.path)/left; exec sleep 61"
        let began = Date()
        let status = try Headless.run(["/bin/sh", "-c", script], log: dir.path + "/log", timeout: 0.5, marker: marker)
        #expect(status == nil, "timed out")
        #expect(Date().timeIntervalSince(began) < 10)
        for file in ["in-group", "left"] {
            let pid = try String(contentsOfFile: dir.path + "/" + file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!pid.isEmpty)
            // Gone, or a zombie waiting for init: its stat's third field is Z.
            #expect(Run.eventually(timeout: 5) {
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
                return stat.isEmpty || stat.split(separator: ")").last?.split(separator: " ").first == "Z"
            }, "\(file) (pid \(pid)) was killed")
        }
    }
}
