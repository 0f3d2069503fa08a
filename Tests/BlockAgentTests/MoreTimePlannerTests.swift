import BlockCore
import Foundation
import Testing
@testable import BlockAgent

/// M4: the agent's more-time buttons and notifications without a bus. The daemon decides
/// what a button would get (the event's `more`); the agent only shows it (S4), keeps the
/// asker's request and its answer in one slot (S2), and gives administrators Approve/Deny.
@Suite struct MoreTimePlannerTests {
    static let now = PlannerTests.now
    static let all = PlannerTests.all
    static let me = 1000

    func planner(_ language: Language) -> NotificationPlanner { NotificationPlanner(language: language, clock: PlannerTests.tokyo) }

    /// The shield hit with `more` as the daemon sent it (a word this build may not know).
    static func denied(more: String?) -> WatchEvent {
        guard case .shieldHit(var hit) = PlannerTests.denied() else { fatalError("not a shield hit") }
        hit.more = more.map(WireWord.init)
        return .shieldHit(hit)
    }

    /// The event with `kind` as the daemon sent it (a word this build may not know).
    static func note(_ kind: String, uid: Int, until: String? = "2026-11-29T13:50:00+09:00", id: String = "m3") -> WatchEvent.MoreTime {
        guard case .moreTime(var m) = WatchEvent.moreTime(time: "2026-11-29T13:06:00+09:00", kind: .asked, id: id, selection: "discord",
                                                           until: until, message: "words", uid: UInt32(uid)) else { fatalError("not a more-time event") }
        m.kind = WireWord(kind)
        return m
    }

    @Test("M4, S4: the shield's button is what the daemon said `more discord 15m` would get, and nothing when it said nothing", arguments: [
        (String?.none, String?.none, Int?.none), ("grant", "15 more minutes", 900), ("ask", "Ask for more time", 900),
        ("minute", "One more minute", 60), ("bogus", nil, nil),
    ])
    func shieldButton(more: String?, label: String?, seconds: Int?) throws {
        let plan = try #require(planner(.en).plan(MoreTimePlannerTests.denied(more: more), selection: nil, now: MoreTimePlannerTests.now,
                                                  abilities: MoreTimePlannerTests.all, viewer: .init(uid: MoreTimePlannerTests.me)))
        #expect(plan.buttons.map(\.label) == (label.map { [$0] } ?? []))
        if let seconds {
            #expect(plan.buttons.first?.key == "more")
            #expect(plan.buttons.first?.request == .more(.init(selection: "discord", seconds: seconds)))
        }
    }

    @Test("A1: a lock for everyone offers more time to an administrator's agent only; a lock for kid offers it to kid")
    func noButtonForEveryoneToMembers() throws {
        let everyone = WatchEvent.lock(time: "2026-11-29T13:06:00+09:00", selection: "discord", until: "2026-11-29T14:00:00+09:00", reasons: ["focus"])
            .offering(.grant)
        let kids = WatchEvent.lock(time: "2026-11-29T13:06:00+09:00", selection: "discord", until: "2026-11-29T14:00:00+09:00", reasons: ["bedtime"],
                                   users: [UInt32(MoreTimePlannerTests.me)]).offering(.ask)
        func labels(_ e: WatchEvent, admin: Bool) throws -> [String] {
            try #require(planner(.en).plan(e, selection: nil, now: MoreTimePlannerTests.now, abilities: MoreTimePlannerTests.all,
                                           viewer: .init(uid: MoreTimePlannerTests.me, isAdmin: admin))).buttons.map(\.label)
        }
        #expect(try labels(everyone, admin: false) == [], "a member's agent would offer what blockd refuses")
        #expect(try labels(everyone, admin: true) == ["15 more minutes"])
        #expect(try labels(kids, admin: false) == ["Ask for more time"])
    }

    @Test("M4, S4: no more-time button without the server's actions, nor while our own request waits")
    func noDeadButton() throws {
        let p = planner(.en)
        let noActions = try #require(p.plan(MoreTimePlannerTests.denied(more: "ask"), selection: nil, now: MoreTimePlannerTests.now,
                                            abilities: .init(serverActions: false, opener: true)))
        #expect(noActions.buttons.isEmpty)
        let waiting = try #require(p.plan(MoreTimePlannerTests.denied(more: "ask"), selection: nil, now: MoreTimePlannerTests.now,
                                          abilities: MoreTimePlannerTests.all, viewer: .init(uid: MoreTimePlannerTests.me, asked: ["discord"])))
        #expect(waiting.buttons.isEmpty, "a second request would be refused")
    }

    @Test("M4, S2, S6: our request shows \"Asked for more time\" in the selection's slot and its answer replaces it", arguments: [
        (Language.en, "asked", "Asked for more time", "You will be told the answer for discord."),
        (.en, "granted", "More time for discord", "Available until 13:50 — 44 min left."),
        (.en, "denied", "No more time for discord", "The request was denied."),
        (.en, "expired", "No answer about discord", "The request for more time expired unanswered."),
        (.ja, "asked", "時間の延長を頼みました", "discordについての返事をお知らせします。"),
        (.ja, "granted", "discordの時間が延長されました", "13:50まで使えます（残り44分）。"),
        (.ja, "denied", "discordの延長は認められませんでした", "延長の頼みは断られました。"),
    ])
    func askerSees(language: Language, kind: String, summary: String, body: String) throws {
        let plans = planner(language).planMoreTime(MoreTimePlannerTests.note(kind, uid: MoreTimePlannerTests.me), selection: nil,
                                                   now: MoreTimePlannerTests.now, abilities: MoreTimePlannerTests.all,
                                                   viewer: .init(uid: MoreTimePlannerTests.me))
        let plan = try #require(plans.first)
        #expect(plans.count == 1)
        #expect((plan.summary, plan.body) == (summary, body))
        #expect(plan.slotKey == "discord", "S2: the same slot as the shield notification")
        #expect(plan.buttons.isEmpty)
    }

    @Test("M5, S2, S6: a grant another activity still holds says so in the answer's slot, with when that ends; one that lifts all does not", arguments: [
        (Language.en, "nothing", "2026-11-29T14:30:00+09:00", "It lifts nothing yet: discord stays blocked by another activity until 14:30."),
        (.en, "some", "2026-11-29T14:30:00+09:00", "Part of discord stays blocked by another activity until 14:30."),
        (.en, "nothing", nil, "It lifts nothing yet: discord stays blocked by another activity until later."),
        (.en, "all", nil, "Available until 13:50 — 44 min left."),
        (.ja, "nothing", "2026-11-29T14:30:00+09:00", "まだ何も解除されません。discordは別のブロックにより14:30までブロックされたままです。"),
        (.ja, "some", "2026-11-29T14:30:00+09:00", "discordの一部は別のブロックにより14:30までブロックされたままです。"),
    ] as [(Language, String, String?, String)])
    func heldGrant(language: Language, lifts: String, heldUntil: String?, body: String) throws {
        var event = MoreTimePlannerTests.note("granted", uid: MoreTimePlannerTests.me)
        (event.lifts, event.heldUntil) = (WireWord(lifts), heldUntil)
        let plans = planner(language).planMoreTime(event, selection: nil, now: MoreTimePlannerTests.now, abilities: MoreTimePlannerTests.all,
                                                   viewer: .init(uid: MoreTimePlannerTests.me))
        let plan = try #require(plans.first)
        #expect(plans.count == 1 && plan.body == body && plan.slotKey == "discord")
    }

    @Test("M4: someone else's request or answer is not shown to a plain user")
    func othersNotShown() {
        for kind in ["asked", "granted", "denied", "expired", "ended", "cancelled"] {
            #expect(planner(.en).planMoreTime(MoreTimePlannerTests.note(kind, uid: 1001), selection: nil, now: MoreTimePlannerTests.now,
                                              abilities: MoreTimePlannerTests.all, viewer: .init(uid: MoreTimePlannerTests.me)).isEmpty)
        }
    }

    @Test("M4, §8: a more-time kind or an offer of a newer daemon plans nothing: no notification, no button, no slot replaced",
          arguments: ["paused", "", "Asked", "granted "])
    func newerWords(kind: String) throws {
        var showing = NotificationPlanner.Viewer(uid: MoreTimePlannerTests.me, isAdmin: true)
        showing.requests = ["m3"]
        for viewer in [showing, .init(uid: MoreTimePlannerTests.me)] {
            #expect(planner(.en).planMoreTime(MoreTimePlannerTests.note(kind, uid: MoreTimePlannerTests.me), selection: nil,
                                              now: MoreTimePlannerTests.now, abilities: MoreTimePlannerTests.all, viewer: viewer).isEmpty)
        }
        let hit = try #require(planner(.en).plan(MoreTimePlannerTests.denied(more: kind), selection: nil, now: MoreTimePlannerTests.now,
                                                 abilities: MoreTimePlannerTests.all, viewer: showing))
        #expect(hit.buttons.isEmpty, "S4: an offer this build does not know is no button")
        #expect(hit.summary == (try #require(planner(.en).plan(MoreTimePlannerTests.denied(more: nil), selection: nil, now: MoreTimePlannerTests.now,
                                                                abilities: MoreTimePlannerTests.all, viewer: showing))).summary)
    }

    @Test("S1, §8: a shield hit of a kind the agent does not know is not shown; the launches it knows are")
    func newerHitKinds() throws {
        func plan(_ kind: String) -> PlannedNotification? {
            planner(.en).plan(WatchEvent(["event": "shield-hit", "time": "2026-11-29T13:06:00+09:00", "kind": .string(kind), "selection": "discord",
                                          "path": "/usr/bin/discord", "until": .null]),
                              selection: nil, now: MoreTimePlannerTests.now, abilities: MoreTimePlannerTests.all)
        }
        #expect(plan("throttled") == nil && plan("") == nil && plan("tamper") == nil)
        #expect(plan("denied-launch") != nil && plan("killed") != nil)
    }

    @Test("M4, S4: an administrator gets a request with Approve and Deny in a slot of its own; the answer replaces it (S2)")
    func administrator() throws {
        let p = planner(.en)
        let admin = NotificationPlanner.Viewer(uid: 0, isAdmin: true)
        let asked = try #require(p.planMoreTime(MoreTimePlannerTests.note("asked", uid: 1001), selection: nil, now: MoreTimePlannerTests.now,
                                                abilities: MoreTimePlannerTests.all, viewer: admin).first)
        #expect(asked.summary == "More time asked for discord")
        #expect(asked.body == "Answer before 13:50, or the request expires.")
        #expect(asked.slotKey == "more-time m3")
        #expect(asked.buttons.map(\.label) == ["Approve", "Deny"])
        #expect(asked.buttons.map(\.request) == [.approve(id: "m3", seconds: nil), .deny(id: "m3", reason: nil)])
        let bare = p.planMoreTime(MoreTimePlannerTests.note("asked", uid: 1001), selection: nil, now: MoreTimePlannerTests.now,
                                  abilities: .init(serverActions: false, opener: false), viewer: admin)
        #expect(bare.first?.buttons == [], "S4: no buttons on a server without actions")

        var showing = admin
        showing.requests = ["m3"]
        let granted = try #require(p.planMoreTime(MoreTimePlannerTests.note("granted", uid: 1001), selection: nil, now: MoreTimePlannerTests.now,
                                                  abilities: MoreTimePlannerTests.all, viewer: showing).first)
        #expect(granted.slotKey == "more-time m3")
        #expect(granted.summary == "More time for discord")
        #expect(granted.buttons.isEmpty)
        #expect(p.planMoreTime(MoreTimePlannerTests.note("granted", uid: 1001), selection: nil, now: MoreTimePlannerTests.now,
                               abilities: MoreTimePlannerTests.all, viewer: admin).isEmpty, "no request on screen, nothing to replace")
    }

    @Test("M4: a button's request is found for our id and key only, and goes with the notification it belonged to")
    func slotsKeepRequests() {
        var slots = NotificationSlots()
        let more = Request.more(.init(selection: "discord", seconds: 900))
        slots.record(id: 7, selection: "discord", url: nil, requests: ["more": more])
        #expect(slots.request(forAction: 7, key: "more") == more)
        #expect(slots.request(forAction: 7, key: "open") == nil)
        #expect(slots.request(forAction: 8, key: "more") == nil)
        slots.record(id: 9, selection: "discord", url: nil)
        #expect(slots.request(forAction: 7, key: "more") == nil, "replaced: the old id's buttons are gone")
        slots.record(id: 10, selection: "more-time m3", url: nil, requests: ["approve": .approve(id: "m3", seconds: nil)])
        slots.closed(id: 10)
        #expect(slots.request(forAction: 10, key: "approve") == nil)
    }

    @Test("M4: the agent remembers its own pending request until the answer, and which request slots it shows")
    func memory() {
        var m = MoreTimeMemory()
        m.note(.moreTime(MoreTimePlannerTests.note("asked", uid: 1001)), uid: MoreTimePlannerTests.me)
        #expect(m.asked.isEmpty)
        m.note(.moreTime(MoreTimePlannerTests.note("asked", uid: MoreTimePlannerTests.me)), uid: MoreTimePlannerTests.me)
        #expect(m.asked == ["discord"])
        m.note(.moreTime(MoreTimePlannerTests.note("denied", uid: MoreTimePlannerTests.me)), uid: MoreTimePlannerTests.me)
        #expect(m.asked.isEmpty)
        let request = PlannedNotification(selection: "discord", summary: "", body: "", action: nil, urgency: 1,
                                          buttons: [.init(key: "approve", label: "Approve", request: .approve(id: "m3", seconds: nil))],
                                          slot: "more-time m3")
        m.shown(request)
        #expect(m.requests == ["m3"])
        var answer = request
        answer.buttons = []
        m.shown(answer)
        #expect(m.requests.isEmpty)
    }
}
