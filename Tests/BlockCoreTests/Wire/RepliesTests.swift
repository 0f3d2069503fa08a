import BlockCore
import Foundation
import Testing
import ZoneInfo

/// The `status` objects clients read back: Shapes encodes them through ActivityReply,
/// BlockedReply and FailureReply, and blockc decodes them with the same types.
@Suite("status replies: one encoder, one decoder (§6)")
struct RepliesTests {
    static let tokyo = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
    static let now = try! TimeText.parseISO8601WithOffset("2026-11-29T13:05:00.000+09:00")
    static let shapes = Shapes(clock: tokyo)

    static let activities: [Activity] = [
        .block(Block(name: "instagram", selections: ["instagram"], start: now, end: now + 1800, origin: .client(uid: 1000))),
        .schedule(Schedule(name: "bedtime", selections: ["reddit"], days: try! WeekdaySet.parse("mon-fri"),
                           start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0), origin: .config(file: "/b.conf"))),
        .limit(Limit(name: "games", selections: ["steam"], seconds: 3600)),
    ]

    @Test("an activity decodes to what was encoded, key for key", arguments: activities)
    func activityRoundTrip(activity: Activity) throws {
        let reply = RepliesTests.shapes.activityReply(activity, at: RepliesTests.now)
        let object = try #require(RepliesTests.shapes.activity(activity, at: RepliesTests.now).object)
        #expect(object == reply.json)
        #expect(ActivityReply(object) == reply)
    }

    @Test("the wire shape of an activity is pinned: an inactive schedule has no 'remaining'")
    func activityShape() throws {
        let block = JSON.object(RepliesTests.shapes.activityReply(RepliesTests.activities[0], at: RepliesTests.now).json).serialized()
        #expect(block == #"{"name":"instagram","kind":"block","selections":["instagram"],"active":true,"start":"2026-11-29T13:05:00.000+09:00","end":"2026-11-29T13:35:00.000+09:00","locked":false,"remaining":1800,"origin":"client","uid":1000}"#)
        let schedule = RepliesTests.shapes.activityReply(RepliesTests.activities[1], at: RepliesTests.now)
        #expect(!schedule.active && schedule.remaining == nil && schedule.window == "22:00-07:00" && schedule.days == "mon-fri")
        #expect(schedule.json.keys == ["name", "kind", "selections", "active", "start", "end", "locked", "window", "days", "origin", "file"])
    }

    @Test("blocked and failure objects round-trip; a null end and a missing uid stay so")
    func blockedAndFailure() {
        let blocked = BlockedReply(selection: "x", until: nil, reasons: ["a"])
        #expect(JSON.object(blocked.json).serialized() == #"{"selection":"x","until":null,"reasons":["a"]}"#)
        #expect(BlockedReply(blocked.json) == blocked)
        let failure = FailureReply(time: "2026-11-29T12:58:00.000+09:00", code: "hook", message: "m", activity: "b")
        #expect(JSON.object(failure.json).serialized() == #"{"time":"2026-11-29T12:58:00.000+09:00","code":"hook","message":"m","activity":"b"}"#)
        #expect(FailureReply(failure.json) == failure)
        #expect(ActivityReply(["name": 5, "active": "yes"]).name == "" && !ActivityReply(["active": "yes"]).active, "wrong types read as absent")
    }

    static let grant = GrantReply(id: "m1", selection: "steam", start: "2026-11-29T13:05:00.000+09:00", end: "2026-11-29T13:20:00.000+09:00",
                                  uid: 1000, user: "kid", activities: ["focus", "games"], allowance: ["games"], grantedBy: 0,
                                  grantedByUser: "root", reason: "homework")
    static let request = MoreTimeRequestReply(id: "m2", selection: "steam", asked: "2026-11-29T13:00:00.000+09:00",
                                              expires: "2026-11-29T14:00:00.000+09:00", uid: 1000, user: "kid", activities: ["games"], seconds: 900)
    static let delayed = DelayedReply(name: "work", kind: .stop, uid: 1000, user: "kid", at: "2026-11-29T13:07:00.000+09:00")

    /// The lines blockd writes today (Engine+Delay.swift: grantJSON, requestJSON, looseningJSON;
    /// Engine+MoreTime.swift: deny's and cancel's answers), key for key and in order.
    @Test("M1-M3, M5: the more-time answers encode as blockd sends them, and decode to what was encoded", arguments: [
        (MoreReply.granted(grant).json, #"{"id":"m1","selection":"steam","state":"granted","start":"2026-11-29T13:05:00.000+09:00","end":"2026-11-29T13:20:00.000+09:00","uid":1000,"activities":["focus","games"],"allowance":["games"],"grantedBy":0,"user":"kid","grantedByUser":"root","reason":"homework"}"#),
        (GrantReply(id: "m3", selection: "x", start: "s", end: "e", uid: 7, user: "u").json,
         #"{"id":"m3","selection":"x","state":"granted","start":"s","end":"e","uid":7,"activities":[],"grantedBy":null,"user":"u"}"#),
        // M1, M5: the answer to `more` says what NAME was taken as and what still holds the selection.
        ({ var g = GrantReply(id: "m4", selection: "steam", start: "s", end: "e", activities: ["games"], allowance: ["games"])
           (g.named, g.also, g.lifts) = (.known(.limit), .known(.selection), .known(.nothing))
           g.held = [HeldReply(selection: "steam", activity: "bedtime", kind: .known(.schedule), moreTime: .known(.no), locked: false, until: "u")]
           return MoreReply.granted(g).json }(),
         #"{"id":"m4","selection":"steam","state":"granted","start":"s","end":"e","activities":["games"],"allowance":["games"],"grantedBy":null,"named":"limit","also":"selection","lifts":"nothing","held":[{"selection":"steam","activity":"bedtime","kind":"schedule","moreTime":"no","locked":false,"until":"u"}]}"#),
        (MoreReply.pending(request).json, #"{"id":"m2","selection":"steam","state":"pending","asked":"2026-11-29T13:00:00.000+09:00","expires":"2026-11-29T14:00:00.000+09:00","uid":1000,"activities":["games"],"seconds":900,"user":"kid"}"#),
        (RemovalReply.delayed(delayed).json, #"{"pending":"work","kind":"stop","uid":1000,"user":"kid","at":"2026-11-29T13:07:00.000+09:00"}"#),
        (RemovalReply.stopped("work").json, #"{"stopped":"work"}"#),
        (RemovalReply.removed("bedtime").json, #"{"removed":"bedtime"}"#),
        (DeniedReply(id: "m2", selection: "steam").json, #"{"denied":"m2","selection":"steam"}"#),
        (CancelledReply(name: "m2", kind: .request).json, #"{"cancelled":"m2","kind":"request"}"#),
    ] as [(JSONObject, String)])
    func moreTimeShapes(object: JSONObject, line: String) throws {
        #expect(JSON.object(object).serialized() == line)
        let read = try #require(try JSON.parse(line).object)
        if read["state"] != nil { #expect(MoreReply(read).json == object) }
        if read["pending"] != nil || read["stopped"] != nil || read["removed"] != nil { #expect(RemovalReply(read).json == object) }
        if read["denied"] != nil { #expect(DeniedReply(read).json == object) }
        if read["cancelled"] != nil { #expect(CancelledReply(read).json == object) }
    }

    @Test("M2-M4: requests decodes its three lists and admin; status's more-time keys decode the same; a newer state is kept whole")
    func requestsAndUnknown() {
        let reply = RequestsReply(requests: [RepliesTests.request], grants: [RepliesTests.grant], delayed: [RepliesTests.delayed], admin: true)
        #expect(Array(reply.json.keys) == ["requests", "grants", "delayed", "admin"])
        #expect(RequestsReply(reply.json) == reply)
        var status = reply.json
        (status["admin"], status["blocked"]) = (nil, [])
        #expect(RequestsReply(status).admin == nil && RequestsReply(status).grants == [RepliesTests.grant])
        let newer: JSONObject = ["id": "m9", "state": "queued"]
        #expect(MoreReply(newer) == .unknown(newer))
        #expect(RemovalReply(["stopped": 5]) == .removed(""), "wrong types read as absent")
    }

    @Test("§6: hello's answer encodes as blockd sends it and decodes to what was encoded; a stranger's without the keys reads as unknown")
    func hello() throws {
        let line = #"{"protocol":\#(BlockdVersion.protocolVersion),"version":"\#(BlockdVersion.version)","daemon":"blockd"}"#
        #expect(JSON.object(HelloReply.current.json).serialized() == line)
        #expect(HelloReply(try #require(try JSON.parse(line).object)) == HelloReply.current)
        #expect(HelloReply(["protocol": "1", "daemon": 7]) == HelloReply(daemon: nil, version: nil, protocolVersion: nil), "wrong types read as absent")
    }

    @Test("§6, T4: failures-clear's and reload's answers encode as blockd sends them and decode to what was encoded")
    func clearedAndReload() throws {
        #expect(JSON.object(ClearedReply(cleared: 3).json).serialized() == #"{"cleared":3}"#)
        #expect(ClearedReply(["cleared": 3]) == ClearedReply(cleared: 3))
        let reload = ReloadReply(files: 2, problems: ["schedule 'x' is not in force"])
        #expect(JSON.object(reload.json).serialized() == #"{"reloaded":2,"problems":["schedule 'x' is not in force"]}"#)
        #expect(ReloadReply(reload.json) == reload)
        #expect(ReloadReply(["reloaded": "2", "problems": 7]) == ReloadReply(files: 0, problems: []), "wrong types read as absent")
    }

    @Test("§7, T10: start's answer is the block's activity with outcome and enforced, notEnforced only when something is not; it decodes to what was encoded")
    func start() throws {
        let block = RepliesTests.activities[0]
        var sent = try #require(RepliesTests.shapes.activity(block, at: RepliesTests.now).object)
        (sent["outcome"], sent["enforced"]) = ("extended", true)
        let reply = StartReply(block: RepliesTests.shapes.activityReply(block, at: RepliesTests.now), outcome: .extended, notEnforced: [])
        #expect(JSON.object(reply.json).serialized() == JSON.object(sent).serialized())
        #expect(StartReply(sent) == reply)
        let missing = [NotEnforcedReply(selection: "instagram", cause: "the hosts file is read-only")]
        let refused = StartReply(block: reply.block, outcome: .created, notEnforced: missing)
        #expect(!refused.enforced && refused.json["enforced"] == false)
        #expect(refused.json["notEnforced"] == [["selection": "instagram", "cause": "the hosts file is read-only"]])
        #expect(StartReply(refused.json) == refused)
        sent["enforced"] = nil
        #expect(StartReply(sent).enforced, "an older daemon that does not say is taken at its word")
    }

    @Test("R2: report's answer decodes once into days of figures, limits and the period before; a wrong type is 0, a missing part empty")
    func report() throws {
        let line = #"{"schema":1,"from":"2026-11-28","to":"2026-11-29","period":"days","user":1001,"days":[{"date":"2026-11-28","weekday":"sat","blocked":{"games":60},"apps":{"/usr/bin/steam":120},"foreground":{},"used":{"games":120},"shieldHits":{"games":2},"limits":{"games":{"used":120,"allowance":3600,"selections":["games"]}},"counts":{"started":1}},{"date":"2026-11-29","weekday":"sun","apps":{"x":"7"},"limits":{"old":5}}],"previous":{"from":"2026-11-26","to":"2026-11-27","blocked":{"games":30},"used":{}}}"#
        let r = ReportReply(try #require(try JSON.parse(line).object))
        #expect(r.user == 1001 && r.period == .known(.days) && r.days.map(\.date) == ["2026-11-28", "2026-11-29"])
        #expect(r.days[0].blocked == ["games": 60] && r.days[0].apps == ["/usr/bin/steam": 120] && r.days[0].shieldHits == ["games": 2])
        #expect(r.days[0].limits["games"] == ReportReply.LimitDay(["used": 120, "allowance": 3600, "selections": ["games"]]))
        #expect(r.days[0].limits["games"]?.selections == ["games"] && r.days[0].counts == ["started": 1])
        #expect(r.days[1].apps == ["x": 0], "a figure of the wrong type is still there, as 0")
        #expect(r.days[1].blocked.isEmpty && r.days[1].limits["old"]?.used == nil, "a missing map is empty, a limit that is not an object has nothing")
        #expect(r.days[0].used == ["games": 120] && r.days[1].used == nil, "an answer without used (an older daemon's) says so")
        #expect(r.previous?.from == "2026-11-26" && r.previous?.blocked == ["games": 30] && r.previous?.used == [:])
        #expect(ReportReply(["days": [1, "x"]]) == ReportReply([:]) && ReportReply([:]).previous == nil && ReportReply([:]).user == nil)
    }

    @Test("R2: report's answer encodes every map in the order of its names, users on the machine's view only, and decodes to what was encoded")
    func reportEncodes() throws {
        let day = ReportReply.Day(date: "2026-11-28", weekday: "sat", blocked: ["x": 5, "games": 60], used: ["games": 120],
                                  apps: ["/usr/bin/steam": 120], users: ["1001": 90], counts: ["started": 1], shieldHits: ["games": 2],
                                  limits: ["zz": .init(used: 0, allowance: 60, selections: ["z"]), "games": .init(used: 120, allowance: nil, selections: ["games"])])
        let previous = ReportReply.Previous(from: "2026-11-26", to: "2026-11-27", blocked: ["games": 30], used: [:])
        let member = ReportReply(schema: 1, from: "2026-11-28", to: "2026-11-28", period: .known(.days), user: 1001, days: [day], previous: previous)
        #expect(JSON.object(member.json).serialized() == #"{"schema":1,"from":"2026-11-28","to":"2026-11-28","period":"days","user":1001,"days":[{"date":"2026-11-28","weekday":"sat","blocked":{"games":60,"x":5},"apps":{"/usr/bin/steam":120},"foreground":{},"web":{},"used":{"games":120},"shieldHits":{"games":2},"limits":{"games":{"used":120,"selections":["games"]},"zz":{"used":0,"selections":["z"],"allowance":60}},"counts":{"started":1}}],"previous":{"from":"2026-11-26","to":"2026-11-27","blocked":{"games":30},"used":{}}}"#)
        var machine = member
        machine.user = nil
        #expect(JSON.object(machine.json).serialized().contains(#""used":{"games":120},"users":{"1001":90},"shieldHits""#))
        #expect(ReportReply(machine.json) == machine)
        var memberDay = member
        memberDay.days[0].users = [:]
        #expect(ReportReply(member.json) == memberDay, "a member's view carries no users")
        var older = memberDay
        older.days[0].used = nil
        #expect(!JSON.object(older.json).serialized().contains(#""used":{"games""#) && ReportReply(older.json) == older, "no used, none written")
    }

    @Test("§7, E5, E7, W2: status decodes once: counts, cap, next change and the enforcement's parts; an older daemon's missing parts read as absent")
    func status() throws {
        let line = #"{"blocked":[{"selection":"x","until":null,"reasons":["a"]}],"activities":[],"failures":[],"counts":{"activities":3,"schedules":"2"},"maxActivities":100000,"nextTransition":"2026-11-29T14:00:00+09:00","requests":[],"enforcement":{"mode":"hosts","off":[{"part":"apps","why":"AppShield=no"}],"notEnforced":[{"selection":"x","cause":"read-only"}],"unblockPending":[],"cutSockets":true,"socketsCut":4,"firewall":{"enabled":true,"learned":2,"allowOnly":[{"uids":[1001],"hosts":3,"addresses":["192.0.2.1"]},7]},"dns":{"problem":"p","failed":1,"lookups":9},"browserPolicies":{"browsers":["chromium"],"files":[],"closed":["private windows"],"firefoxPrivateClosed":true}}}"#
        let s = StatusReply(try #require(try JSON.parse(line).object))
        #expect(s.blocked == [BlockedReply(selection: "x", until: nil, reasons: ["a"])] && s.activities.isEmpty)
        #expect(s.counts == ["activities": 3] && s.maxActivities == 100_000 && s.nextTransition == "2026-11-29T14:00:00+09:00", "a count of the wrong type is absent")
        let e = s.enforcement
        #expect(e.mode == "hosts" && e.off == [.init(part: "apps", why: "AppShield=no")] && e.notEnforced == [NotEnforcedReply(selection: "x", cause: "read-only")])
        #expect(e.cutSockets == true && e.socketsCut == 4 && e.firewall?.enabled == true && e.firewall?.learned == 2)
        #expect(e.firewall?.allowOnly == [.init(uids: [1001], hosts: 3, addresses: ["192.0.2.1"])], "a window that is not an object is left out")
        #expect(e.dns == .init(problem: "p", failed: 1, lookups: 9))
        #expect(e.browserPolicies?.browsers == ["chromium"] && e.browserPolicies?.closed == ["private windows"] && e.browserPolicies?.firefoxPrivateClosed == true)
        let older = StatusReply(["blocked": [], "activities": []])
        #expect(older.maxActivities == nil && older.counts.isEmpty && older.enforcement == EnforcementReply([:]))
        #expect(older.enforcement.mode == nil && older.enforcement.firewall == nil && older.enforcement.cutSockets == nil)
    }

    @Test("S5: stats decodes the shield's hits per day and selection in the order sent; a wrong type reads as empty or 0")
    func stats() {
        let o: JSONObject = ["shieldHits": [["day": "2026-11-29", "selection": "games", "hits": 3], ["day": "2026-11-29", "selection": "x", "hits": "2"], 5]]
        #expect(StatsReply(o).shieldHits == [.init(day: "2026-11-29", selection: "games", hits: 3), .init(day: "2026-11-29", selection: "x", hits: 0)])
        #expect(StatsReply([:]).shieldHits.isEmpty)
    }

    @Test("S1, S6: a selection encodes as Shapes sends it, texts sorted, and decodes to what was encoded")
    func selection() throws {
        let s = Selection(name: "reddit", domains: ["reddit.com"], paths: ["reddit.com/r/all"], openURL: "https://example.org/",
                          texts: ["ShieldBody[ja]": "後で", "ShieldBody": "Later"], firewall: true)
        let object = try #require(RepliesTests.shapes.selection(s).object)
        #expect(JSON.object(object).serialized() == #"{"name":"reddit","domains":["reddit.com"],"apps":[],"paths":["reddit.com/r/all"],"openURL":"https://example.org/","firewall":true,"texts":{"ShieldBody":"Later","ShieldBody[ja]":"後で"}}"#)
        #expect(SelectionReply(object) == SelectionReply(name: "reddit", domains: ["reddit.com"], paths: ["reddit.com/r/all"],
                                                         openURL: "https://example.org/", firewall: true, texts: s.texts))
        let plain = try #require(RepliesTests.shapes.selection(Selection(name: "x")).object)
        #expect(JSON.object(plain).serialized() == #"{"name":"x","domains":[],"apps":[],"paths":[],"openURL":null,"texts":{}}"#)
    }

    @Test("§6: the listings' containers encode as documented and decode to what was encoded; items that are not objects are skipped")
    func lists() throws {
        let a = ActivityReply(name: "bed", kind: .schedule, selections: ["x"], active: false, start: nil, end: nil, locked: false, origin: .client)
        #expect(JSON.object(ListReply(.schedules, [a]).json).serialized() == #"{"schedules":[{"name":"bed","kind":"schedule","selections":["x"],"active":false,"start":null,"end":null,"locked":false,"origin":"client"}]}"#)
        #expect(ListReply<ActivityReply>(.schedules, from: ListReply(.schedules, [a]).json).items == [a])
        #expect(JSON.object(ListReply<ActivityReply>(.limits, []).json).serialized() == #"{"limits":[]}"#)
        #expect(ListReply<ActivityReply>(.limits, from: ["limits": [.object(a.json), 3]]).items == [a], "an item that is not an object is skipped")
        let s = SelectionReply(name: "x", domains: ["x.example"])
        #expect(JSON.object(ListReply(.selections, [s]).json).serialized() == #"{"selections":[{"name":"x","domains":["x.example"],"apps":[],"paths":[],"openURL":null,"texts":{}}]}"#)
        #expect(ListReply<SelectionReply>(.selections, from: ListReply(.selections, [s]).json).items == [s])
        #expect(SelectionShowReply(SelectionShowReply(selection: s).json).selection == s)
        #expect(SelectionShowReply(s.json).selection == s, "an answer without the container is the selection itself")
        let f = FailureReply(time: nil, code: "hook", message: "m", uid: 1001)
        #expect(JSON.object(ListReply(.failures, [f]).json).serialized() == #"{"failures":[{"time":null,"code":"hook","message":"m","uid":1001}]}"#)
        #expect(ListReply<FailureReply>(.failures, from: ListReply(.failures, [f]).json).items == [f])
        let hits = StatsReply(shieldHits: [.init(day: "2026-11-29", selection: "games", hits: 3)])
        #expect(JSON.object(hits.json).serialized() == #"{"shieldHits":[{"day":"2026-11-29","selection":"games","hits":3}]}"#)
        #expect(StatsReply(hits.json) == hits)
    }

    @Test("S3: watch's greeting encodes as it always did and decodes to what was encoded")
    func watching() {
        #expect(JSON.object(WatchingReply(protocolVersion: 1).json).serialized() == #"{"watching":true,"protocol":1}"#)
        #expect(WatchingReply(WatchingReply().json) == WatchingReply())
        #expect(WatchingReply([:]) == WatchingReply(watching: false, protocolVersion: nil), "an older daemon's missing keys read as absent")
    }

    @Test("§6: status is written in the documented order, the more-time lists, who is kept off the screen and a view's viewer after the server's counters, and read back by StatusReply")
    func statusDocument() throws {
        let counts = StatusCounts(activities: 3, active: 1, blocks: 1, schedules: 2, limits: 0)
        var d = StatusDocument(answeredAt: "2026-11-29T13:05:00.000+09:00", timeZone: "Asia/Tokyo",
                               blocked: [BlockedReply(selection: "x", until: nil, reasons: ["a"])], activities: [], failures: [],
                               all: false, counts: counts, enforcement: ["mode": "hosts"], nextTransition: nil, maxActivities: 100,
                               server: ["connections": 1], moreTime: RequestsReply())
        #expect(JSON.object(d.json).serialized() == #"{"schema":1,"now":"2026-11-29T13:05:00.000+09:00","timeZone":"Asia/Tokyo","blocked":[{"selection":"x","until":null,"reasons":["a"]}],"activities":[],"failures":[],"all":false,"counts":{"activities":3,"active":1,"blocks":1,"schedules":2,"limits":0},"enforcement":{"mode":"hosts"},"nextTransition":null,"maxActivities":100,"server":{"connections":1},"requests":[],"grants":[],"delayed":[],"screen":[]}"#)
        d.viewer = 1001
        #expect(JSON.object(d.json).serialized().hasSuffix(#""delayed":[],"screen":[],"viewer":1001}"#))
        let read = StatusReply(d.json)
        #expect(read.blocked == d.blocked && read.counts == ["activities": 3, "active": 1, "blocks": 1, "schedules": 2, "limits": 0])
        #expect(read.maxActivities == 100 && read.nextTransition == nil && read.enforcement.mode == "hosts")
    }
}
