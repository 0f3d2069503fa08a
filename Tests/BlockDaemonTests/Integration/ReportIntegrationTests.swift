import BlockCore
import Foundation
import Testing
import BlockTestSupport

/// R1, R2 through the real binaries: a block's time in `blockc report`, kept across a restart.
@Suite("R2: blockc report through blockc and blockd")
struct ReportIntegrationTests {
    @Test("R2: a block stopped early shows in report --json and as a row of the short ones' totals; --month is headed with its month; the ledger is still there after a restart")
    func blockShows() throws {
        let s = Sandbox()
        try s.start()
        #expect(try s.blockc(["start", "--for", "10m", "--name", "focus", "youtube"]).status == 0)
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try s.blockc(["stop", "focus"]).status == 0)
        let json = try s.blockc(["report", "--last", "1", "--json"])
        #expect(json.status == 0, "\(json.err)")
        let o = try JSON.parse(json.out)
        let today = o["days"]?.array?.last
        #expect(o["schema"] == 1 && (today?["blocked"]?["youtube"]?.int ?? 0) >= 1, "\(json.out)")
        #expect(today?["counts"]?["started"] == 1 && today?["counts"]?["stoppedEarly"] == 1, "\(json.out)")
        let text = try s.blockc(["report", "--last", "1"], environment: ["LANG": "C.UTF-8", "COLUMNS": "60"])
        #expect(text.status == 0 && text.out.contains("\nLess than 15 min on every day; totals:\n  youtube ") && text.out.contains("Blocks started: 1, stopped early: 1."), "\(text.out)")
        let month = try JSON.parse(try s.blockc(["report", "--month", "--json"]).out)
        let first = try CivilDate.parse(month["from"]?.string ?? ""), last = try CivilDate.parse(month["to"]?.string ?? "")
        let monthText = try s.blockc(["report", "--month"], environment: ["LANG": "C.UTF-8", "COLUMNS": "60"])
        #expect(first.day == 1 && monthText.out.hasPrefix("Report, \(ReportChart.period(first, last)) for "), "the month named: \(monthText.out)")
        #expect(monthText.out.split(separator: "\n").allSatisfy { $0.count <= 60 }, "\(monthText.out)")
        s.stop()
        try s.start()
        let again = try JSON.parse(try s.blockc(["report", "--last", "1", "--json"]).out)
        #expect(again["days"]?.array?.last?["counts"]?["started"] == 1, "the ledger is in the state file")
        let bad = try s.blockc(["report", "--last", "0"])
        #expect(bad.status != 0 && bad.err.contains("--last takes a number of days from 1 to 366"), "\(bad.err)")
    }

    @Test("R2, B2: a site a browser's host reports shows in report --json's web, as a top site with its bar in the text, as a web row in --csv, and as a Sites bar in --html")
    func siteShows() throws {
        let s = Sandbox()
        try s.start()
        let host = try RawClient(path: s.socket)
        #expect(try host.request(#"web {"site":"www.youtube.com"}"#).hasPrefix("OK "))
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try host.request("web {}").hasPrefix("OK "), "the person went idle")
        let json = try s.blockc(["report", "--last", "1", "--json"])
        let seconds = (try JSON.parse(json.out))["days"]?.array?.last?["web"]?["youtube.com"]?.int ?? 0
        #expect((1...3).contains(seconds), "\(json.out)")
        let text = try s.blockc(["report", "--last", "1"], environment: ["LANG": "C.UTF-8", "COLUMNS": "60"])
        let lines = text.out.split(separator: "\n").map(String.init)
        let at = try #require(lines.firstIndex(of: "Top sites"), "\(text.out)")
        // A few seconds are a sliver on the chart's least scale (15 min), not a full-width bar.
        #expect(lines[at + 1].hasPrefix("  youtube.com ") && !lines[at + 1].contains("█") && lines[at + 1].hasSuffix(" <1 min") && lines[at + 1].count <= 60, "\(text.out)")
        let csv = try s.blockc(["report", "--last", "1", "--csv"])
        #expect(csv.out.split(separator: "\n").contains { $0.hasSuffix(",web,youtube.com,\(seconds)") }, "\(csv.out)")
        let html = try s.blockc(["report", "--last", "1", "--html", "-"])
        #expect(html.out.contains(#"data-kind="site" data-name="youtube.com" data-seconds="\#(seconds)""#), "\(html.out.suffix(2000))")
    }
}
