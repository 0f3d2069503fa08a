import Foundation
import Testing
@testable import BlockCore
import ZoneInfo

/// R2: the report and the journal tell the same story. A scripted day (blocks for everyone and
/// for one user, one stopped early, a schedule window across midnight, more time asked) is run
/// on the core, its instants given; the journal's lock and unlock entries, at the times
/// they were written, give each selection's blocked seconds per local day, and its start, stop
/// and more-time entries the counts. `report` must say exactly that.
@Suite("R2: the report agrees with the journal, on the core")
struct CoreReportJournalTests {
    let tokyo = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)

    /// Blocked seconds by (view, day, selection) from the lock and unlock entries: a view is
    /// `all` for an entry about everyone, else each uid of BLOCKD_USERS.
    func blockedFromJournal(_ log: [(time: Date?, entry: JournalEntry)]) -> [String: [String: [String: Int]]] {
        var open: [String: Date] = [:]  // "view selection" → locked since
        var out: [String: [String: [String: Int]]] = [:]
        func add(_ view: String, _ selection: String, from a: Date, to b: Date) {
            var t = a
            while t < b {
                let day = tokyo.civil(of: t).date
                let midnight = tokyo.instant(day.adding(days: 1), secondsOfDay: 0)
                let end = min(b, midnight)
                out[view, default: [:]][day.description, default: [:]][selection, default: 0] += Int(end.timeIntervalSince(t).rounded())
                t = end
            }
        }
        for (time, entry) in log {
            guard let time, entry.event == .lock || entry.event == .unlock, let selection = entry.field(.selection) else { continue }
            let views = entry.field(.users).map { $0.split(separator: " ").map(String.init) } ?? [UsageHistory.everyone]
            for view in views {
                let key = "\(view) \(selection)"
                if entry.event == .lock {
                    if open[key] == nil { open[key] = time }
                } else if let since = open.removeValue(forKey: key) {
                    add(view, selection, from: since, to: time)
                }
            }
        }
        return out
    }

    /// Counts by uid from the journal: blocks started and stopped early, more time asked,
    /// granted and denied.
    func countsFromJournal(_ log: [(time: Date?, entry: JournalEntry)]) -> [String: [String: Int]] {
        var out: [String: [String: Int]] = [:]
        let askedIDs = Set(log.filter { $0.entry.event == .moreAsked }.compactMap { $0.entry.field(.moreID) })
        for (_, e) in log {
            guard let uid = e.field(.uid) else { continue }
            // More time granted without asking first (MoreTime=self) counts as asked too.
            if e.event == .moreGranted, let id = e.field(.moreID), !askedIDs.contains(id) { out[uid, default: [:]]["asked", default: 0] += 1 }
            let kind: String? = switch e.event {
            case .start where e.message.hasPrefix("Block '") && e.message.contains("' started by "): "started"
            case .stop where e.message.hasPrefix("Block '") && e.message.contains("' stopped early by "): "stoppedEarly"
            case .moreAsked: "asked"
            case .moreGranted: "granted"
            case .moreDenied: "denied"
            default: nil
            }
            if let kind { out[uid, default: [:]][kind, default: 0] += 1 }
        }
        return out
    }

    @Test("R2: a scripted day and night: each view's blocked minutes per day and the counts in report equal what the journal's entries say")
    func agrees() throws {
        var d = FakeEdge(users: CoreUserScopeTests.users)  // Sunday 2026-11-29, 13:05 in Tokyo
        _ = ok(d.run(#"start {"selections":["youtube"],"seconds":1800,"name":"focus"}"#))
        d.advance(1800)  // ends by itself at 13:35
        _ = ok(d.run(#"start {"selections":["reddit"],"seconds":7200,"name":"homework","users":["kid"]}"#))
        d.advance(2700)
        _ = ok(d.run(#"stop {"name":"homework"}"#))  // root stops it early at 14:20
        _ = ok(d.run(#"start {"selections":["instagram"],"seconds":600,"name":"mine"}"#, as: CoreUserScopeTests.kid))
        _ = ok(d.run(#"more {"selection":"instagram","seconds":300}"#, as: CoreUserScopeTests.kid))  // lifted for 5 minutes
        d.advance(300)  // blocked again for the last 5
        d.advance(300)
        _ = ok(d.run(#"schedule-add {"name":"night","window":"23:30-00:30","selections":["steam"]}"#))
        d.advance(at("2026-11-29T23:30:00+09:00").timeIntervalSince(d.now))
        d.advance(3600)  // 00:30 on Monday: the window ends

        let log = d.timedJournal
        let journal = blockedFromJournal(log)
        #expect(journal["all"]?["2026-11-29"] == ["youtube": 1800, "steam": 1800], "the script is what it says: \(journal)")
        #expect(journal["all"]?["2026-11-30"] == ["steam": 1800])
        #expect(journal["1001"]?["2026-11-29"] == ["reddit": 2700, "instagram": 300])
        for (view, request, peer) in [("all", #"report {"days":2,"allUsers":true}"#, Peer.root),
                                      ("1001", #"report {"days":2}"#, CoreUserScopeTests.kid)] {
            let report = try #require(ok(d.run(request, as: peer)))
            for day in report["days"]?.array ?? [] {
                let date = try #require(day["date"]?.string)
                var expected = journal[view]?[date] ?? [:]
                if view != "all" { expected.merge(journal["all"]?[date] ?? [:]) { $0 + $1 } }  // a block for everyone counts for each user
                let figures: JSONObject = day["blocked"]?.object ?? [:]
                var blocked: [String: Int] = [:]
                for (name, value) in figures where (value.int ?? 0) > 0 { blocked[name] = value.int }
                let fromJournal: [String: Int] = expected.filter { $0.value > 0 }
                #expect(blocked == fromJournal, "\(view) on \(date): report \(blocked), journal \(fromJournal)")
            }
        }
        let machine = try #require(ok(d.run(#"report {"days":2,"allUsers":true}"#)))
        var counts: [String: Int] = [:]
        for day in machine["days"]?.array ?? [] { for (k, v) in day["counts"]?.object ?? [:] { counts[k, default: 0] += Int(v.int ?? 0) } }
        let journalCounts = countsFromJournal(log).values.reduce(into: [String: Int]()) { sum, c in sum.merge(c) { $0 + $1 } }
        #expect(counts == journalCounts && counts["started"] == 3 && counts["stoppedEarly"] == 1 && counts["asked"] == 1,
                "report \(counts), journal \(journalCounts)")
        let kid = try #require(ok(d.run(#"report {"days":2}"#, as: CoreUserScopeTests.kid)))
        var kidCounts: [String: Int] = [:]
        for day in kid["days"]?.array ?? [] { for (k, v) in day["counts"]?.object ?? [:] { kidCounts[k, default: 0] += Int(v.int ?? 0) } }
        #expect(kidCounts == countsFromJournal(log)["1001"], "kid's own counts")
    }
}
