import Testing
@testable import BlockCore

/// R2: the terminal chart of a report.
@Suite("R2: report bars")
struct ReportChartTests {
    @Test("R2: a bar is its share of the width to the nearest eighth of a cell; anything above nothing shows",
          arguments: [
              (0.0, 10, ""), (100, 10, "██████████"), (50, 10, "█████"), (55, 10, "█████▌"), (51.25, 10, "█████▏"),
              (0.1, 10, "▏"), (200, 10, "██████████"), (98.5, 10, "█████████▉"),
          ] as [(Double, Int, String)])
    func bar(value: Double, width: Int, expected: String) {
        #expect(ReportChart.bar(value, scale: 100, width: width) == expected)
    }

    @Test("R2: without UTF-8 a bar is # to the nearest cell")
    func ascii() {
        #expect(ReportChart.bar(55, scale: 100, width: 10, ascii: true) == "######")
        #expect(ReportChart.bar(1, scale: 100, width: 10, ascii: true) == "#")
    }

    @Test("R2: lines fit the columns given; the limit is a │ in every row and named under them")
    func lines() {
        let rows = [ReportChart.Row("Mon 23", 5400), ReportChart.Row("Tue 24", 1800), ReportChart.Row("Wed 25", 0)]
        let out = ReportChart.lines(rows, limit: 3600, columns: 40)
        #expect(out.count == 4)
        #expect(out.allSatisfy { $0.count <= 40 }, "\(out)")
        #expect(out[0] == "Mon 23 " + String(repeating: "█", count: 14) + "│" + String(repeating: "█", count: 6) + " 1 h 30 min", "the bar past the limit, the line over it: \(out[0])")
        let mark = out[1].firstIndex(of: "│").map { out[1].distance(from: out[1].startIndex, to: $0) }
        #expect(mark != nil && out[0].firstIndex(of: "│").map { out[0].distance(from: out[0].startIndex, to: $0) } == mark, "the line at the same column: \(out)")
        #expect(out[3].hasSuffix("└ limit 1 h") && out[3].firstIndex(of: "└").map { out[3].distance(from: out[3].startIndex, to: $0) } == mark)
        #expect(out[2].hasSuffix(" 0 min"))
    }

    static let month = (1...30).map { ReportChart.Row("Day \($0 < 10 ? "0" : "")\($0)", $0 >= 27 ? Double($0 - 26) * 1500 : 0) }

    @Test("R2: whatever the rows, every line fits the columns, no bar is wider than its cells or below nothing, and a limit of nothing or less is not drawn",
          arguments: [
              ("a month, limit drawn", month, 3600 as Double?, 38),
              ("a site's long name", [ReportChart.Row(String(repeating: "a", count: 60) + ".example", 900), ReportChart.Row("b.example", 60)], nil, 78),
              ("an app's long name, narrow", [ReportChart.Row(String(repeating: "x", count: 40), 86400)], 3600, 38),
              ("seconds below nothing", [ReportChart.Row("Mon 23", -600), ReportChart.Row("Tue 24", 1200)], nil, 38),
              ("a limit below nothing", [ReportChart.Row("Mon 23", 600)], -60, 38),
              ("a limit of nothing, no time", [ReportChart.Row("Mon 23", 0)], 0, 38),
              ("a limit far above the bars", [ReportChart.Row("Mon 23", 60)], 86400, 38),
          ] as [(String, [ReportChart.Row], Double?, Int)])
    func fits(what: String, rows: [ReportChart.Row], limit: Double?, columns: Int) {
        for ascii in [false, true] {
            let out = ReportChart.lines(rows, limit: limit, columns: columns, ascii: ascii)
            #expect(out.allSatisfy { $0.count <= columns }, "\(what): \(out)")
            #expect(!out.contains { $0.contains("-") }, "\(what): nothing below nothing: \(out)")
            let bars = out.prefix(rows.count).map { line in line.filter { "█▉▊▋▌▍▎▏#".contains($0) }.count }
            #expect(bars.allSatisfy { $0 <= columns - 3 - "0 min".count }, "\(what): \(bars)")
            #expect(out.count == rows.count + ((limit ?? 0) > 0 ? 1 : 0), "\(what): the limit's line only for a limit above nothing: \(out)")
        }
        if what == "a site's long name" {
            let out = ReportChart.lines(rows, columns: columns)
            #expect(out[0].hasPrefix("aaaa") && out[0].contains("… ") && out[0].hasSuffix(" 15 min") && out[1].hasPrefix("b.example "), "cut, not dropped: \(out)")
        }
        if what == "a limit far above the bars" {
            let out = ReportChart.lines(rows, limit: limit, columns: columns)
            let column = { (line: String, c: Character) in line.firstIndex(of: c).map { line.distance(from: line.startIndex, to: $0) } }
            #expect(out[1].hasSuffix("limit 24 h ┘") && column(out[1], "┘") == column(out[0], "│"), "named to the left of its line: \(out)")
        }
    }

    @Test("R2: a chart's full width stands for at least 15 minutes: a day of seconds is a sliver, not a full-width bar labelled <1 min")
    func leastScale() {
        let small = ReportChart.lines([ReportChart.Row("Mon", 20), ReportChart.Row("Tue", 10)], columns: 40)
        #expect(small == ["Mon ▋                            <1 min", "Tue ▎                            <1 min"], "under one cell each: \(small)")
        let quarter = ReportChart.lines([ReportChart.Row("Mon", 900)], columns: 40)
        #expect(quarter == ["Mon " + String(repeating: "█", count: 28) + " 15 min"], "15 minutes fills the width: \(quarter)")
    }

    @Test("R2: figures to the nearest minute; some time that rounds to none is <1 min", arguments: [(0.0, "0 min"), (-600, "0 min"), (20, "<1 min"), (59, "1 min"), (2400, "40 min"), (3600, "1 h"), (5100, "1 h 25 min")] as [(Double, String)])
    func figure(seconds: Double, expected: String) {
        #expect(ReportChart.figure(seconds) == expected)
    }

    @Test("R2: the summary says the daily average and the change against the period before",
          arguments: [
              (7 * 4440.0, 7 * 5160.0 as Double?, "Average 1 h 14 min a day, 12 min less than the week before."),
              (7 * 4440.0, 7 * 4430.0, "Average 1 h 14 min a day, about the same as the week before."),
              (7 * 4440.0, 0, "Average 1 h 14 min a day, 1 h 14 min more than the week before."),
              (7 * 4440.0, nil, "Average 1 h 14 min a day."),
          ] as [(Double, Double?, String)])
    func summary(total: Double, previous: Double?, expected: String) {
        #expect(ReportChart.summary(total: total, days: 7, previous: previous, period: "week") == expected)
    }
}
