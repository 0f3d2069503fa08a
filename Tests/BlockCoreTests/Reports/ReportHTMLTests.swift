import Foundation
import Testing
@testable import BlockCore

/// R2: the report as one self-contained HTML page (`ReportHTML`), read as markup. How it looks in
/// a real browser: Tests/BlockDaemonTests/Integration/ReportHTMLRenderTests.swift.
@Suite("R2: the HTML report")
struct ReportHTMLTests {
    static let dates = ["2026-11-23", "2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28", "2026-11-29"]
    static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let games: [Int64] = [0, 1800, 3600, 7200, 2700, 5400, 900]

    /// A week of `games` time, a 1 h limit on weekdays only (none at the weekend), some apps
    /// and sites, blocks and counts, and the week before.
    static func week(used: Bool = true, user: Int64? = 1001) -> JSONObject {
        let days: [JSON] = dates.indices.map { i in
            var d: JSONObject = ["date": .string(dates[i]), "weekday": .string(weekdays[i]),
                                 "blocked": ["only:school,editor": .int(Int64(i) * 600)],
                                 "apps": ["/usr/bin/steam": .int(games[i]), "/usr/games/tuxkart": .int(games[i] / 3)],
                                 "counts": ["started": 1, "stoppedEarly": i == 2 ? 1 : 0, "asked": 2, "granted": 1, "denied": 1]]
            if used {
                d["web"] = ["youtube.com": .int(games[i] / 2), "wikipedia.org": 600]
                d["used"] = ["games": .int(games[i])]
                var limit: JSONObject = ["used": .int(games[i]), "selections": ["games"]]
                if i < 5 { limit["allowance"] = 3600 }
                d["limits"] = ["screen": .object(limit)]
            }
            return .object(d)
        }
        var o: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-29", "days": .array(days),
                             "previous": ["from": "2026-11-16", "to": "2026-11-22", "blocked": ["only:school,editor": 0],
                                          "used": ["games": 36000]]]
        if let user { o["user"] = .int(user) }
        return o
    }

    static func page(_ o: JSONObject, title: String = "Screen time") -> String {
        ReportHTML.page(ReportReply(o), title: title, generated: "2026-11-29 18:04") { $0 == 1001 ? "kid" : nil }
    }

    /// Each `<rect …>` of the page with its attributes.
    static func rects(_ html: String) -> [[String: String]] {
        html.matches(of: /<rect [^>]*>/).map { tag in
            Dictionary(tag.output.matches(of: /\s([a-z][a-z-]*)="([^"]*)"/).map { (String($0.output.1), String($0.output.2)) },
                       uniquingKeysWith: { a, _ in a })
        }
    }

    static func bars(_ html: String, kind: String) -> [[String: String]] {
        rects(html).filter { $0["class"] == "bar" && $0["data-kind"] == kind }
    }

    static let pages: [(String, JSONObject)] = [
        ("a week", week()), ("the whole machine", week(user: nil)), ("an older answer without used", week(used: false)),
        ("no days", ["schema": 1, "from": "2026-11-29", "to": "2026-11-29", "days": []]),
        ("hostile names", ["schema": 1, "days": [["date": "2026-11-23", "weekday": "mon",
                                                   "used": [#"<script src="https://x.example/a.js">"#: 60],
                                                   "apps": ["http://x.example/@import url(a)": 60],
                                                   "web": [#"<img src=x onerror="a()">.example"#: 60]]]]),
    ]

    @Test("R2, screen time: first a chart per person at the screen, by day (their name on the whole machine's page, not on their own); none from a daemon that did not count it")
    func screenTime() {
        var machine = Self.week(user: nil)
        var days = machine["days"]?.array ?? []
        for i in days.indices {
            guard case .object(var d) = days[i] else { continue }
            d["screen"] = ["1001": .int(Self.games[i] + 600), "1002": 1200]
            days[i] = .object(d)
        }
        machine["days"] = .array(days)
        let html = Self.page(machine)
        #expect(html.contains("<h2>Screen time — kid</h2>") && html.contains("<h2>Screen time — uid 1002</h2>"), "each person their own chart")
        #expect(html.range(of: "Screen time — kid")!.lowerBound < html.range(of: "Apps, total")!.lowerBound, "screen time first")
        let bars = Self.bars(html, kind: "screen")
        #expect(bars.count == 14 && bars.allSatisfy { $0["fill"] == "#613583" }, "a bar a day for each: \(bars.count)")
        var own = machine
        own["user"] = 1001
        #expect(Self.page(own).contains("<h2>Screen time</h2>"), "one's own page says whose it is in its heading already")
        #expect(!Self.page(Self.week()).contains("Screen time</h2>"), "an older daemon's answer has no screen time card")
    }

    @Test("R2: the page is self-contained: no script, nothing fetched from anywhere",
          arguments: ["<script", "http://", "https://", "src=", "href=", "@import", "url(", "<link", "<img",
                      "<iframe", "<object", "<embed", "javascript:", " onload=", " onerror="])
    func selfContained(forbidden: String) {
        for (what, report) in Self.pages where what != "hostile names" {
            let html = Self.page(report).lowercased()
            #expect(!html.contains(forbidden), "\(what): the page has \(forbidden)")
        }
    }

    static let tags: Set<String> = ["html", "head", "meta", "title", "style", "body", "main", "header", "footer", "section",
                                    "h1", "h2", "h3", "p", "span", "table", "tr", "th", "td", "ul", "li", "svg", "rect", "text"]
    static let attributes: Set<String> = ["lang", "charset", "name", "content", "class", "id", "scope", "width", "height",
                                          "viewbox", "preserveaspectratio", "role", "aria-label", "x", "y", "fill", "shape-rendering", "text-anchor"]

    @Test("R2: whatever the names, the markup is only known elements and attributes, and the style fetches nothing",
          arguments: pages.map(\.0))
    func knownMarkup(what: String) throws {
        let html = Self.page(try #require(Self.pages.first { $0.0 == what }?.1))
        for tag in html.matches(of: /<\/?([A-Za-z][A-Za-z0-9]*)((?:\s+[^\s="'>\/]+(?:="[^"]*")?)*)\s*\/?>/) {
            #expect(Self.tags.contains(tag.output.1.lowercased()), "\(what): <\(tag.output.1)>")
            for attribute in String(tag.output.2).replacing(/="[^"]*"/, with: "").matches(of: /\s+([^\s="'>\/]+)/) {
                let name = attribute.output.1.lowercased()
                #expect(Self.attributes.contains(name) || name.hasPrefix("data-"), "\(what): \(name)= in <\(tag.output.1)>")
            }
        }
        #expect(html.filter { $0 == "<" }.count == html.matches(of: /<\/?[A-Za-z]|<!DOCTYPE/).count, "\(what): every < starts a known tag")
        let style = try #require(html.firstMatch(of: /<style>([^<]*)<\/style>/)).output.1.lowercased()
        #expect(!style.contains("url(") && !style.contains("@import") && !style.contains("http"))
    }

    @Test("R2: a page is one HTML5 document with its style inline", arguments: pages.map(\.0))
    func document(what: String) throws {
        let html = Self.page(try #require(Self.pages.first { $0.0 == what }?.1))
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(html.contains("<meta charset=\"utf-8\">") && html.contains("<style>") && html.contains("prefers-color-scheme: dark"))
        #expect(html.components(separatedBy: "<svg").count == html.components(separatedBy: "</svg>").count)
        #expect(html.hasSuffix("</html>\n"))
    }

    @Test("R2: HTML escaping", arguments: [
        ("plain", "plain"), ("a<b>c", "a&lt;b&gt;c"), ("Tom & Jerry", "Tom &amp; Jerry"), (#"say "hi""#, "say &quot;hi&quot;"),
        ("it's", "it&#39;s"), ("bell\u{7}\u{1B}[31m", "bell[31m"), ("tab\tand\nline", "tab\tand\nline"), ("é 日本", "é 日本"),
    ] as [(String, String)])
    func escape(raw: String, expected: String) {
        #expect(ReportHTML.escape(raw) == expected)
    }

    @Test("R2, B2: every name from the answer is escaped: selections, apps, sites, limits, people, the title")
    func escaping() {
        let evil = #"<b>&"x'"#
        var o = Self.week(user: nil)
        o["days"] = [["date": "2026-11-23", "weekday": "mon", "used": [evil: 600],
                      "apps": ["/opt/<x>/a&b": 600], "blocked": ["only:" + evil: 60], "web": [.init(stringLiteral: evil + ".example"): 60],
                      "users": ["1001": 600, "1002": 300],
                      "limits": [evil: ["allowance": 3600, "selections": [.string(evil)]]]]]
        let html = ReportHTML.page(ReportReply(o), title: "A & B <c>") { $0 == 1001 ? "<kid>" : nil }
        #expect(!html.contains("<b>") && !html.contains("<x>") && !html.contains("<kid>") && !html.contains("<c>"))
        #expect(html.contains("&lt;b&gt;&amp;&quot;x&#39;"), "the selection")
        #expect(html.contains("data-name=\"&lt;b&gt;&amp;&quot;x&#39;\""), "the selection in an attribute")
        #expect(html.contains("/opt/&lt;x&gt;/") && html.contains("a&amp;b"), "the app")
        #expect(html.contains("data-kind=\"site\" data-name=\"&lt;b&gt;&amp;&quot;x&#39;.example\""), "the site")
        #expect(html.contains("data-limit=\"&lt;b&gt;&amp;&quot;x&#39;\""), "the limit")
        #expect(html.contains("&lt;kid&gt;") && html.contains("uid 1002"), "people, by name or uid")
        #expect(html.contains("<title>A &amp; B &lt;c&gt;</title>") && html.contains("<h1>A &amp; B &lt;c&gt;</h1>"))
        #expect(html.contains("everything but &lt;b&gt;"), "an allow-only selection as the text view names it")
    }

    @Test("R2: one bar per day for the selection's app time, in order, heights in proportion, each day's figure")
    func weekBars() throws {
        let html = Self.page(Self.week())
        let bars = Self.bars(html, kind: "used")
        #expect(bars.map { $0["data-day"] } == Self.dates.map(Optional.some), "one bar per day, in order")
        #expect(bars.map { $0["data-seconds"] } == Self.games.map { String($0) }, "each day's seconds")
        #expect(bars.map { $0["id"] } == (0..<7).map { "used-0-d\($0)" })
        let heights = bars.compactMap { $0["height"].flatMap(Int.init) }
        let perHour = try #require(heights.max()) / 2, bottoms = Set(bars.map { Int($0["y"]!)! + Int($0["height"]!)! })
        #expect(heights[0] == 0, "an empty day's bar has no height")
        for (h, s) in zip(heights, Self.games) { #expect(abs(Double(h) - Double(s) / 3600 * Double(perHour)) <= 1, "\(heights)") }
        #expect(bottoms.count == 1, "all bars stand on the same line")
        #expect(html.contains(">2 h</text>") && html.contains(">1 h 30 min</text>") && html.contains(">15 min</text>"))
        #expect(Self.bars(html, kind: "blocked").count == 7, "blocked time: a bar per day too")
    }

    @Test("R2: any period from 1 to 366 days: a bar per day inside the chart, left to right; figures over bars and every day's label only while there is room",
          arguments: [(1, true), (7, true), (9, true), (14, false), (30, false), (366, false)])
    func periods(count: Int, figures: Bool) throws {
        let start = CivilDate(year: 2026, month: 1, day: 1)
        let days: [JSON] = (0..<count).map { i in
            let d = start.adding(days: i)
            return ["date": .string(d.description), "weekday": .string(d.weekday.description), "used": ["games": .int(Int64(i % 5) * 900 + 960)]]
        }
        let html = Self.page(["schema": 1, "days": .array(days)])
        let bars = Self.bars(html, kind: "used")
        #expect(bars.count == count)
        let xs = bars.compactMap { $0["x"].flatMap(Int.init) }, widths = bars.compactMap { $0["width"].flatMap(Int.init) }
        #expect(xs == xs.sorted() && Set(xs).count == count, "left to right, one place per day")
        #expect(xs.allSatisfy { $0 >= ReportHTML.WeekChart.left } && zip(xs, widths).allSatisfy { $0 + $1 <= ReportHTML.WeekChart.width - 8 })
        #expect(widths.allSatisfy { $0 >= 1 })
        #expect(html.contains("class=\"fig\"") == figures)
        let labels = html.matches(of: /<text class="day"/).count
        #expect(count <= 14 ? labels == count : labels <= 11 && labels >= 1, "\(labels) day labels")
    }

    @Test("R2: the limit line is drawn exactly on the days its allowance applies, at the allowance's height")
    func limitLine() throws {
        let html = Self.page(Self.week())
        let lines = Self.rects(html).filter { $0["class"] == "limit" }
        #expect(lines.map { $0["data-day"] } == Array(Self.dates.prefix(5)).map(Optional.some), "weekdays only")
        #expect(lines.allSatisfy { $0["data-limit"] == "screen" && $0["data-seconds"] == "3600" })
        let bars = Self.bars(html, kind: "used")
        let hour = try #require(bars.first { $0["data-seconds"] == "3600" })
        let top = Int(hour["y"]!)!
        #expect(lines.allSatisfy { Int($0["y"]!)! == top - 1 && $0["height"] == "2" }, "centred on the top of a 1 h bar")
        #expect(html.contains("Limit screen: 1 h a day where it applies"))

        var noLimit = Self.week()
        noLimit["days"] = .array((noLimit["days"]?.array ?? []).map { day in
            var d = day.object!
            d["limits"] = ["screen": ["used": 0, "selections": ["games"]], "other": ["allowance": 60, "selections": ["video"]]]
            return .object(d)
        })
        let none = Self.page(noLimit)
        #expect(!none.contains("class=\"limit\"") && !none.contains("Limit "), "no allowance, or another selection's: no line")
    }

    @Test("R2: a selection with less than 15 min on every day and no limit gets no near-empty chart: it is a row of one table of totals, biggest first, after the charts",
          arguments: [
              (used: ["games": [0, 1800, 0], "video": [60, 0, 120], "news": [300, 0, 0], "tiny": [20, 0, 0]], charts: ["games"], rows: ["news", "video", "tiny"]),
              (used: ["video": [60, 0, 120], "news": [300, 0, 0]], charts: [String](), rows: ["news", "video"]),
              (used: ["games": [900, 0, 0]], charts: ["games"], rows: [String]()),
          ])
    func smallSelections(used: [String: [Int64]], charts: [String], rows: [String]) throws {
        let days: [JSON] = (0..<3).map { i in
            let figures = JSONObject(uniqueKeysWithValues: used.map { ($0.key, JSON.int($0.value[i])) })
            return ["date": .string(Self.dates[i]), "weekday": .string(Self.weekdays[i]), "used": .object(figures), "blocked": .object(figures)]
        }
        let html = Self.page(["schema": 1, "from": "2026-11-23", "to": "2026-11-25", "days": .array(days)])
        for kind in ["used", "blocked"] {
            let weekCharts = html.matches(of: try Regex(#"<svg class="week" id="\#(kind)-\d+" data-kind="\#(kind)" data-name="([^"]*)""#, as: (Substring, Substring).self))
                .map { String($0.output.1) }
            #expect(weekCharts == charts, "\(kind): a chart only where a day reaches 15 min")
            let tableRows = Self.bars(html, kind: kind).filter { $0["data-day"] == nil }
            #expect(tableRows.map { $0["data-name"] ?? "" } == rows, "\(kind): the rest, biggest first")
            let ids = Self.bars(html, kind: kind).compactMap { $0["id"] } + weekCharts.indices.map { "\(kind)-\($0)" }
            #expect(Set(ids).count == ids.count, "element ids stay unique: \(ids)")
        }
        #expect(html.contains("Less than 15 min on every day; totals over 3 days:") == !rows.isEmpty)
        #expect(html.contains("Other selections") == (!rows.isEmpty && !charts.isEmpty))
        #expect(!html.contains("<1 min"), "a figure under a minute is text, escaped: '&lt;1 min'")
        #expect(html.contains("&lt;1 min") == rows.contains("tiny"))
    }

    @Test("R2: an older answer without used: a chart per app instead, no selection charts")
    func olderAnswer() {
        let html = Self.page(Self.week(used: false))
        #expect(Self.bars(html, kind: "used").isEmpty)
        let weekCharts = html.matches(of: /<svg class="week" id="app-\d+" data-kind="app" data-name="([^"]*)"/).map { String($0.output.1) }
        #expect(weekCharts == ["/usr/bin/steam", "/usr/games/tuxkart"])
        #expect(Self.bars(html, kind: "app").filter { $0["data-day"] != nil }.count == 14)
    }

    @Test("R2: another version's answer with figures of the wrong type still renders: each such figure is 0, a map that is not one is empty")
    func wrongTypes() throws {
        let o: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001, "period": "fortnight",
                             "days": [1, ["date": "2026-11-23", "weekday": "mon", "used": ["games": "lots", "video": 1200],
                                          "apps": ["/usr/bin/steam": "7"], "blocked": [1, 2], "counts": ["asked": "2", "granted": 1],
                                          "shieldHits": ["games": "3"], "limits": ["games": ["allowance": "3600", "selections": ["games"]], "x": 5]],
                                      ["date": 20261124, "weekday": "tue", "used": "none", "counts": [1]]],
                             "previous": ["used": ["video": "x"], "blocked": 4]]
        let html = Self.page(o)
        #expect(html.hasSuffix("</html>\n"))
        let used = Self.bars(html, kind: "used")
        #expect(used.map { $0["data-name"] } == ["video", "video"] && used.map { $0["data-seconds"] } == ["1200", "0"],
                "games' figure is 0 (no chart), the day without a map has none: \(used)")
        #expect(used.map { $0["data-day"] } == ["2026-11-23", ""], "a date of the wrong type is empty")
        #expect(html.contains("than the 2 days before"), "previous.used read with video's figure as 0")
        #expect(!html.contains("class=\"limit\""), "an allowance of the wrong type draws no line")
        #expect(html.contains("<li data-count=\"asked\"><span class=\"n\">0</span>") && html.contains("<li data-count=\"granted\"><span class=\"n\">1</span>"))
        #expect(!html.contains("data-count=\"shieldHits\"") && html.contains("Nothing was blocked."))
    }

    @Test("R2: apps biggest first with their totals over the period; focus time when the answer has it")
    func apps() {
        var o = Self.week()
        o["days"] = .array((o["days"]?.array ?? []).map { day in
            var d = day.object!
            d["foreground"] = ["/usr/bin/steam": 600]
            return .object(d)
        })
        let html = Self.page(o)
        let apps = Self.bars(html, kind: "app")
        #expect(apps.map { $0["data-name"] } == ["/usr/bin/steam", "/usr/games/tuxkart"])
        #expect(apps.map { $0["data-seconds"] } == ["21600", "7200"])
        #expect(apps.map { $0["width"] } == ["260", "87"], "scaled to the biggest")
        #expect(html.contains("<span class=\"dir\">/usr/bin/</span><span class=\"name\">steam</span>"))
        #expect(html.contains("1 h 10 min in focus") && !html.contains(">0 min in focus"), "none for an app never in focus")
        #expect(!Self.page(Self.week()).contains("in focus"), "no focus figures from a daemon without them")
    }

    static func sitesPage(_ web: [Int64]) -> String {
        var o = week()
        o["days"] = [["date": "2026-11-23", "weekday": "mon", "used": ["games": 600], "apps": ["/usr/bin/steam": 600],
                      "web": .object(JSONObject(uniqueKeysWithValues: web.enumerated().map { ("s\($0.offset).example", JSON.int($0.element)) }))]]
        return page(o)
    }

    @Test("R2, B2: sites biggest first with their totals over the period, in a card of their own after the apps, bars in the apps' style and scaled to the biggest; past ten, how many more and their time",
          arguments: [
              ([1800, 600, 3600] as [Int64], ["s2", "s0", "s1"], ["260", "130", "43"], nil as String?),
              ([0, 60], ["s1"], ["260"], nil),
              ((1...12).map { Int64($0) * 60 }, (3...12).reversed().map { "s\($0 - 1)" }, nil, "2 more sites: 3 min."),
              ([], [], [], nil),
          ] as [([Int64], [String], [String]?, String?)])
    func sites(web: [Int64], order: [String], widths: [String]?, more: String?) throws {
        let html = Self.sitesPage(web)
        let bars = Self.bars(html, kind: "site")
        #expect(bars.map { $0["data-name"] } == order.map { $0 + ".example" })
        if let widths { #expect(bars.map { $0["width"] } == widths, "scaled to the biggest") }
        #expect(bars.allSatisfy { $0["fill"] == ReportHTML.Kind.site.colour && $0["height"] == "14" }, "the apps' shape in its own colour")
        let apps = try #require(html.range(of: "<h2>Apps, total over 1 days</h2>"))
        if order.isEmpty {
            #expect(!html.contains("<h2>Sites"), "no sites, no card")
        } else {
            let sites = try #require(html.range(of: "<h2>Sites, total over 1 days</h2>"))
            #expect(apps.upperBound < sites.lowerBound, "after the apps")
        }
        #expect(html.contains("more site") == (more != nil))
        if let more { #expect(html.contains("<p class=\"note\">\(more)</p>")) }
    }

    @Test("R2: heading, averages against the week before as the terminal says them, counts")
    func summaryAndCounts() {
        let html = Self.page(Self.week())
        #expect(html.contains("<h1>Screen time</h1>\n<p class=\"period\">Mon 23 Nov to Sun 29 Nov 2026, for kid</p>"))
        let used = ReportChart.summary(total: 21600, days: 7, previous: 36000, period: "week")
        #expect(html.contains("<p class=\"summary\">\(used)</p>"), "\(used)")
        #expect(html.contains("<p class=\"total\">6 h</p>"))
        let blocked = ReportChart.summary(total: 12600, days: 7, previous: 0, period: "week")
        #expect(html.contains("<p class=\"summary\">\(blocked)</p>"))
        for (key, n) in [("started", 7), ("stoppedEarly", 1), ("asked", 14), ("granted", 7), ("denied", 7)] {
            #expect(html.contains("<li data-count=\"\(key)\"><span class=\"n\">\(n)</span>"), "\(key)")
        }
        #expect(html.contains("Generated 2026-11-29 18:04 by blockd."))
        #expect(Self.page(Self.week(user: nil)).contains(", for the whole machine</p>"))
    }

    @Test("R2: the whole machine's view lists each person's time, biggest first")
    func people() {
        var o = Self.week(user: nil)
        o["days"] = [["date": "2026-11-23", "weekday": "mon", "users": ["1001": 600, "1002": 1200]]]
        let bars = Self.bars(Self.page(o), kind: "user")
        #expect(bars.map { $0["data-name"] } == ["1002", "1001"])
        #expect(!Self.page(Self.week()).contains("<h2>People</h2>"), "one person's view has no people")
    }

    @Test("R2, B2: an empty report says so: no time in apps or on sites; only apps from an older daemon, which counts no sites", arguments: [
        ([], "No days in the report."),
        ([["date": "2026-11-29", "weekday": "sun"]], "Nothing was blocked."),
        ([["date": "2026-11-29", "weekday": "sun"]], "<p class=\"note\">No time in apps was counted.</p>"),
        ([["date": "2026-11-29", "weekday": "sun", "used": [:]]], "<p class=\"note\">No time in apps or on sites was counted.</p>"),
        ([["date": "2026-11-29", "weekday": "sun", "used": [:], "web": [:]]], "<h2>Time in apps and on sites</h2>"),
    ] as [([JSON], String)])
    func empty(days: [JSON], says: String) {
        let html = Self.page(["schema": 1, "from": "2026-11-29", "to": "2026-11-29", "days": .array(days)])
        #expect(html.contains(says))
        #expect(!html.contains("class=\"bar\""))
    }

    @Test("R2, B2: a day with time on sites but none in a selection's apps or sites says there was no time in apps, and the sites are below",
          arguments: [
              ["date": "2026-11-29", "weekday": "sun", "used": [:], "web": ["youtube.com": 600]],
              ["date": "2026-11-29", "weekday": "sun", "web": ["youtube.com": 600]],
          ] as [JSON])
    func sitesOnly(day: JSON) {
        let says = "No time in apps was counted; the time on sites is below."
        let html = Self.page(["schema": 1, "from": "2026-11-29", "to": "2026-11-29", "days": [day]])
        #expect(html.contains("<p class=\"note\">\(says)</p>") && !html.contains("on sites was counted"), "\(html)")
        #expect(Self.bars(html, kind: "site").map { $0["data-name"] } == ["youtube.com"])
    }
}
