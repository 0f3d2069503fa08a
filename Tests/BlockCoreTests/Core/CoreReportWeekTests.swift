import Foundation
import Testing
@testable import BlockCore

/// R1, R2: a scripted week on the core gives exactly the expected minutes per day.
@Suite("R1: a scripted week, on the core")
struct CoreReportWeekTests {
    /// Moves time to `time` (Tokyo) and wakes there, as the timer would.
    static func go(_ d: inout FakeEdge, _ time: String) {
        d.advance(at(time).timeIntervalSince(d.now))
    }

    static func run(_ d: inout FakeEdge, _ running: Bool) {
        d.appsRunning(running ? [RunningApp(uid: 1001, app: "steam")] : [])
        d.usage(running: running ? ["games"] : [], as: 1001)
    }

    @Test("R1, R2: a week of steam sessions (one across midnight) and a weekday homework window: each day's app, selection, limit and blocked minutes in report are exact")
    func week() throws {
        var h = FakeEdge(at: "2026-11-22T20:00:00+09:00", users: CoreUserScopeTests.users)  // Sunday evening
        _ = ok(h.run(#"limit-add {"name":"games","seconds":10800,"selections":["steam"]}"#))
        _ = ok(h.run(#"schedule-add {"name":"homework","window":"16:00-17:00","days":"mon-fri","selections":["youtube"]}"#))
        // Monday to Sunday, 23 to 29 November: steam for 30, 40, ... 90 minutes from 18:00.
        var expectedApps = [Int](repeating: 0, count: 7)
        for d in 0..<7 {
            let day = 23 + d
            if d < 5 {
                Self.go(&h, "2026-11-\(day)T16:00:00+09:00")
                Self.go(&h, "2026-11-\(day)T17:00:00+09:00")
            }
            Self.go(&h, "2026-11-\(day)T18:00:00+09:00")
            Self.run(&h, true)
            h.advance(Double((30 + 10 * d) * 60))
            Self.run(&h, false)
            expectedApps[d] += (30 + 10 * d) * 60
            if d == 3 {  // Thursday night into Friday: 23:30 to 00:20, 30 minutes on one day and 20 on the next (T7)
                Self.go(&h, "2026-11-26T23:30:00+09:00")
                Self.run(&h, true)
                Self.go(&h, "2026-11-27T00:20:00+09:00")
                Self.run(&h, false)
                expectedApps[3] += 1800
                expectedApps[4] += 1200
            }
        }
        Self.go(&h, "2026-11-30T09:00:00+09:00")

        let report = try #require(ok(h.run(#"report {"period":"week","to":"2026-11-23"}"#, as: CoreUserScopeTests.kid)))
        let days = try #require(report["days"]?.array)
        #expect(report["from"] == "2026-11-23" && report["to"] == "2026-11-29" && days.count == 7)
        for (d, day) in days.enumerated() {
            let seconds = JSON.int(Int64(expectedApps[d]))
            #expect(day["apps"] == ["steam": seconds], "apps on \(day["date"] ?? "?")")
            #expect(day["used"] == ["steam": seconds], "the selection's time on \(day["date"] ?? "?")")
            #expect(day["limits"]?["games"]?["used"] == seconds && day["limits"]?["games"]?["allowance"] == 10800)
            #expect(day["blocked"] == (d < 5 ? ["youtube": 3600] : [:]), "the homework window on \(day["date"] ?? "?")")
        }
    }
}
