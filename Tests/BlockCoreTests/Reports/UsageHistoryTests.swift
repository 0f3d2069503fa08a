import Foundation
import Testing
@testable import BlockCore

/// R1: the usage ledger behind reports, with an injected clock (T7 days, T8 restarts).
@Suite("R1: the usage ledger")
struct UsageHistoryTests {
    let tokyo = zone("Asia/Tokyo")
    static let games = UsageHistory.Open(.running, user: "1001", name: "/usr/games/supertux2")

    @Test("R1, T7: running time splits at local midnight, 23-, 24- and 25-hour days alike",
          arguments: [
              ("America/New_York", "2026-03-07T23:00:00-05:00", "2026-03-09T00:30:00-04:00", ["2026-03-07": 3600.0, "2026-03-08": 23 * 3600, "2026-03-09": 1800]),
              ("America/New_York", "2026-10-31T23:00:00-04:00", "2026-11-02T00:30:00-05:00", ["2026-10-31": 3600.0, "2026-11-01": 25 * 3600, "2026-11-02": 1800]),
              ("Asia/Tokyo", "2026-11-29T23:30:00+09:00", "2026-11-30T00:45:00+09:00", ["2026-11-29": 1800.0, "2026-11-30": 2700]),
          ] as [(String, String, String, [String: Double])])
    func days(zoneName: String, from: String, to: String, expected: [String: Double]) {
        let clock = zone(zoneName)
        var h = UsageHistory()
        h.set(Self.games, true, at: at(from), clock: clock)
        h.set(Self.games, true, at: at(from).addingTimeInterval(60), clock: clock)  // a second process: no double count
        h.set(Self.games, false, at: at(to), clock: clock)
        let got = h.days.compactMapValues { $0.running["1001"]?["/usr/games/supertux2"] }
        #expect(got == expected)
    }

    @Test("R1, T8: a checkpoint folds what runs into its day; after a restart unobserved time is not counted and counted time stays")
    func restart() throws {
        var h = UsageHistory()
        h.set(Self.games, true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        h.checkpoint([.running], at: at("2026-11-29T10:20:00+09:00"), clock: tokyo)
        let saved = try JSONDecoder().decode(UsageHistory.self, from: JSONEncoder().encode(h))  // the file as written
        #expect(saved == h)
        var after = saved
        after.forgetRunning()  // the daemon was down from 10:20 to 11:00
        after.set(Self.games, true, at: at("2026-11-29T11:00:00+09:00"), clock: tokyo)
        let day = tokyo.civil(of: at("2026-11-29T12:00:00+09:00")).date
        let used = after.seconds(.running, on: day, user: "1001", at: at("2026-11-29T11:15:00+09:00"), clock: tokyo)
        #expect(used == ["/usr/games/supertux2": 35 * 60], "20 min checkpointed + 15 min open; the 40 min down not counted")
    }

    @Test("R1: blocked time per user: a machine-wide block counts for each user; for the machine only machine-wide blocks count",
          arguments: [("1001", 3 * 3600.0), ("1002", 2 * 3600), (nil, 2 * 3600)] as [(String?, Double)])
    func blocked(user: String?, expected: Double) {
        var h = UsageHistory()
        let kid = UsageHistory.Open(.blocked, user: "1001", name: "games")
        h.blocked("games", from: [], to: [UsageHistory.everyone], at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        h.blocked("games", from: [UsageHistory.everyone], to: [], at: at("2026-11-29T12:00:00+09:00"), clock: tokyo)
        h.set(kid, true, at: at("2026-11-29T20:00:00+09:00"), clock: tokyo)
        let day = CivilDate(year: 2026, month: 11, day: 29)
        let got = h.seconds(.blocked, on: day, user: user, at: at("2026-11-29T21:00:00+09:00"), clock: tokyo)
        #expect(got["games"] == expected)
    }

    @Test("R1: setOpen makes exactly the reported set run; counts go to the day they happened on")
    func setOpenAndCounts() {
        var h = UsageHistory()
        let editor = UsageHistory.Open(.running, user: "1001", name: "/usr/bin/gedit")
        h.setOpen([Self.games, editor], kind: .running, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        h.setOpen([editor], kind: .running, at: at("2026-11-29T10:30:00+09:00"), clock: tokyo)
        h.count(.asked, user: "1001", at: at("2026-11-29T23:59:59+09:00"), clock: tokyo)
        h.count(.granted, user: "1001", at: at("2026-11-30T00:00:00+09:00"), clock: tokyo)
        #expect(h.days["2026-11-29"]?.running["1001"] == ["/usr/games/supertux2": 1800])
        #expect(Array(h.open.keys) == [editor.key] && UsageHistory.Open(key: editor.key) == editor)
        #expect(h.days["2026-11-29"]?.counts["1001"] == ["asked": 1])
        #expect(h.days["2026-11-30"]?.counts["1001"] == ["granted": 1])
    }

    @Test("R1: the ledger is bounded: ReportDays= days are kept, today included")
    func prune() {
        var h = UsageHistory()
        for d in 1...40 { h.count(.started, user: "0", at: at(String(format: "2026-11-%02dT12:00:00+09:00", min(d, 30))).addingTimeInterval(Double(max(0, d - 30)) * 86400), clock: tokyo) }
        h.prune(keeping: 35, today: CivilDate(year: 2026, month: 12, day: 10))
        #expect(h.days.keys.sorted().first == "2026-11-06" && h.days.keys.sorted().last == "2026-12-10" && h.days.count == 35)
    }
}
