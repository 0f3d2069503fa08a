import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockAgent
import BlockTestTools

/// R3: the weekly summary, decided (pure) and as the real agent posts it on dunst.
@Suite("R3: the weekly summary", .serialized)
struct WeeklySummaryTests {
    static func d(_ text: String) -> CivilDate { try! CivilDate.parse(text) }

    static func day(_ date: String, used: JSON = [:], blocked: JSON = [:], web: JSON = [:], counts: JSON = [:]) -> JSON {
        ["date": .string(date), "weekday": "mon", "used": used, "blocked": blocked, "apps": [:], "web": web, "counts": counts]
    }

    /// Last week: 9 h 20 min on games over two days, against 10 h 30 min the week before;
    /// 3 h on youtube.com, less on two other sites.
    static let week: JSONObject = [
        "schema": 1, "from": "2026-11-23", "to": "2026-11-29", "period": "week", "user": 1001,
        "days": [day("2026-11-23", used: ["games": 18000, "school": 600], web: ["youtube.com": 7200, "wikipedia.org": 3000], counts: ["asked": 2, "granted": 1]),
                 day("2026-11-24", used: ["games": 15600], blocked: ["games": 3600], web: ["youtube.com": 3600, "scratch.mit.edu": 9000],
                     counts: ["asked": 1, "granted": 1])],
        "previous": ["from": "2026-11-16", "to": "2026-11-22", "blocked": [:], "used": ["games": 37800]],
    ]

    @Test("R3: due once a week: the week before this one, unless it was summarized", arguments: [
        ("2026-11-30", nil, "2026-11-23"),           // never summarized: last week
        ("2026-12-02", "2026-11-16", "2026-11-23"),  // a week was missed: only the last one
        ("2026-12-02", "2026-11-23", nil),           // Wednesday, already done on Monday
        ("2026-12-06", "2026-11-23", nil),           // Sunday: still this week
        ("2026-12-07", "2026-11-23", "2026-11-30"),  // the next Monday
    ] as [(String, String?, String?)])
    func due(today: String, last: String?, expected: String?) {
        #expect(WeeklySummary.due(today: Self.d(today), last: last.map(Self.d))?.description == expected)
    }

    static let withButton = NotificationPlanner.Abilities(serverActions: true, opener: true)

    @Test("R3, B2: the text: the selection whose apps and sites were used most against the week before, the top site, then more time asked and granted; the button only where S4 allows")
    func text() throws {
        let en = NotificationPlanner(language: .en, clock: .utc)
        let plan = try #require(en.planWeeklySummary(ReportReply(Self.week), reportURL: "file:///home/kid/last-week.html", abilities: Self.withButton))
        #expect(plan.summary == "Last week")
        #expect(plan.body == "9 h 20 min on games, 1 h 10 min less than the week before; top site: youtube.com, 3 h; 3 requests for more time, 2 granted.")
        #expect(plan.action == .init(label: "Open report", url: "file:///home/kid/last-week.html") && plan.slotKey == WeeklySummary.slot)
        #expect(en.planWeeklySummary(ReportReply(Self.week), reportURL: "file:///x", abilities: .init(serverActions: true, opener: false))?.action == nil)
        #expect(en.planWeeklySummary(ReportReply(Self.week), reportURL: nil, abilities: Self.withButton)?.action == nil, "no page written, no button")

        let ja = NotificationPlanner(language: .ja, clock: .utc)
        #expect(ja.planWeeklySummary(ReportReply(Self.week), reportURL: nil, abilities: Self.withButton)?.body
                == "gamesに9時間20分（前の週より1時間10分少ない）。一番見たサイトはyoutube.com（3時間）。延長のリクエスト3回、うち2回許可。")

        var first = Self.week
        first["previous"] = nil
        first["days"] = [Self.day("2026-11-23", blocked: ["only:school": 7200])]
        #expect(en.planWeeklySummary(ReportReply(first), reportURL: nil, abilities: Self.withButton)?.body == "everything but school blocked for 2 h.",
                "no app counted: the longest block; no week before: no comparison")
        let quiet: JSONObject = ["schema": 1, "days": [Self.day("2026-11-23", used: ["games": 20])]]
        #expect(en.planWeeklySummary(ReportReply(quiet), reportURL: nil, abilities: Self.withButton) == nil, "a week with nothing to say posts nothing")
        let wrong: JSONObject = ["schema": 1, "days": [Self.day("2026-11-23", used: ["games": "9 h"], blocked: [1], counts: ["asked": "3"])],
                                 "previous": ["used": "x"]]
        #expect(en.planWeeklySummary(ReportReply(wrong), reportURL: nil, abilities: Self.withButton) == nil,
                "another version's figures of the wrong type read as 0: nothing to say")
        var mixed = Self.week
        mixed["previous"] = ["used": ["games": "10 h"]]
        #expect(en.planWeeklySummary(ReportReply(mixed), reportURL: nil, abilities: Self.withButton)?.body
                == "9 h 20 min on games, 9 h 20 min more than the week before; top site: youtube.com, 3 h; 3 requests for more time, 2 granted.", "a wrong-typed figure before is 0")
    }

    @Test("R3, B2: the top site, the one longest in the focused tab over the week, in English and Japanese; a week with only sites is worth a summary; under a minute is nothing to say",
          arguments: [
              // over the week, not its biggest day: youtube.com's 25 and 25 min beat wikipedia.org's 45
              ([["youtube.com": 1500, "wikipedia.org": 2700], ["youtube.com": 1500]] as [JSON], "top site: youtube.com, 50 min.", "一番見たサイトはyoutube.com（50分）。"),
              ([["b.example": 600, "a.example": 600]], "top site: a.example, 10 min.", "一番見たサイトはa.example（10分）。"),  // a tie: the first by name
              ([["youtube.com": 30], ["youtube.com": 20]], nil, nil),
              ([[:]], nil, nil),
          ] as [([JSON], String?, String?)])
    func topSite(web: [JSON], en: String?, ja: String?) {
        let report: JSONObject = ["schema": 1, "days": .array(web.enumerated().map { Self.day("2026-11-2\($0.offset + 3)", web: $0.element) })]
        #expect(NotificationPlanner(language: .en, clock: .utc).planWeeklySummary(ReportReply(report), reportURL: nil, abilities: Self.withButton)?.body == en)
        #expect(NotificationPlanner(language: .ja, clock: .utc).planWeeklySummary(ReportReply(report), reportURL: nil, abilities: Self.withButton)?.body == ja)
    }

    @Test("R3: the agent posts last week's summary once on dunst, its button opens the page it wrote; the next start posts none",
          .enabled(if: Desktop.can(needs: NotifyIntegrationTests.dunstTools), Desktop.needsPrograms))
    func posted() throws {
        let session = try DesktopSession()
        try session.startDunst()
        let (daemon, agent) = try NotifyIntegrationTests.start(session, report: Self.week)
        try #require(Run.eventually { session.notifyCalls().count == 1 }, "no Notify: \(session.read("agent.log"))")
        let call = session.notifyCalls()[0]
        #expect(call.args[3] == "Last week")
        #expect(call.args[4] == "9 h 20 min on games, 1 h 10 min less than the week before; top site: youtube.com, 3 h; 3 requests for more time, 2 granted.")
        #expect(call.args[5] == ["open", "Open report"])
        let today = NotifyIntegrationTests.tokyo.civil(of: Date()).date
        let lastMonday = WeeklySummary.monday(of: today).adding(days: -7)
        #expect(daemon.reports == [.report(ReportArguments(period: .week, to: lastMonday))], "the week before this one, the caller's own view")

        let page = session.dir + "/state-home/blockd/last-week.html"
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("<svg") && !html.contains("<script"), "the R2 page, with no script")
        #expect(Run.eventually { session.read("state-home/blockd/weekly-summary") == lastMonday.description + "\n" }, "the week is remembered once shown")
        _ = try session.dunstctl(["action", "0"])
        #expect(Run.eventually { session.read("opened") == "file://" + page + "\n" }, "opened: \(session.read("opened")); log: \(session.read("agent.log"))")

        agent.stop()
        let env = session.environment.merging(["PATH": session.dir + "/bin", "XDG_RUNTIME_DIR": session.dir, "TZ": "Asia/Tokyo"]) { $1 }
        _ = try session.processes.launch(Repo.binDir + "/blockc", ["--socket", daemon.path, "watch", "--notify"],
                                         environment: env, output: session.dir + "/agent2.log")
        #expect(Run.eventually { session.read("agent2.log").contains("weekly summary: the week of \(lastMonday) was summed up already") },
                "the second run found the week done: \(session.read("agent2.log"))")
        #expect(daemon.reports.count == 1 && session.notifyCalls().count == 1, "one summary a week: \(session.read("agent2.log"))")
    }
}
