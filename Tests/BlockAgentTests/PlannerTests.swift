import BlockCore
import Foundation
import Synchronization
import Testing
@testable import BlockAgent
import ZoneInfo

/// The agent's rules without a bus: what each event says (S6), when a button is offered (S4),
/// which id is replaced (S2) and which events are not shown twice. Fixed zone and instants.
@Suite struct PlannerTests {
    static let tokyo = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    /// 2026-11-29 13:06 in Tokyo; the block ends at 13:35, 29 minutes later.
    static let now = try! TimeText.parseISO8601WithOffset("2026-11-29T13:06:00+09:00")
    static let all = NotificationPlanner.Abilities(serverActions: true, opener: true)

    /// Built by the daemon's own constructor, so the fixture cannot drift from what it sends.
    static func denied(app: String? = "Discord", selection: String = "discord", until: String? = "2026-11-29T13:35:00+09:00") -> WatchEvent {
        .shieldHit(time: "2026-11-29T13:06:00+09:00", kind: .deniedLaunch, selection: selection, path: "/usr/bin/discord",
             app: app, until: until)
    }

    func planner(_ language: Language) -> NotificationPlanner { NotificationPlanner(language: language, clock: PlannerTests.tokyo) }

    @Test("S2, S6: a denied launch reads \"Discord is blocked until 13:35 — 29 min left\"", arguments: [
        (Language.en, "Discord is blocked", "Blocked until 13:35 — 29 min left."),
        (.ja, "Discordはブロック中です", "13:35まで使えません（残り29分）。"),
    ])
    func deniedLaunch(language: Language, summary: String, body: String) throws {
        let plan = try #require(planner(language).plan(PlannerTests.denied(), selection: nil, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect(plan.summary == summary)
        #expect(plan.body == body)
        #expect(plan.selection == "discord")
        #expect(plan.action == nil, "no OpenURL=, no button (S4)")
    }

    @Test("S6 and seed lesson 6: a missing app name falls back to the selection, never a raw placeholder")
    func missingApp() throws {
        let plan = try #require(planner(.en).plan(PlannerTests.denied(app: nil, until: nil), selection: nil, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect(plan.summary == "discord is blocked")
        #expect(plan.body == "Blocked until later — a while left.")
    }

    @Test("S6: the selection's overrides come first, Key[lang] before Key, then the built-in text")
    func overrides() throws {
        let info = SelectionInfo(name: "discord", texts: ["ShieldTitle": "{app}: not now", "ShieldBody[ja]": "{until}まで待って", "ShieldBody": "Later"])
        let en = try #require(planner(.en).plan(PlannerTests.denied(), selection: info, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect((en.summary, en.body) == ("Discord: not now", "Later"))
        let ja = try #require(planner(.ja).plan(PlannerTests.denied(), selection: info, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect((ja.summary, ja.body) == ("Discord: not now", "13:35まで待って"))
    }

    @Test("S4: the open button needs OpenURL=, the server's actions capability and an opener", arguments: [
        (true, true, true, true), (false, true, true, false), (true, false, true, false), (true, true, false, false),
    ])
    func button(openURL: Bool, serverActions: Bool, opener: Bool, offered: Bool) throws {
        let info = SelectionInfo(name: "instagram", openURL: openURL ? "https://minulo.example/open?app={app}&s={selection}" : nil,
                                 texts: ["OpenLabel": "Open minulo"])
        let plan = try #require(planner(.en).plan(PlannerTests.denied(app: "インスタ", selection: "instagram"), selection: info, now: PlannerTests.now,
                                                  abilities: .init(serverActions: serverActions, opener: opener)))
        if offered {
            // S7: the app name is UTF-8 percent-encoded with upper-case hex.
            #expect(plan.action == .init(label: "Open minulo", url: "https://minulo.example/open?app=%E3%82%A4%E3%83%B3%E3%82%B9%E3%82%BF&s=instagram"))
        } else {
            #expect(plan.action == nil)
        }
    }

    @Test("W2: an allow-only window reads \"everything but editor, school is now blocked\"")
    func allowOnly() throws {
        let lock = WatchEvent.lock(time: "2026-11-29T13:06:00+09:00", selection: "only:editor,school", until: "2026-11-29T15:06:00+09:00", reasons: ["homework"])
        let l = try #require(planner(.en).plan(lock, selection: nil, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect(l.summary == "everything but editor, school is now blocked")
        #expect(l.selection == "only:editor,school", "the slot stays keyed by the selection's name (S2)")
    }

    @Test("lock, unlock and warning each have their texts; unlock and warning never offer the button")
    func otherEvents() throws {
        let info = SelectionInfo(name: "social", openURL: "https://example.org/")
        let p = planner(.en)
        let lock = WatchEvent.lock(time: "2026-11-29T13:06:00+09:00", selection: "social", until: "2026-11-30T07:00:00+09:00", reasons: ["bedtime"])
        let l = try #require(p.plan(lock, selection: info, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect(l.summary == "social is now blocked")
        #expect(l.body == "Blocked until Mon 30 Nov 07:00 — 17 h 54 min left.")
        #expect(l.action?.url == "https://example.org/")
        let unlock = WatchEvent.unlock(time: "2026-11-29T13:06:00+09:00", selection: "social", why: "x")
        let u = try #require(p.plan(unlock, selection: info, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect((u.summary, u.body, u.action) == ("social is unblocked", "Its apps and sites are available again.", nil))
        let warning = WatchEvent.warning(time: "2026-11-29T13:06:00+09:00", activity: "bedtime", selection: "social",
                                         starts: "2026-11-29T13:11:00+09:00", remaining: "5m")
        let w = try #require(planner(.ja).plan(warning, selection: info, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect((w.summary, w.body, w.action) == ("まもなくsocialがブロックされます", "あと5分でブロックが始まります。", nil))
    }

    @Test("screen time: a screen-time limit's warning says what happens to the session and when, in the person's language", arguments: [
        (SessionAction.lock, Language.en, "Time at the screen ends soon", "Your screen locks in 10 min."),
        (.logout, .en, "Time at the screen ends soon", "You will be logged out in 10 min: save your work."),
        (.poweroff, .en, "Time at the screen ends soon", "The computer shuts down in 10 min: save your work."),
        (.lock, .ja, "まもなく画面の時間が終わります", "あと10分で画面がロックされます。"),
        (.suspend, .ja, "まもなく画面の時間が終わります", "あと10分でコンピューターがスリープします。作業を保存してください。"),
    ])
    func screenWarning(action: SessionAction, language: Language, title: String, body: String) throws {
        let warning = WatchEvent.warning(time: "2026-11-29T13:06:00+09:00", activity: "screen", selection: "screen",
                                         starts: "2026-11-29T13:16:00+09:00", remaining: "10m", session: action)
        let w = try #require(planner(language).plan(warning, selection: nil, now: PlannerTests.now, abilities: PlannerTests.all))
        #expect((w.summary, w.body) == (title, body))
        #expect(w.action == nil && w.buttons.isEmpty, "nothing to open, nothing to ask yet")
    }

    @Test("U2: an administrator's agent gets every user's events and shows only its own user's")
    func ownUsersOnly() {
        let p = planner(.en)
        let t = "2026-11-29T13:06:00+09:00"
        let admin = NotificationPlanner.Viewer(uid: 1003, isAdmin: true), kid = NotificationPlanner.Viewer(uid: 1001)
        func shown(_ e: WatchEvent, to viewer: NotificationPlanner.Viewer) -> Bool {
            p.plan(e, selection: nil, now: PlannerTests.now, abilities: PlannerTests.all, viewer: viewer) != nil
        }
        let kids = WatchEvent.lock(time: t, selection: "youtube", until: nil, reasons: ["bedtime"], users: [1001])
        #expect(shown(kids, to: kid) && !shown(kids, to: admin), "kid's bedtime is not the parent's block")
        let others = WatchEvent.unlock(time: t, selection: "youtube", why: "x", except: [1001])
        #expect(shown(others, to: admin) && !shown(others, to: kid), "lifted for everyone but kid, who stays blocked")
        let everyone = WatchEvent.lock(time: t, selection: "youtube", until: nil, reasons: ["focus"])
        #expect(shown(everyone, to: admin) && shown(everyone, to: kid))
        let hit = WatchEvent.shieldHit(time: t, kind: .deniedLaunch, selection: "steam", path: "/usr/games/steam", app: "Steam",
                                 until: nil, users: [1001])
        #expect(shown(hit, to: kid) && !shown(hit, to: admin))
    }

    @Test("tamper repairs, refusals, failures and unknown events are not shown")
    func notShown() {
        let p = planner(.en)
        let t = "2026-11-29T13:06:00+09:00"
        for e: WatchEvent in [.tamper(time: t, kind: .tamper, selection: "x", path: "/etc/hosts", app: nil, until: nil),
                              .refusal(time: t, code: "locked", message: "m"), .failure(time: t, code: "hook", message: "m"),
                              WatchEvent(["event": "future-thing", "selection": "x"])] {
            #expect(p.plan(e, selection: nil, now: PlannerTests.now, abilities: PlannerTests.all) == nil)
        }
    }

    @Test("S6: no event renders a brace, whatever is missing", arguments: Language.allCases)
    func noRawPlaceholder(language: Language) {
        for event in ["shield-hit", "lock", "unlock", "warning"] {
            // What a broken or newer daemon might send, read as the agent reads every line.
            let e = WatchEvent(["event": .string(event), "kind": "denied-launch", "selection": "s", "until": "garbage", "starts": .null])
            let plan = planner(language).plan(e, selection: nil, now: PlannerTests.now, abilities: PlannerTests.all)
            #expect(plan != nil)
            #expect(!(plan?.summary ?? "{").contains("{") && !(plan?.body ?? "{").contains("{"))
        }
    }

    @Test("remaining time reads as people say it, rounded up", arguments: [
        (30.0, "30 s", "30秒"), (61, "2 min", "2分"), (1740, "29 min", "29分"), (3600, "1 h", "1時間"),
        (5400, "1 h 30 min", "1時間30分"), (90_000, "1 d 1 h", "1日1時間"), (172_800, "2 d", "2日"),
    ])
    func remaining(seconds: Double, en: String, ja: String) {
        #expect(planner(.en).remaining(seconds) == en)
        #expect(planner(.ja).remaining(seconds) == ja)
        #expect(planner(.en).remaining(0) == nil)
    }

    @Test("S2: one id per selection, passed back as replaces_id; actions only for our ids")
    func slots() {
        var s = NotificationSlots()
        #expect(s.replacesID(for: "discord") == 0)
        s.record(id: 7, selection: "discord", url: "https://a/")
        #expect(s.replacesID(for: "discord") == 7)
        #expect(s.url(forAction: 7, key: "open") == "https://a/")
        #expect(s.url(forAction: 7, key: "default") == nil)
        #expect(s.url(forAction: 8, key: "open") == nil, "someone else's notification")
        s.record(id: 9, selection: "discord", url: nil)  // a server that did not reuse the id
        #expect(s.url(forAction: 7, key: "open") == nil)
        #expect(s.url(forAction: 9, key: "open") == nil, "no button, nothing to open")
        s.closed(id: 9)
        #expect(s.replacesID(for: "discord") == 0)
    }

    @Test("resubscribing does not repeat a notification: the same lock again, or the same event twice, is not shown")
    func duplicates() {
        var s = NotificationSlots()
        let lock = WatchEvent.lock(time: "2026-11-29T13:00:00+09:00", selection: "x", until: "2026-11-29T14:00:00+09:00", reasons: ["b"])
        let again = WatchEvent.lock(time: "2026-11-29T13:02:00+09:00", selection: "x", until: "2026-11-29T14:00:00+09:00",
                                    reasons: ["b"])  // a restarted daemon announcing the same block
        let extended = WatchEvent.lock(time: "2026-11-29T13:00:00+09:00", selection: "x", until: "2026-11-29T15:00:00+09:00", reasons: ["b"])
        // `admit` mutates, so each answer is taken first and then checked.
        let answers = [s.admit(lock), s.admit(again), s.admit(extended)]
        #expect(answers == [true, false, true])
        let hit = PlannerTests.denied()
        let hits = [s.admit(hit), s.admit(hit)]
        #expect(hits == [true, false])
        guard case .shieldHit(var launch) = hit else { Issue.record("not a shield hit"); return }
        launch.time = "2026-11-29T13:07:00+09:00"
        let later = WatchEvent.shieldHit(launch)
        let admitted = s.admit(later)
        #expect(admitted, "another launch is another notification (replacing the first, S2)")
    }

    @Test("S3: a full queue drops its oldest event and counts the drop")
    func boundedQueue() {
        let q = EventQueue(capacity: 2)
        let events = (1...3).map { WatchEvent.dropped(count: $0, time: "2026-11-29T13:06:00+09:00") }
        #expect(q.push(.event(events[0])))
        #expect(q.push(.event(events[1])))
        #expect(!q.push(.event(events[2])))
        let (items, dropped, closed) = q.take()
        #expect(items == [.event(events[1]), .event(events[2])])
        #expect((dropped, closed) == (1, false))
        q.close()
        #expect(q.take().closed)
    }

    @Test("S3: blockd's dropped event is logged and counted, never shown, and touches no bus")
    func daemonDropped() {
        let lines = Mutex<[String]>([])
        let notifier = Notifier(planner: planner(.en), opener: Opener(environment: ["PATH": "/nonexistent"]),
                                lookup: { _ in Issue.record("no selection is looked up"); return nil },
                                log: { line in lines.withLock { $0.append(line) } }, now: { PlannerTests.now })
        notifier.handle(.event(.dropped(count: 37, time: "2026-11-29T13:06:00+09:00")))
        notifier.handle(.event(.dropped(count: 1, time: "2026-11-29T13:07:00+09:00")))
        #expect(notifier.counts == Notifier.Counts(shown: 0, skipped: 0, dropped: 38, opened: 0))
        #expect(lines.withLock { $0 } == [
            "blockd dropped 37 events for this agent, which fell behind; 37 dropped so far",
            "blockd dropped 1 event for this agent, which fell behind; 38 dropped so far",
        ])
    }
}
