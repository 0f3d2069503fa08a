import Foundation
import Testing
@testable import BlockCore

/// R2: the `report` request and the answer built from the ledger.
@Suite("R2: the report request and its answer")
struct ReportTests {
    let tokyo = zone("Asia/Tokyo")

    @Test("R2: report's arguments on the wire: days 1 to 366, a real date, one view; each mistake says what is accepted",
          arguments: [
              (#"report"#, nil),
              (#"report {"days":14,"to":"2026-11-29","user":"kid"}"#, nil),
              (#"report {"days":0}"#, "report: days must be 1 to 366, not 0"),
              (#"report {"to":"2026-02-30"}"#, "'2026-02-30' is not a day of the calendar; write it as YYYY-MM-DD, such as 2026-11-29"),
              (#"report {"to":"29.11.2026"}"#, "'29.11.2026' is not a date; write it as YYYY-MM-DD, such as 2026-11-29"),
              (#"report {"user":"kid","allUsers":true}"#, "status: give 'user' or 'allUsers', not both"),
          ] as [(String, String?)])
    func wire(line: String, expected: String?) throws {
        do throws(CoreError) {
            let request = try Request.parse(line)
            #expect(expected == nil)
            #expect(try Request.parse(request.line) == request, "the line a client sends parses back to the same request")
        } catch {
            #expect(error.message == expected)
        }
    }

    @Test("R2: the answer: each day's blocked seconds and counts for the view, and the period before when the ledger has it")
    func answer() throws {
        var h = UsageHistory()
        h.blocked("youtube", from: [], to: [UsageHistory.everyone], at: at("2026-11-20T10:00:00+09:00"), clock: tokyo)
        h.blocked("youtube", from: [UsageHistory.everyone], to: [], at: at("2026-11-20T11:00:00+09:00"), clock: tokyo)
        h.blocked("games", from: [], to: ["1001"], at: at("2026-11-28T20:00:00+09:00"), clock: tokyo)
        h.blocked("games", from: ["1001"], to: [], at: at("2026-11-28T21:30:00+09:00"), clock: tokyo)
        h.blocked("youtube", from: [], to: [UsageHistory.everyone], at: at("2026-11-29T09:00:00+09:00"), clock: tokyo)
        h.count(.asked, user: "1001", at: at("2026-11-28T20:10:00+09:00"), clock: tokyo)
        h.count(.started, user: "0", at: at("2026-11-28T20:00:00+09:00"), clock: tokyo)
        let now = at("2026-11-29T09:30:00+09:00")
        let to = CivilDate(year: 2026, month: 11, day: 29)
        let kid = h.report(from: to.adding(days: -6), to: to, user: "1001", at: now, clock: tokyo)
        #expect(kid["schema"] == 1 && kid["from"] == "2026-11-23" && kid["to"] == "2026-11-29" && kid["user"] == 1001)
        let days = try #require(kid["days"]?.array)
        #expect(days.count == 7 && days[0]["weekday"] == "mon")
        #expect(days[5]["blocked"] == ["games": 5400] && days[5]["counts"] == ["asked": 1], "kid's own count only")
        #expect(days[6]["blocked"] == ["youtube": 1800], "a block for everyone counts for kid, up to now")
        #expect(kid["previous"] == ["from": "2026-11-16", "to": "2026-11-22", "blocked": ["youtube": 3600]])
        let machine = h.report(from: to.adding(days: -6), to: to, user: nil, at: now, clock: tokyo)
        #expect(machine["user"] == nil)
        #expect(machine["days"]?.array?[5]["blocked"] == [:] && machine["days"]?.array?[5]["counts"] == ["asked": 1, "started": 1],
                "the machine: only blocks for everyone; counts of every user")
        let first = h.report(from: CivilDate(year: 2026, month: 11, day: 14), to: CivilDate(year: 2026, month: 11, day: 20), user: nil, at: now, clock: tokyo)
        #expect(first["previous"] == nil, "no day of the period before in the ledger")
    }
}
