import BlockClient
import BlockCore
import Foundation
import Testing

@Suite("blockc human output (§6)")
struct OutputTests {
    // MARK: Times

    @Test("§6 remaining time and T3 full dates: the date is shown whenever the end is not today",
          arguments: [
              ("2026-11-29T13:35:00+09:00", "until 13:35 (30m left)"),
              // One rule for both numbers: the minutes shown (13:34 - 13:05), not 29m30s rounded up.
              ("2026-11-29T13:34:30+09:00", "until 13:34 (29m left)"),
              ("2026-11-29T13:05:45+09:00", "until 13:05 (45s left)"),
              ("2026-11-29T15:35:00+09:00", "until 15:35 (2h30m left)"),
              ("2026-11-30T07:00:00+09:00", "until Mon 30 Nov 07:00 (17h55m left)"),
              ("2026-12-01T13:05:00+09:00", "until Tue 1 Dec 13:05 (2d left)"),
              ("2027-01-02T10:00:00+09:00", "until Sat 2 Jan 2027 10:00 (33d21h left)"),
              ("2026-11-29T13:00:00+09:00", "until 13:00 (ended)"),
              // The daemon may answer in another offset; the client shows its own local time.
              ("2026-11-29T04:35:00Z", "until 13:35 (30m left)"),
          ])
    func untilText(end: String, expected: String) {
        #expect(Fixture.output().until(Fixture.at(end)) == expected)
    }

    @Test("§6: the time left agrees with the clock times shown, whatever the seconds", arguments: [
        ("2026-11-29T18:48:35+09:00", "2026-11-29T18:52:40+09:00", "until 18:52 (4m left)"),
        ("2026-11-29T18:48:59+09:00", "2026-11-29T18:52:00+09:00", "until 18:52 (4m left)"),
        ("2026-11-29T18:48:00+09:00", "2026-11-29T18:52:59+09:00", "until 18:52 (4m left)"),
        ("2026-11-29T18:51:30+09:00", "2026-11-29T18:52:10+09:00", "until 18:52 (40s left)"),
        ("2026-11-29T18:51:59+09:00", "2026-11-29T18:53:00+09:00", "until 18:53 (2m left)"),
    ])
    func oneRoundingRule(now: String, end: String, expected: String) {
        #expect(Fixture.output(now: Fixture.at(now)).until(Fixture.at(end)) == expected)
    }

    @Test("T3: at 23:58 a block until 00:05 ends tomorrow, and says so")
    func midnight() {
        let out = Fixture.output(now: Fixture.at("2026-11-29T23:58:00+09:00"))
        #expect(out.until(Fixture.at("2026-11-30T00:05:00+09:00")) == "until Mon 30 Nov 00:05 (7m left)")
    }

    // MARK: Status

    @Test("status: Blocked now, Activities, Failures and the enforcement line, aligned")
    func statusLayout() {
        let text = Fixture.output().status(Fixture.busyStatus)
        #expect(text == """
        Blocked now
          instagram  until 13:35 (30m left)                by instagram
          reddit     until Mon 30 Nov 07:00 (17h55m left)  by study
          youtube    until Mon 30 Nov 07:00 (17h55m left)  by study

        Activities (3 of 20)
          instagram  block                        instagram          active, until 13:35 (30m left)
          study      block                        reddit, youtube    active, until Mon 30 Nov 07:00 (17h55m left)  locked
          bedtime    schedule  daily 22:00-07:00  instagram, reddit  next at 22:00 (in 8h55m)                      from /etc/blockd/schedules.d/bedtime.conf

        Failures (1)
          12:58  activity-limit  at most 20 activities; stop a block or remove a schedule to free a slot
          Clear them with 'blockc failures --clear'.

        Enforcement
          websites  hosts file /etc/hosts
          apps      fanotify exec shield
        Next change at 13:35 (in 30m).
        """)
    }

    @Test("screen time: status says who is kept off the screen now, by what, until when, and what is done to their sessions, after what is blocked")
    func statusScreen() {
        var status = Fixture.emptyStatus
        status["screen"] = .array([
            .object(ScreenReply(user: "kid", uid: 1001, held: true, activity: "bedtime", kind: "schedule", until: "2026-11-30T07:00:00+09:00", action: "lock").json),
            .object(ScreenReply(user: "kid2", uid: 1002, held: true, activity: "screen", kind: "limit", until: "2026-11-30T00:00:00+09:00", action: "logout").json),
        ])
        let text = Fixture.output().status(status)
        #expect(text.hasPrefix("""
            Nothing is blocked.

            Kept off the screen
              Allowed hours 'bedtime' keep kid off the screen until Mon 30 Nov 07:00 (17h55m left); the sessions are locked.
              kid2's screen time is used up for today: limit 'screen' keeps kid2 off the screen until Mon 30 Nov 00:00 (10h55m left);
            """), "\(text)")
        #expect(!Fixture.output().status(Fixture.emptyStatus).contains("Kept off the screen"), "nobody held: no section")
    }

    @Test("E5: status says whether open connections are cut, what nftables refuses until when, and the sink")
    func statusFelt() {
        var status = Fixture.emptyStatus
        status["enforcement"] = .object([
            "mode": "hosts+cut+fanotify", "cutSockets": .bool(true), "socketsCut": .int(3), "sink": "127.0.0.253 100::1",
            "firewall": .object(["enabled": .bool(true), "table": "inet blockd", "addresses": .array(["10.0.0.2", "127.0.0.253", "100::1"]),
                                 "learned": .int(1), "until": "2026-11-29T13:07:00+09:00"]),
        ])
        #expect(Fixture.output().status(status).hasSuffix("""
            Enforcement
              websites     the hosts file; blocked names point at 127.0.0.253 and 100::1
              connections  open ones cut when a block starts (3 so far); new ones refused through nftables table inet blockd (1 learned address, grace until 13:07 (2m left))
              apps         fanotify exec shield
            Next change at 13:35 (in 30m).
            """))
        // E5 under a sandbox that forbids DNS: said, with the count, not hidden behind the sink.
        status["enforcement"] = .object([
            "mode": "hosts+cut", "cutSockets": .bool(true), "socketsCut": .int(0), "sink": "127.0.0.253 100::1",
            "firewall": .object(["enabled": .bool(true), "table": "inet blockd", "addresses": .array(["127.0.0.253", "100::1"]), "learned": .int(0)]),
            "dns": .object(["lookups": .int(2), "failed": .int(2), "problem": "cannot send a DNS query to 10.0.0.1: Permission denied"]),
        ])
        #expect(Fixture.output(color: false).status(status).hasSuffix("""
              connections  open ones cut when a block starts (0 so far); new ones refused through nftables table inet blockd (0 learned addresses); DNS lookups fail (2 of 2): cannot send a DNS query to 10.0.0.1: Permission denied
            Next change at 13:35 (in 30m).
            """))
        status["enforcement"] = .object([
            "mode": "hosts+cut", "cutSockets": .bool(false), "socketsCut": .int(0), "sink": "0.0.0.0 ::",
            "firewall": .object(["enabled": .bool(false), "table": "inet blockd", "addresses": .array([]), "problem": "turned off (Firewall=no)"]),
        ])
        #expect(Fixture.output().status(status).hasSuffix("""
              connections  open ones not cut (CutSockets=no); new ones not refused: turned off (Firewall=no)
            Next change at 13:35 (in 30m).
            """))
    }

    @Test("W2: status says what an allow-only window's rules let its users reach, or why connections are not refused")
    func statusAllowOnlyNet() {
        var status = Fixture.emptyStatus
        status["enforcement"] = .object([
            "mode": "hosts+cut", "cutSockets": .bool(true), "socketsCut": .int(0), "sink": "127.0.0.253 100::1",
            "firewall": .object(["enabled": .bool(true), "table": "inet blockd", "addresses": .array(["127.0.0.253", "100::1"]), "learned": .int(0),
                                 "allowOnly": .array([.object(["selection": "only:school.test", "hosts": .int(1), "addresses": .array(["192.0.2.10", "192.0.2.11"])]),
                                                      .object(["selection": "only:editor.test", "hosts": .int(2), "addresses": .array([]), "uids": .array([.int(1001)])])])]),
        ])
        #expect(Fixture.output().status(status).hasSuffix("""
              connections  open ones cut when a block starts (0 so far); new ones refused through nftables table inet blockd (0 learned addresses); allow-only time: login users reach only 2 addresses of 1 allowed host; uid 1001 reaches only 0 addresses of 2 allowed hosts, DNS and this machine
            Next change at 13:35 (in 30m).
            """))
        status["enforcement"] = .object([
            "mode": "hosts", "cutSockets": .bool(true), "socketsCut": .int(0), "sink": "0.0.0.0 ::",
            "firewall": .object(["enabled": .bool(false), "table": "inet blockd", "addresses": .array([]), "problem": "turned off (Firewall=no)",
                                 "allowOnlyProblem": "allow-only time refuses only names, not connections to other addresses: turned off (Firewall=no)"]),
        ])
        #expect(Fixture.output().status(status).hasSuffix("""
              connections  open ones cut when a block starts (0 so far); new ones not refused: turned off (Firewall=no); allow-only time refuses only names, not connections to other addresses: turned off (Firewall=no)
            Next change at 13:35 (in 30m).
            """))
    }

    @Test("status: each part of enforcement said once: what acts with what, what is off and why")
    func statusOff() {
        var status = Fixture.emptyStatus
        status["enforcement"] = .object([
            "mode": "hosts", "hostsFile": "/tmp/hosts", "apps": "off",
            "off": .array([["part": "nss", "why": "per-user tables go to /tmp/u, which the installed NSS module does not read"],
                           ["part": "apps", "why": "turned off (AppShield=no)"]]),
        ])
        #expect(Fixture.output().status(status).hasSuffix("""
            Enforcement
              websites  hosts file /tmp/hosts
              per user  off: per-user tables go to /tmp/u, which the installed NSS module does not read
              apps      off
            Next change at 13:35 (in 30m).
            """))
        status["enforcement"] = .object([
            "mode": "hosts+nss+cut+fanotify+browsers", "hostsFile": "/etc/hosts", "apps": "fanotify", "sink": "0.0.0.0 ::",
            "userTables": .object(["directory": "/run/blockd/users", "readableBy": "their user"]),
            "cutSockets": .bool(true), "socketsCut": .int(0),
            "firewall": .object(["enabled": .bool(true), "table": "inet blockd", "addresses": .array([]), "learned": .int(4)]),
            "browserPolicies": .object(["browsers": .array(["chromium"]), "files": .array(["/etc/chromium/policies/managed/blockd.json"]),
                                        "closed": .array([]), "extension": .object([:])]),
        ])
        #expect(Fixture.output().status(status).hasSuffix("""
            Enforcement
              websites     hosts file /etc/hosts; blocked names point at 0.0.0.0 and ::
              per user     the NSS module, from the tables in /run/blockd/users
              connections  open ones cut when a block starts (0 so far); new ones refused through nftables table inet blockd (4 learned addresses)
              apps         fanotify exec shield
              browsers     policies for chromium (/etc/chromium/policies/managed/blockd.json); blockd's extension is installed in them (web time, the block page)
            Next change at 13:35 (in 30m).
            """))
        let text = Fixture.output().status(status)
        for part in ["websites", "per user", "connections", "apps", "browsers"] {
            #expect(text.components(separatedBy: "\n  \(part) ").count == 2, "\(part) is said once")
        }
    }

    @Test("U2: an administrator's status groups what is blocked by whom it is blocked for, everyone first, in one aligned table")
    func statusPerUser() {
        var kidsBlock = BlockedReply(selection: "youtube", until: "2026-11-29T21:00:00+09:00", reasons: ["bedtime"], users: ["kid"])
        let status = Fixture.status(blocked: [.object(kidsBlock.json), Fixture.blocked("instagram", until: "2026-11-29T13:35:00+09:00", by: ["instagram"])],
                                    activities: [Fixture.instagramBlock])
        #expect(Fixture.output(color: false).status(status).hasPrefix("""
            Blocked now for everyone
              instagram  until 13:35 (30m left)    by instagram

            Blocked now for kid
              youtube    until 21:00 (7h55m left)  by bedtime

            Activities
            """))
        kidsBlock.users = ["kid", "kid2"]
        let two = Fixture.status(blocked: [.object(kidsBlock.json)], activities: [])
        #expect(Fixture.output(color: false).status(two).hasPrefix("Blocked now for kid, kid2\n  youtube  until 21:00 (7h55m left)  by bedtime\n"))
    }

    @Test("§7 Truth: Blocked now lists what is enforced; a part left off is said under its selection; what is not enforced is listed apart, with why")
    func statusTruth() {
        var status = Fixture.busyStatus
        status["enforcement"] = .object([
            "mode": "hosts", "hostsFile": "/etc/hosts",
            "partial": .array([["selection": "instagram", "cause": "its apps are not blocked: the app shield is turned off (AppShield=no)"]]),
            "notEnforced": .array([["selection": "reddit", "cause": "cannot write /etc/hosts: Read-only file system"]]),
        ])
        #expect(Fixture.output(color: false).status(status).hasPrefix("""
            Blocked now
              instagram  until 13:35 (30m left)                by instagram
                in part: its apps are not blocked: the app shield is turned off (AppShield=no)
              youtube    until Mon 30 Nov 07:00 (17h55m left)  by study

            Not blocked yet (blockd retries by itself)
              reddit  cannot write /etc/hosts: Read-only file system

            Activities (3 of 20)
            """))
        status["blocked"] = .array([Fixture.blocked("reddit", until: "2026-11-30T07:00:00+09:00", by: ["study"])])
        #expect(Fixture.output(color: false).status(status).hasPrefix("Nothing is blocked.\n\nNot blocked yet (blockd retries by itself)\n  reddit  cannot"),
                "nothing enforced is never 'Blocked now'")
    }

    @Test("U2: in one user's view the activities active for other users are said as such, never as idle", arguments: [
        (active: 3, total: 5, shown: 1, says: "  Not listed: 2 idle activities, 2 active for other users; 'blockc status --all' lists them."),
        (active: 1, total: 5, shown: 1, says: "  Not listed: 4 idle activities; 'blockc status --all' lists them."),
        (active: 3, total: 3, shown: 1, says: "  Not listed: 2 active for other users; 'blockc status --all-users' lists them."),
    ])
    func idleAndOthers(active: Int, total: Int, shown: Int, says: String) {
        var status = Fixture.status(blocked: [], activities: Array([Fixture.instagramBlock].prefix(shown)))
        status["counts"] = .object(["activities": .int(Int64(total)), "active": .int(Int64(active))])
        let text = Fixture.output(color: false).status(status)
        #expect(text.contains("\n" + says + "\n"), "\(text)")
    }

    @Test("status: 'Nothing is blocked.' and no Failures section when there are none")
    func statusEmpty() {
        let text = Fixture.output().status(Fixture.emptyStatus)
        #expect(text.hasPrefix("Nothing is blocked.\n"))
        #expect(text.contains("Activities\n  None. Start one with 'blockc start --minutes 30 SELECTION'."), "no cap said while nothing counts against it")
        #expect(!text.contains("Failures"))
    }

    @Test("T4: status shows the newest failures and points at the rest")
    func statusManyFailures() {
        let failures: [JSON] = (0..<5).map { i in
            ["time": .string("2026-11-29T12:0\(i):00+09:00"), "code": "activity-limit", "message": .string("refusal \(i)")]
        }
        let text = Fixture.output().status(Fixture.status(blocked: [], activities: [], failures: failures))
        #expect(text.contains("Failures (5)"))
        #expect(!text.contains("refusal 1"))
        #expect(text.contains("refusal 2") && text.contains("refusal 4"))
        #expect(text.contains("2 older failures in 'blockc failures'"))
    }

    // MARK: Untrusted text and colour

    static let hostile = "evil\u{1B}]0;pwned\u{07}\u{1B}[2J\u{9B}31m\u{202E}moc.elgoog\nnext"

    @Test("terminal escapes from the daemon are stripped from every formatter",
          arguments: ["status", "start", "schedules", "selections", "selection", "failures", "stats", "event"])
    func controlCharactersStripped(formatter: String) {
        let text = Self.render(formatter, name: Self.hostile, color: false)
        #expect(text.contains("evil"))
        for scalar in text.unicodeScalars {
            let v = scalar.value
            #expect(!(v < 0x20 && v != 0x0A) && !(0x7F...0x9F).contains(v) && !(0x202A...0x202E).contains(v),
                    "\(formatter) printed U+\(String(v, radix: 16))")
        }
    }

    @Test("no ANSI at all when color is false; colour when it is true",
          arguments: ["status", "start", "schedules", "selections", "selection", "failures", "stats", "event"])
    func colorOnlyWhenAsked(formatter: String) {
        #expect(!Self.render(formatter, name: "instagram", color: false).contains("\u{1B}"))
        #expect(Self.render(formatter, name: "instagram", color: true).contains("\u{1B}["))
    }

    @Test("Output.clean keeps ordinary text, including non-ASCII names")
    func cleanKeepsText() {
        #expect(Output.clean("ブロック instagram.com") == "ブロック instagram.com")
        #expect(Output.clean("a\tb\r\nc") == "a b  c")
        #expect(Output.clean("\u{1B}[31mred\u{1B}[0m") == "[31mred[0m")
    }

    /// One formatter fed `name` wherever the daemon would echo a user-chosen string.
    static func render(_ formatter: String, name: String, color: Bool) -> String {
        let out = Fixture.output(color: color)
        let n = JSON.string(name)
        switch formatter {
        case "status":
            return out.status(Fixture.status(
                blocked: [.object(BlockedReply(selection: name, until: "2026-11-29T13:35:00+09:00", reasons: [name]).json)],
                activities: [Fixture.shapes.activity(.block(Block(name: name, selections: [name], start: Fixture.now, end: Fixture.now + 1800,
                                                                  locked: true)), at: Fixture.now)],
                failures: [.object(FailureReply(time: "2026-11-29T12:58:00+09:00", code: "unknown-selection", message: name).json)]))
        case "start":
            return out.start(["name": n, "kind": "block", "selections": [n], "active": true, "start": "2026-11-29T13:05:00+09:00",
                              "end": "2026-11-29T13:35:00+09:00", "locked": false, "outcome": "created"])
        case "schedules":
            return out.schedules(["schedules": [["name": n, "kind": "schedule", "selections": [n], "active": true,
                                                 "start": "2026-11-29T13:00:00+09:00", "end": "2026-11-29T14:00:00+09:00",
                                                 "locked": false, "window": "13:00-14:00", "days": "daily", "origin": "client", "uid": 0]]])
        case "selections":
            return out.selections(["selections": [["name": n, "domains": [n], "apps": [], "openURL": nil]]])
        case "selection":
            return out.selection(["selection": ["name": n, "domains": [n], "apps": [n], "openURL": n]])
        case "failures":
            return out.failures(["failures": [["time": "2026-11-29T12:58:00+09:00", "code": "usage", "message": n, "activity": n]]])
        case "stats":
            return out.stats(["shieldHits": [["day": "2026-11-29", "selection": n, "hits": 3]]])
        default:
            return out.event(WatchEvent.lock(time: "2026-11-29T13:05:00+09:00", selection: name, until: "2026-11-29T13:35:00+09:00", reasons: [name]))
        }
    }
}

extension OutputTests {
    @Test("a column empty on every row takes no space (blocks have no schedule rule)")
    func emptyColumn() {
        let text = Fixture.output().status(Fixture.status(blocked: [], activities: [Fixture.instagramBlock]))
        #expect(text.contains("\n  instagram  block  instagram  active, until 13:35 (30m left)\n"))
    }

    @Test("W2: an allow-only activity's selection is said as people read it, 'everything but …', not as its wire form")
    func allowOnlyActivity() {
        let block = Fixture.shapes.activity(.block(Block(
            name: "only_wikipedia.org", selections: ["only:wikipedia.org"], start: Fixture.at("2026-11-29T13:05:00+09:00"), end: Fixture.at("2026-11-29T13:35:00+09:00"),
            origin: .client(uid: 1000))), at: Fixture.now)
        let text = Fixture.output().status(Fixture.status(blocked: [], activities: [block]))
        #expect(text.contains("\n  only_wikipedia.org  block  everything but wikipedia.org  active, until 13:35 (30m left)\n"), "\(text)")
    }

    @Test("status without --all: the active activities, then one line for 99,985 idle ones")
    func idleActivitiesOneLine() {
        var status = Fixture.status(blocked: [], activities: [Fixture.instagramBlock])
        status["maxActivities"] = 100_000
        status["all"] = false
        status["counts"] = ["activities": 99_986, "active": 1, "blocks": 1, "schedules": 99_982, "limits": 3]
        let text = Fixture.output().status(status)
        #expect(text.contains("Activities (99,986 of 100,000)\n  instagram  block  instagram  active, until 13:35 (30m left)\n"))
        #expect(text.contains("\n  Not listed: 99,982 idle schedules, 3 idle limits; 'blockc status --all' lists them.\n"))
        status["all"] = true
        status["counts"] = ["activities": 1, "active": 1, "blocks": 1, "schedules": 0, "limits": 0]
        #expect(!Fixture.output().status(status).contains("idle"))
    }
}
