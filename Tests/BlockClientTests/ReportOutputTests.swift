import BlockCore
import Foundation
import Testing
@testable import BlockClient

/// R2: `blockc report` as people read it.
@Suite("R2: the report's text")
struct ReportOutputTests {
    static func day(_ date: String, _ weekday: String, _ blocked: JSON = [:], _ counts: JSON = [:], used: JSON = [:],
                    apps: JSON = [:], foreground: JSON? = nil, web: JSON? = nil, limits: JSON? = nil, users: JSON? = nil, shieldHits: JSON? = nil) -> JSON {
        var o: JSONObject = ["date": .string(date), "weekday": .string(weekday), "blocked": blocked, "counts": counts,
                             "used": used, "apps": apps]
        o["limits"] = limits
        o["foreground"] = foreground
        o["web"] = web
        o["shieldHits"] = shieldHits
        o["users"] = users
        return .object(o)
    }

    static func output(columns: Int = 50) -> Output {
        var out = Output(now: Date(timeIntervalSince1970: 0), clock: .utc, color: false)
        out.columns = columns
        out.userName = { [1000: "mum", 1001: "kid"][$0] }
        return out
    }

    static func lines(_ text: String) -> [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }

    @Test("R2: a bar per day for each selection blocked, the average against the period before, then the counts; no colour, the given width")
    func text() {
        let o: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001,
                             "days": [Self.day("2026-11-23", "mon", ["only:school": 3600], ["started": 1]),
                                      Self.day("2026-11-24", "tue", ["only:school": 1800], ["asked": 2, "granted": 1], shieldHits: ["games": 2, "only:school": 3])],
                             "previous": ["from": "2026-11-21", "to": "2026-11-22", "blocked": ["only:school": 7200]]]
        let lines = Self.lines(Self.output().report(o))
        #expect(lines[0] == "Report, Mon 23 Nov to Tue 24 Nov 2026 for kid")
        #expect(lines[2...3] == ["Time in apps and on sites", "No selection's apps or sites were used."])
        #expect(lines[5...6] == ["Blocked time", "everything but school"])
        #expect(lines[7].hasPrefix("  Mon 23 ████") && lines[7].hasSuffix(" 1 h"), "\(lines[7])")
        #expect(lines[8].hasSuffix(" 30 min") && lines[7].count <= 50 && lines[8].count <= 50, "the bars fit the width: \(lines)")
        #expect(lines[9] == "  Average 45 min a day, 15 min less than the 2 days before.")
        #expect(lines.suffix(3) == ["Blocks started: 1, stopped early: 0.", "More time asked: 2, granted: 1, denied: 0.",
                                    "Shield: 5 launches denied, apps stopped or edits undone (everything but school 3, games 2)."])
    }

    @Test("R2, screen time: first a chart of the time at the screen (each person's on the machine's view), in CSV too; nothing from a daemon that does not count it, and a word when it counted none")
    func screenTime() {
        func withScreen(_ day: JSON, _ screen: JSON) -> JSON {
            var o = day.object!
            o["screen"] = screen
            return .object(o)
        }
        let mine: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001,
                                "days": [withScreen(Self.day("2026-11-23", "mon"), ["1001": 7800]), withScreen(Self.day("2026-11-24", "tue"), [:])]]
        let lines = Self.lines(Self.output().report(mine))
        #expect(lines[2...3] == ["Screen time", "At the screen"], "\(lines)")
        #expect(lines[4].hasPrefix("  Mon 23 ") && lines[4].hasSuffix(" 2 h 10 min"), "\(lines[4])")
        #expect(lines.firstIndex(of: "Screen time")! < lines.firstIndex(of: "Time in apps and on sites")!, "screen time comes first")
        #expect(Self.lines(Self.output().reportCSV(mine)).contains("2026-11-23,screen,1001,7800"))
        let machine: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-23",
                                   "days": [withScreen(Self.day("2026-11-23", "mon"), ["1001": 600, "1000": 3600])]]
        let both = Self.lines(Self.output().report(machine))
        #expect(both[2...3] == ["Screen time", "mum"] && both.contains("kid"), "each person, by uid: \(both)")
        let none = Self.output().report(["schema": 1, "from": "2026-11-23", "to": "2026-11-23", "user": 1001,
                                         "days": [withScreen(Self.day("2026-11-23", "mon"), [:])]])
        #expect(none.contains("Screen time\nNone was counted"))
        let older = Self.output().report(["schema": 1, "from": "2026-11-23", "to": "2026-11-23", "user": 1001, "days": [Self.day("2026-11-23", "mon")]])
        #expect(!older.contains("Screen time") && !older.contains("screen"))
    }

    @Test("R2, screen time: one's own chart draws one's screen-time limit, which is not drawn again among apps and sites")
    func screenLimit() {
        func day(_ date: String, _ weekday: String, _ seconds: Int) -> JSON {
            var o = Self.day(date, weekday).object!
            o["screen"] = ["1001": .int(Int64(seconds))]
            o["limits"] = ["screen": ["used": .int(Int64(seconds)), "allowance": 7200, "selections": [], "session": "lock"]]
            return .object(o)
        }
        let mine: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001,
                                "days": [day("2026-11-23", "mon", 7800), day("2026-11-24", "tue", 3600)]]
        let text = Self.output().report(mine)
        let lines = Self.lines(text)
        #expect(lines[3] == "At the screen (limit screen)", "\(lines)")
        #expect(text.components(separatedBy: "limit screen").count == 2, "drawn once, on the screen-time chart: \(text)")
        let html = ReportHTML.page(ReportReply(mine), title: "t") { _ in "kid" }
        #expect(html.contains("Limit screen: 2 h a day"), "the HTML draws the line too")
    }

    @Test("R2: a selection with less than 15 min on every day and no limit gets no near-empty chart: one table of totals after the charts, biggest first")
    func smallSelections() {
        let o: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001,
                             "days": [Self.day("2026-11-23", "mon", ["youtube": 60, "reddit": 1800], used: ["games": 1800, "video": 60, "news": 300]),
                                      Self.day("2026-11-24", "tue", ["youtube": 120], used: ["video": 120])]]
        let lines = Self.lines(Self.output().report(o))
        #expect(lines.contains("games") && !lines.contains("video") && !lines.contains("news"), "\(lines)")
        let other = lines.firstIndex(of: "Other selections, less than 15 min on every day; totals:")
        #expect(other.map { lines[$0 + 1].hasPrefix("  news ") && lines[$0 + 2].hasPrefix("  video ") && lines[$0 + 2].hasSuffix(" 3 min") } == true, "\(lines)")
        let blocked = lines.firstIndex(of: "Blocked time")
        #expect(blocked.map { lines[$0 + 1] == "reddit" } == true, "reddit has a day of 30 min: a chart")
        let shortBlocked = lines.lastIndex(of: "Other selections, less than 15 min on every day; totals:")
        #expect(shortBlocked.map { $0 > (blocked ?? 0) && lines[$0 + 1].hasPrefix("  youtube ") } == true, "\(lines)")
        let only = Self.output().report(["schema": 1, "from": "2026-11-23", "to": "2026-11-23",
                                         "days": [Self.day("2026-11-23", "mon", ["youtube": 60])]])
        #expect(only.contains("Blocked time\nLess than 15 min on every day; totals:\n  youtube "), "\(only)")
    }

    @Test("R2: nothing ran and nothing was blocked says so; the machine's report says whose it is")
    func empty() {
        let text = Self.output().report(["schema": 1, "from": "2026-11-29", "to": "2026-11-29", "days": [Self.day("2026-11-29", "sun")]])
        #expect(text.hasPrefix("Report, Sun 29 Nov 2026 for the whole machine\n\nTime in apps and on sites\nNo selection's apps or sites were used.\n\nBlocked time\nNothing was blocked."))
    }

    @Test("R2: the heading names the days with their month and year: a week, a month so far, a whole month, one day, a week across two years; an answer's dates that do not parse as they are",
          arguments: [
              ("2026-11-23", 7, "week", "Report, Mon 23 Nov to Sun 29 Nov 2026 for kid"),
              ("2026-12-01", 5, "month", "Report, Tue 1 Dec to Sat 5 Dec 2026 for kid"),
              ("2026-02-01", 28, "month", "Report, Sun 1 Feb to Sat 28 Feb 2026 for kid"),
              ("2026-11-29", 1, "days", "Report, Sun 29 Nov 2026 for kid"),
              ("2026-12-28", 7, "week", "Report, Mon 28 Dec 2026 to Sun 3 Jan 2027 for kid"),
              ("29 November", 1, "days", "Report, Sun er for kid"),
          ] as [(String, Int, String, String)])
    func heading(from: String, count: Int, period: String, expected: String) {
        let start = try? CivilDate.parse(from)
        let days: [JSON] = (0..<count).map { i in
            guard let d = start?.adding(days: i) else { return Self.day(from, "sun") }
            return Self.day(d.description, d.weekday.description, used: ["games": 60])
        }
        let text = Self.output().report(["schema": 1, "period": .string(period), "user": 1001, "days": .array(days)])
        #expect(Self.lines(text)[0] == expected)
        #expect(Self.lines(text).allSatisfy { $0.count <= 50 }, "\(text)")
    }

    static let week: JSONObject = [
        "schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001, "period": "week",
        "days": [
            day("2026-11-23", "mon", used: ["games": 5400], apps: ["/usr/games/supertux2": 3600, "/usr/bin/steam": 2400],
                foreground: ["/usr/games/supertux2": 3000], web: ["youtube.com": 1800, "wikipedia.org": 300],
                limits: ["games": ["used": 5400, "allowance": 3600, "selections": ["games"]]]),
            day("2026-11-24", "tue", used: ["games": 1800], apps: ["/usr/games/supertux2": 1800], web: ["youtube.com": 900],
                limits: ["games": ["used": 1800, "allowance": 3600, "selections": ["games"]]]),
        ],
        "previous": ["from": "2026-11-16", "to": "2026-11-17", "blocked": [:], "used": ["games": 3600]],
    ]

    @Test("R2: by selection: each selection's time with its limit drawn, the change against the same days of the week before; then the top apps, biggest first")
    func limitLine() {
        let lines = Self.lines(Self.output().report(Self.week))
        #expect(lines[2...3] == ["Time in apps and on sites", "games"])
        #expect(lines[4].hasPrefix("  Mon 23 ") && lines[4].hasSuffix(" 1 h 30 min"), "\(lines[4])")
        let mark = lines[4].firstIndex(of: "│").map { lines[4].distance(from: lines[4].startIndex, to: $0) }
        #expect(mark != nil && lines[5].firstIndex(of: "│").map { lines[5].distance(from: lines[5].startIndex, to: $0) } == mark,
                "the limit is a line through every day: \(lines[4...6])")
        #expect(lines[6].hasSuffix("└ limit 1 h") && lines[6].count - "└ limit 1 h".count == mark, "\(lines[6])")
        #expect(lines[7] == "  Average 1 h a day, 30 min more than the week before.")
        #expect(lines[9] == "Top apps")
        #expect(lines[10].hasPrefix("  supertux2 ") && lines[10].hasSuffix(" 1 h 30 min") && lines[11].hasPrefix("  steam "), "\(lines[10...11])")
        #expect(lines[12] == "  In focus: supertux2 50 min.", "X11 foreground time, where the agent told it")
    }

    /// Seven sites over two days, for the top sites: `a.example` most, `g.example` least.
    static var sites: JSONObject {
        var o = week
        o["days"] = [day("2026-11-23", "mon", web: ["a.example": 3000, "b.example": 1200, "c.example": 600, "d.example": 300, "e.example": 200,
                                                     "f.example": 100, String(repeating: "long", count: 20) + ".example": 1500]),
                     day("2026-11-24", "tue", web: ["a.example": 600, "g.example": 50, "zero.example": 0])]
        return o
    }

    @Test("R2, B2: the top sites, biggest first, each with its bar and total, five of them then how many more and their time; with the top apps by selection and after the apps' charts by app, not by user",
          arguments: [(ReportGrouping.selection, true), (.app, true), (.user, false)])
    func topSites(grouping: ReportGrouping, shown: Bool) throws {
        let lines = Self.lines(Self.output().report(Self.sites, by: grouping))
        guard shown else {
            #expect(!lines.contains("Top sites") && !lines.contains { $0.contains("a.example") }, "a person's chart is their time in apps: \(lines)")
            return
        }
        let at = try #require(lines.firstIndex(of: "Top sites"), "\(lines)")
        let rows = Array(lines[(at + 1)...(at + 6)])
        let names = rows.map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(names[0] == "a.example" && names[1].hasPrefix("longlong") && names[1].hasSuffix("…") && names[2...] == ["b.example", "c.example", "d.example", "3"], "\(rows)")
        #expect(rows[0].hasSuffix(" 1 h") && rows[1].hasSuffix(" 25 min") && rows[4].hasSuffix(" 5 min"), "\(rows)")
        #expect(rows[0].contains(String(repeating: "█", count: 10)) && rows.prefix(5).allSatisfy { $0.count <= 50 }, "a bar each, in the width: \(rows)")
        #expect(rows[5] == "  3 more sites: 6 min.", "e, f and g: 350 s; zero.example had none")
        #expect(lines[(at + 7)...(at + 8)] == ["", "Blocked time"], "\(lines)")
    }

    @Test("R2, B2: a week with sites: the top sites come after the top apps and their focus time")
    func weekSites() {
        let lines = Self.lines(Self.output().report(Self.week))
        #expect(lines[13...16] == ["", "Top sites", lines[15], lines[16]])
        #expect(lines[15].hasPrefix("  youtube.com   ") && lines[15].hasSuffix(" 45 min") && lines[16].hasPrefix("  wikipedia.org ") && lines[16].hasSuffix(" 5 min"), "\(lines[15...16])")
        #expect(lines[17] == "", "no more sites: no line about them")
    }

    @Test("R2: --by app charts each app per day; --by user each person's time in apps on the machine's view")
    func grouping() {
        let apps = Self.lines(Self.output().report(Self.week, by: .app))
        #expect(apps[3] == "/usr/bin/steam" && apps.contains("/usr/games/supertux2") && !apps.contains("Top apps"), "\(apps)")
        var machine = Self.week
        machine["user"] = nil
        machine["days"] = [Self.day("2026-11-23", "mon", users: ["1000": 600, "1001": 5400]), Self.day("2026-11-24", "tue", users: ["1001": 60])]
        let users = Self.lines(Self.output().report(machine, by: .user))
        #expect(users[0] == "Report, Mon 23 Nov to Tue 24 Nov 2026 for the whole machine")
        #expect(users[3] == "mum" && users[4].hasSuffix(" 10 min") && users[5].hasPrefix("  Tue 24 ") && users[5].hasSuffix(" 0 min"), "\(users)")
        #expect(users[7] == "kid" && users[8].hasSuffix(" 1 h 30 min"), "\(users)")
    }

    @Test("R2, B2: --csv is one row per figure of each day, sites' time as kind web, RFC 4180 quoting for names with commas or quotes")
    func csv() {
        let text = Self.output().reportCSV(["days": [Self.day("2026-11-23", "mon", ["only:a.example,b.example": 3600, "say\"hi": 60], ["started": 1],
                                                         used: ["games": 120], foreground: ["/usr/bin/x": 30], web: ["youtube.com": 900, "a,b.example": 60],
                                                         limits: ["games": ["used": 120, "allowance": 3600]])]])
        #expect(text == """
            date,kind,name,value
            2026-11-23,blocked,"only:a.example,b.example",3600
            2026-11-23,blocked,"say""hi",60
            2026-11-23,used,games,120
            2026-11-23,foreground,/usr/bin/x,30
            2026-11-23,web,"a,b.example",60
            2026-11-23,web,youtube.com,900
            2026-11-23,count,started,1
            2026-11-23,limit,games,120
            2026-11-23,allowance,games,3600
            """)
    }

    @Test("R2: report --html FILE writes the page and says where; - prints it; a file it cannot write is an error that says what to do")
    func html() {
        let answer = Result<Response, ClientError>.success(.ok(Self.week))
        let h = Harness(FakeTransport([answer, answer, answer]))
        #expect(h.run(["report", "--week", "--html", "/tmp/w.html"]) == 0)
        #expect(h.out == "Wrote the report to /tmp/w.html; open it in a browser.\n")
        let page = h.written["/tmp/w.html"] ?? ""
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.contains("<svg") && !page.contains("<script"), "\(page.prefix(200))")
        #expect(h.transport?.sent.first == .report(ReportArguments(period: .week)))
        h.out = ""
        #expect(h.run(["report", "--week", "--html", "-"]) == 0)
        #expect(h.out == page, "the same page on stdout")
        h.writeProblem = "Read-only file system"
        #expect(h.run(["report", "--html", "/ro/w.html"]) == 1)
        #expect(h.err.contains("blockc: cannot write the report to /ro/w.html: Read-only file system; give --html a file in a directory you can write"))
    }
}
