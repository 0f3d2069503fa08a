import BlockCore
import Foundation
import Testing
@testable import BlockClient

/// R2: `blockc report` as people read it.
@Suite("R2: the report's text")
struct ReportOutputTests {
    static func day(_ date: String, _ weekday: String, _ blocked: JSON = [:], _ counts: JSON = [:]) -> JSON {
        ["date": .string(date), "weekday": .string(weekday), "blocked": blocked, "counts": counts]
    }

    @Test("R2: a bar per day for each selection, the average against the period before, then the counts; no colour, the given width")
    func text() {
        var out = Output(now: Date(timeIntervalSince1970: 0), clock: .utc, color: false)
        out.columns = 50
        out.userName = { $0 == 1001 ? "kid" : nil }
        let o: JSONObject = ["schema": 1, "from": "2026-11-23", "to": "2026-11-24", "user": 1001,
                             "days": [Self.day("2026-11-23", "mon", ["only:school": 3600], ["started": 1]),
                                      Self.day("2026-11-24", "tue", ["only:school": 1800], ["asked": 2, "granted": 1])],
                             "previous": ["from": "2026-11-21", "to": "2026-11-22", "blocked": ["only:school": 7200]]]
        let lines = out.report(o).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "Blocked time, Mon 23 to Tue 24 for kid")
        #expect(lines[2] == "everything but school")
        #expect(lines[3].hasPrefix("  Mon 23 ████") && lines[3].hasSuffix(" 1 h"), "\(lines[3])")
        #expect(lines[4].hasSuffix(" 30 min") && lines[3].count <= 50 && lines[4].count <= 50, "the bars fit the width: \(lines)")
        #expect(lines[5] == "  Average 45 min a day, 15 min less than the 2 days before.")
        #expect(lines.suffix(2) == ["Blocks started: 1, stopped early: 0.", "More time asked: 2, granted: 1, denied: 0."])
    }

    @Test("R2: nothing blocked says so; the machine's report says whose it is")
    func empty() {
        let out = Output(now: Date(timeIntervalSince1970: 0), clock: .utc, color: false)
        let text = out.report(["schema": 1, "from": "2026-11-29", "to": "2026-11-29", "days": [Self.day("2026-11-29", "sun")]])
        #expect(text.hasPrefix("Blocked time, Sun 29 to Sun 29 for the whole machine\nNothing was blocked."))
    }

    @Test("R2: --csv is one row per figure of each day, RFC 4180 quoting for names with commas or quotes")
    func csv() {
        let out = Output(now: Date(timeIntervalSince1970: 0), clock: .utc, color: false)
        let text = out.reportCSV(["days": [Self.day("2026-11-23", "mon", ["only:a.example,b.example": 3600, "say\"hi": 60], ["started": 1])]])
        #expect(text == """
            date,kind,name,value
            2026-11-23,blocked,"only:a.example,b.example",3600
            2026-11-23,blocked,"say""hi",60
            2026-11-23,count,started,1
            """)
    }
}
