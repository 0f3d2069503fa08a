import BlockClient
import BlockCore
import Foundation
import Testing

@Suite("blockc answers, lists and events")
struct ResultTextTests {
    @Test("start says what happened: created, extended, or T10's 'never shortened'",
          arguments: [
              ("created", Fixture.instagramBlock, "Blocked instagram until 13:35 (30m left)."),
              ("extended", Fixture.instagramBlock, "Extended the block on instagram until 13:35 (30m left)."),
              ("unchanged", Fixture.instagramBlock,
               "instagram is already blocked until 13:35 (30m left); a block is extended, never shortened."),
              ("created", Fixture.studyBlock,
               "Blocked reddit, youtube until Mon 30 Nov 07:00 (17h55m left) (block 'study'). It is locked: nobody can stop it early."),
          ])
    func start(outcome: String, activity: JSON, expected: String) {
        #expect(Fixture.output().start(Fixture.start(activity, outcome: outcome)) == expected)
    }

    @Test("§9: limit list on an administrator's view says each person's day after their own")
    func limitPeople() {
        let games: JSON = ["name": "games", "kind": "limit", "selections": ["steam"], "active": false, "start": nil, "end": nil, "locked": false,
                           "limit": 3600, "days": "daily", "used": 0, "left": 3600, "origin": "client", "uid": 0,
                           "people": [["user": "kid", "uid": 1001, "used": 3600, "left": 0, "blocked": true],
                                      ["user": "kid2", "uid": 1003, "used": 1200, "left": 2400, "blocked": false]]]
        let text = Fixture.output().limits(["limits": [games]])
        #expect(text.contains("0s of 1h used today (1h left); kid: reached; kid2: 20m used"), "\(text)")
    }

    @Test("stop, schedule add/remove, failures --clear and reload each answer in one sentence")
    func oneLiners() {
        let out = Fixture.output()
        #expect(out.removal(RemovalReply(["stopped": "instagram"]), kind: "block").hasPrefix("Stopped block 'instagram'."))
        #expect(out.scheduleAdded(Fixture.bedtime.object!)
                == "Added schedule 'bedtime' (daily 22:00-07:00) for instagram, reddit; next window at 22:00 (in 8h55m).")
        #expect(out.removal(RemovalReply(["removed": "bedtime"]), kind: "schedule") == "Removed schedule 'bedtime'.")
        #expect(out.failuresCleared(["cleared": 1]) == "Cleared 1 failure.")
        #expect(out.failuresCleared(["cleared": 3]) == "Cleared 3 failures.")
        #expect(out.reload(["reloaded": 4]) == "Reloaded the configuration (4 files).")
    }

    @Test("M3: more time over a block is a window; over a used-up daily limit it is an amount of use, not a window", arguments: [
        (["state": "granted", "id": "m1", "selection": "instagram", "start": "2026-11-29T13:05:00+09:00",
          "end": "2026-11-29T13:20:00+09:00", "activities": ["focus"], "grantedBy": .null] as JSON,
         "More time for instagram until 13:20 (15m left); blocked again at its end if a reason still holds."),
        (["state": "granted", "id": "m2", "selection": "steam", "start": "2026-11-29T13:05:00+09:00",
          "end": "2026-11-29T13:20:00+09:00", "activities": ["games"], "allowance": ["games"], "grantedBy": .null] as JSON,
         "More time for steam: 15m more use today under limit 'games'; blocked again when it is used up."),
        (["state": "granted", "id": "m3", "selection": "steam", "start": "2026-11-29T13:05:00+09:00",
          "end": "2026-11-29T13:20:00+09:00", "activities": ["focus", "games"], "allowance": ["games"], "grantedBy": .null] as JSON,
         "More time for steam until 13:20 (15m left); blocked again at its end if a reason still holds, and 15m more use today under limit 'games'; blocked again when it is used up."),
    ])
    func grants(reply: JSON, expected: String) {
        #expect(Fixture.output().more(MoreReply(reply.object!)) == expected)
    }

    @Test("M1, M5: more says when it took the name as a limit, which kind a name of both was, and what still blocks the selection, why and what to do",
          arguments: [
        (["state": "granted", "id": "m4", "selection": "steam", "start": "2026-11-29T13:05:00+09:00", "end": "2026-11-29T13:10:00+09:00",
          "activities": ["games"], "allowance": ["games"], "grantedBy": .null, "named": "limit", "lifts": "all", "held": []] as JSON,
         "'games' is a limit: more time is more use of its allowance today. More time for steam: 5m more use today under limit 'games'; blocked again when it is used up."),
        (["state": "granted", "id": "m5", "selection": "youtube", "start": "2026-11-29T13:05:00+09:00", "end": "2026-11-29T13:20:00+09:00",
          "activities": ["focus"], "grantedBy": .null, "named": "selection", "also": "limit", "lifts": "all", "held": []] as JSON,
         "'youtube' is a selection and a limit: this is more time for the selection (blocked for you now). More time for youtube until 13:20 (15m left); blocked again at its end if a reason still holds."),
        (["state": "granted", "id": "m6", "selection": "reddit", "start": "2026-11-29T13:05:00+09:00", "end": "2026-11-29T13:06:00+09:00",
          "activities": ["reddit"], "grantedBy": .null, "named": "selection", "lifts": "some",
          "held": [["selection": "reddit.com", "activity": "focus", "kind": "block", "moreTime": "no", "locked": true, "until": "2026-11-29T14:00:00+09:00"]]] as JSON,
         "More time for reddit until 13:06 (1m left); blocked again at its end if a reason still holds.\nPart of reddit stays blocked by block 'focus' on reddit.com until 14:00 (locked: nobody can lift it)."),
        (["state": "granted", "id": "m7", "selection": "steam", "start": "2026-11-29T13:05:00+09:00", "end": "2026-11-29T13:10:00+09:00",
          "activities": ["games"], "allowance": ["games"], "grantedBy": .null, "named": "limit", "lifts": "nothing",
          "held": [["selection": "steam", "activity": "bedtime", "kind": "schedule", "moreTime": "approval", "locked": false, "until": "2026-11-30T07:00:00+09:00"],
                   ["selection": "games", "activity": "study", "kind": "block", "moreTime": "self", "locked": false, "until": nil]]] as JSON,
         """
         'games' is a limit: more time is more use of its allowance today. More time for steam: 5m more use today under limit 'games'; blocked again when it is used up.
         It lifts nothing now: steam stays blocked by:
           schedule 'bedtime' until Mon 30 Nov 07:00 ('blockc more steam 5m' asks an administrator)
           block 'study' on games with no end in sight ('blockc more games 5m' asks for it too).
         """),
    ])
    func grantsNamedAndHeld(reply: JSON, expected: String) {
        #expect(Fixture.output().more(MoreReply(reply.object!)) == expected)
    }

    @Test("watch: one line per event, in local time",
          arguments: [
              // Built by the daemon's own constructors (WatchEvent), so they cannot drift from what it sends.
              (.object(WatchEvent.unlock(time: "2026-11-29T13:35:00+09:00", selection: "instagram",
                                         why: "timed block 'instagram' ended (30m)").json),
               "13:35 Unblocked instagram: timed block 'instagram' ended (30m)"),
              (.object(WatchEvent.lock(time: "2026-11-29T13:05:00+09:00", selection: "instagram",
                                       until: "2026-11-29T13:35:00+09:00", reasons: ["instagram", "bedtime"]).json),
               "13:05 Blocked instagram until 13:35 (30m left): instagram, bedtime"),
              (.object(WatchEvent.refusal(time: "2026-11-29T12:58:00+09:00", code: "activity-limit",
                                          message: "at most 20 activities").json),
               "12:58 Refused: at most 20 activities"),
              (.object(WatchEvent.failure(time: "2026-11-28T09:00:00+09:00", code: "invalid-config", message: "reload failed").json),
               "Sat 28 Nov 09:00 Failure: reload failed"),
              // What a newer daemon might send: shown as it came.
              (["event": "future-thing", "time": "2026-11-29T13:00:00+09:00", "selection": "reddit"] as JSON,
               "13:00 future-thing {\"selection\":\"reddit\"}"),
              // S5, §9, M3: every event a sentence, with local times.
              (.object(WatchEvent.shieldHit(time: "2026-11-29T13:00:00+09:00", kind: .deniedLaunch, selection: "games",
                                      path: "/usr/games/steam", app: "Steam", until: "2026-11-29T14:05:00+09:00").json),
               "13:00 Denied Steam (/usr/games/steam): games is blocked until 14:05 (1h left)"),
              (.object(WatchEvent.shieldHit(time: "2026-11-29T13:00:00+09:00", kind: .killed, selection: "games",
                                      path: "/usr/games/steam", app: nil, until: nil).json),
               "13:00 Stopped steam (/usr/games/steam): games is blocked"),
              (.object(WatchEvent.tamper(time: "2026-11-29T13:00:00+09:00", kind: .tamper, selection: "reddit",
                                      path: "/etc/hosts", app: nil, until: nil).json),
               "13:00 Repaired /etc/hosts: its blockd lines were changed while reddit is blocked"),
              (.object(WatchEvent.limit(time: "2026-11-29T13:00:00+09:00", activity: "games", selections: ["steam", "discord"],
                                        until: "2026-11-30T00:00:00+09:00").json),
               "13:00 Daily limit 'games' reached: steam, discord blocked until Mon 30 Nov 00:00 (10h55m left)"),
              (.object(WatchEvent.warning(time: "2026-11-29T13:00:00+09:00", activity: "games", selection: "steam",
                                          starts: "2026-11-29T13:10:00+09:00", remaining: "5m").json),
               "13:00 Daily limit 'games': 5m of use left for steam, blocked at 13:10 if it keeps running"),
              (.object(WatchEvent.moreTime(time: "2026-11-29T13:00:00+09:00", kind: .granted, id: "mq3v8k2x1fd", selection: "steam",
                                           until: "2026-11-29T13:20:00+09:00", message: "More time for steam until 2026-11-29T13:20:00.000+09:00").json),
               "13:00 More time for steam granted (request mq3v8k2x1fd): until 13:20 (15m left)"),
              (.object(WatchEvent.moreTime(time: "2026-11-29T13:00:00+09:00", kind: .asked, id: "mq3v8k2x1fd", selection: "steam",
                                           until: "2026-11-29T13:30:00+09:00", message: "kid asks").json),
               "13:00 More time asked for steam (request mq3v8k2x1fd), unanswered it expires at 13:30"),
              (.object(WatchEvent.moreTime(time: "2026-11-29T13:00:00+09:00", kind: .denied, id: "mq3v8k2x1fd", selection: "steam",
                                           until: nil, message: "denied").json),
               "13:00 More time for steam denied (request mq3v8k2x1fd)"),
              // S3: a watcher that fell behind is told how much it missed.
              (.object(WatchEvent.dropped(count: 37, time: "2026-11-29T13:01:00+09:00").json),
               "13:01 (37 events were dropped: this watcher fell behind)"),
              (.object(WatchEvent.dropped(count: 1, time: "2026-11-29T13:01:00+09:00").json),
               "13:01 (1 event was dropped: this watcher fell behind)"),
          ])
    func event(event: JSON, expected: String) {
        #expect(Fixture.output().event(event.object!) == expected)
    }

    @Test("U2, watch: an event for some users says for whom, by name where the uid has one")
    func perUserEvents() {
        var out = Fixture.output()
        out.userName = { [1001: "kid"][$0] }
        let t = "2026-11-29T23:00:00+09:00"
        #expect(out.event(WatchEvent.lock(time: t, selection: "youtube", until: "2026-11-30T07:00:00+09:00", reasons: ["bedtime"], users: [1001]))
                == "23:00 Blocked youtube for kid until Mon 30 Nov 07:00 (17h55m left): bedtime")
        #expect(out.event(WatchEvent.unlock(time: t, selection: "youtube", why: "timed block 'focus' ended (10m)", except: [1001, 1077]))
                == "23:00 Unblocked youtube for everyone but kid, uid 1077: timed block 'focus' ended (10m)")
    }

    @Test("schedule list: one aligned row per schedule, or how to add one")
    func schedules() {
        let out = Fixture.output()
        #expect(out.schedules(["schedules": []]).hasPrefix("No schedules."))
        #expect(out.schedules(["schedules": [Fixture.bedtime]])
                == "bedtime  daily 22:00-07:00  instagram, reddit  next at 22:00 (in 8h55m)  from /etc/blockd/schedules.d/bedtime.conf")
    }

    @Test("selections and selections show")
    func selections() {
        let out = Fixture.output()
        let list = out.selections(["selections": [
            ["name": "instagram", "domains": ["instagram.com", "www.instagram.com", "cdninstagram.com", "i.instagram.com"],
             "apps": ["instagram"], "openURL": nil],
            ["name": "reddit", "domains": ["reddit.com"], "apps": [], "openURL": "https://example.org/read"],
        ]])
        #expect(list == """
        NAME       DOMAINS                                                      APPS
        instagram  instagram.com, www.instagram.com, cdninstagram.com, +1 more  instagram
        reddit     reddit.com                                                   -

        Details: 'blockc selections show NAME'.
        """)
        let show = out.selection(["selection": ["name": "reddit", "domains": ["reddit.com", "old.reddit.com"], "apps": [],
                                                "openURL": "https://example.org/read"]])
        #expect(show == """
        Selection reddit
          Domains:  reddit.com
                    old.reddit.com
          Apps:     -
          Opens:    https://example.org/read
        """)
    }

    @Test("failures: every record with who caused it; an empty list says so")
    func failures() {
        var out = Fixture.output()
        out.userName = { $0 == 1000 ? "kid" : nil }
        #expect(out.failures(["failures": []]) == "No failures recorded.")
        #expect(out.failures(["failures": [Fixture.capFailure]]) == """
        12:58  activity-limit  kid  at most 20 activities; stop a block or remove a schedule to free a slot

        Clear them with 'blockc failures --clear'.
        """)
    }

    @Test("T4: failures marks each resolved one with when its cause was gone, and counts the current ones")
    func resolvedFailures() {
        let out = Fixture.output()
        let broken: JSONObject = ["time": "2026-11-29T12:40:00+09:00", "code": "invalid-config",
                                  "message": "reload failed, the previous configuration stays in force: blockd.conf:3: nonsense",
                                  "resolved": "2026-11-29T12:55:00+09:00"]
        let hook: JSONObject = ["time": "2026-11-29T12:58:00+09:00", "code": "hook-failed", "message": "ExecOnBlock= of 'reddit' (false) exited 1",
                                "activity": "reddit"]
        #expect(out.failures(["failures": [.object(broken), .object(hook)]]) == """
        12:40  invalid-config  resolved 12:55            reload failed, the previous configuration stays in force: blockd.conf:3: nonsense
        12:58  hook-failed                     'reddit'  ExecOnBlock= of 'reddit' (false) exited 1

        1 current failure, 1 resolved (their cause is gone; kept as history). Clear the list with 'blockc failures --clear'.
        """)
    }

    @Test("stats: shield hits grouped by day")
    func stats() {
        let out = Fixture.output()
        #expect(out.stats(["shieldHits": []]) == "No shield hits recorded yet.")
        #expect(out.stats(["shieldHits": [
            ["day": "2026-11-28", "selection": "instagram", "hits": 4],
            ["day": "2026-11-29", "selection": "instagram", "hits": 1],
            ["day": "2026-11-29", "selection": "reddit", "hits": 12],
        ]]) == """
        DAY         SELECTION  HITS
        2026-11-28  instagram  4
        2026-11-29  instagram  1
                    reddit     12
        """)
    }
}
