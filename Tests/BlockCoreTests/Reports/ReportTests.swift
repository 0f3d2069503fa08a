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
              (#"report {"period":"week","to":"2026-11-25"}"#, nil),
              (#"report {"period":"month"}"#, nil),
              (#"report {"period":"year"}"#, "report: 'period' must be \"week\" or \"month\""),
              (#"report {"period":"week","days":7}"#, "report: give days or period, not both"),
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
        let kid = h.report(from: to.adding(days: -6), to: to, user: "1001", at: now, clock: tokyo, shieldHits: ["2026-11-28": ["games": 2]]).json
        #expect(kid["schema"] == 1 && kid["from"] == "2026-11-23" && kid["to"] == "2026-11-29" && kid["user"] == 1001)
        let days = try #require(kid["days"]?.array)
        #expect(days.count == 7 && days[0]["weekday"] == "mon")
        #expect(days[5]["blocked"] == ["games": 5400] && days[5]["counts"] == ["asked": 1], "kid's own count only")
        #expect(days[5]["shieldHits"] == ["games": 2] && days[4]["shieldHits"] == [:], "the view's hits, by day")
        #expect(days[6]["blocked"] == ["youtube": 1800], "a block for everyone counts for kid, up to now")
        #expect(kid["previous"] == ["from": "2026-11-16", "to": "2026-11-22", "blocked": ["youtube": 3600], "used": [:]])
        let machine = h.report(from: to.adding(days: -6), to: to, user: nil, at: now, clock: tokyo).json
        #expect(machine["user"] == nil)
        #expect(machine["days"]?.array?[5]["blocked"] == [:] && machine["days"]?.array?[5]["counts"] == ["asked": 1, "started": 1],
                "the machine: only blocks for everyone; counts of every user")
        let first = h.report(from: CivilDate(year: 2026, month: 11, day: 14), to: CivilDate(year: 2026, month: 11, day: 20), user: nil, at: now, clock: tokyo).json
        #expect(first["previous"] == nil, "no day of the period before in the ledger")
    }

    static func d(_ text: String) -> CivilDate { try! CivilDate.parse(text) }

    @Test("R2: the days a report covers and the period it is compared with",
          arguments: [
              // period, to, today → from, to, previous from, previous to
              (ReportArguments.Period.days(7), nil, "2026-11-29", "2026-11-23", "2026-11-29", "2026-11-16", "2026-11-22"),
              (.days(1), "2026-11-20", "2026-11-29", "2026-11-20", "2026-11-20", "2026-11-19", "2026-11-19"),
              // A week is Monday to Sunday; this week goes to today, compared with as many days of the last.
              (.week, nil, "2026-11-25", "2026-11-23", "2026-11-25", "2026-11-16", "2026-11-18"),
              (.week, "2026-11-18", "2026-11-25", "2026-11-16", "2026-11-22", "2026-11-09", "2026-11-15"),
              (.week, nil, "2026-11-29", "2026-11-23", "2026-11-29", "2026-11-16", "2026-11-22"),
              // A month: this one up to today; March against February's days as far as it has them.
              (.month, nil, "2026-11-10", "2026-11-01", "2026-11-10", "2026-10-01", "2026-10-10"),
              (.month, "2026-03-15", "2026-11-10", "2026-03-01", "2026-03-31", "2026-02-01", "2026-02-28"),
              (.month, "2024-03-02", "2026-11-10", "2024-03-01", "2024-03-31", "2024-02-01", "2024-02-29"),
          ] as [(ReportArguments.Period, String?, String, String, String, String, String)])
    func range(period: ReportArguments.Period, to: String?, today: String, from: String, end: String, before: String, beforeEnd: String) {
        let r = ReportArguments(period: period, to: to.map(Self.d)).range(today: Self.d(today))
        #expect([r.from, r.to, r.previous.from, r.previous.to].map(\.description) == [from, end, before, beforeEnd])
    }

    @Test("R2: a limit added on Sunday is not drawn on the days before it (no 0-minute charts under an allowance it did not have); a ledger that never noted it has it on every day")
    func limitFromItsFirstDay() throws {
        let limit = Limit(name: "social", selections: ["instagram"], seconds: 1800)
        var h = UsageHistory()
        h.keepLimits(UsageLedger(), inForce: ["social"], today: Self.d("2026-11-29"))
        let now = at("2026-11-29T09:30:00+09:00")
        let days = try #require(h.report(from: Self.d("2026-11-27"), to: Self.d("2026-11-29"), user: "1001", at: now, clock: tokyo,
                                         limits: [limit]).json["days"]?.array)
        #expect(days[0]["limits"] == nil && days[1]["limits"] == nil, "before it was added: \(days)")
        #expect(days[2]["limits"] == ["social": ["used": 0, "allowance": 1800, "selections": ["instagram"]]])
        #expect(h.limitsSince() == ["social": "2026-11-29"])
        h.keepLimits(UsageLedger(), inForce: ["social"], today: Self.d("2026-11-30"))
        #expect(h.limitsSince() == ["social": "2026-11-29"], "the first day stays the first")
        let marked = h
        h.keepLimits(UsageLedger(), inForce: ["social"], today: Self.d("2026-11-30"))
        #expect(h == marked, "noted once: a refresh that changes nothing changes no day (nothing to save)")
        let older = UsageHistory()
        let all = try #require(older.report(from: Self.d("2026-11-27"), to: Self.d("2026-11-29"), user: "1001", at: now, clock: tokyo,
                                            limits: [limit]).json["days"]?.array)
        #expect(all.allSatisfy { $0["limits"]?["social"]?["allowance"] == 1800 })
    }

    @Test("R2: the answer's time in apps: each selection's (its apps together, not added up), each person's on the machine's view, and each limit's with its allowance on the days it limits")
    func used() throws {
        var h = UsageHistory()
        let kidGames = UsageHistory.Open(.used, user: "1001", name: "games")
        let kidAny = UsageHistory.Open(.used, user: "1001", name: UsageHistory.anyApp)
        let momAny = UsageHistory.Open(.used, user: "1000", name: UsageHistory.anyApp)
        h.setOpen([kidGames, kidAny], kind: .used, at: at("2026-11-28T20:00:00+09:00"), clock: tokyo)
        h.setOpen([kidAny, momAny], kind: .used, at: at("2026-11-28T21:00:00+09:00"), clock: tokyo)
        h.setOpen([], kind: .used, at: at("2026-11-28T21:30:00+09:00"), clock: tokyo)
        var usage = UsageLedger()
        usage.setRunning("games", true, at: at("2026-11-28T20:00:00+09:00"), clock: tokyo)
        usage.setRunning("games", false, at: at("2026-11-28T21:00:00+09:00"), clock: tokyo)
        usage.addAllowance("games", seconds: 900, on: Self.d("2026-11-28"))
        var limit = Limit(name: "games", selections: ["games"], seconds: 3600, days: try WeekdaySet.parse("sat-sun"))
        limit.users = nil
        let now = at("2026-11-29T09:30:00+09:00")
        let kid = h.report(from: Self.d("2026-11-27"), to: Self.d("2026-11-29"), user: "1001", at: now, clock: tokyo, limits: [limit], usage: usage).json
        let days = try #require(kid["days"]?.array)
        #expect(days[1]["used"] == ["games": 3600], "the any-app figure is not a selection")
        #expect(days[1]["users"] == nil, "only the machine's view lists people")
        #expect(days[0]["limits"] == nil, "Friday: not limited, nothing used")
        #expect(days[1]["limits"] == ["games": ["used": 3600, "allowance": 4500, "selections": ["games"]]], "more time granted counts in the allowance")
        #expect(days[2]["limits"] == ["games": ["used": 0, "allowance": 3600, "selections": ["games"]]])
        let machine = h.report(from: Self.d("2026-11-28"), to: Self.d("2026-11-28"), user: nil, at: now, clock: tokyo).json
        #expect(machine["days"]?.array?[0]["users"] == ["1000": 1800, "1001": 5400])
        // After the limits' ledger forgot the day, this ledger's copy has it.
        h.keepLimits(usage)
        let later = h.report(from: Self.d("2026-11-28"), to: Self.d("2026-11-28"), user: "1001", at: now, clock: tokyo,
                             limits: [limit], usage: UsageLedger()).json
        #expect(later["days"]?.array?[0]["limits"]?["games"]?["used"] == 3600)
    }
}
