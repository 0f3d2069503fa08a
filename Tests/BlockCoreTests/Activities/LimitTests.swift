import Foundation
import Testing
@testable import BlockCore

/// §9 accounting with an injected clock: usage per local day, split at midnight (T7).
@Suite("§9: usage limits")
struct LimitTests {
    let tokyo = zone("Asia/Tokyo")

    @Test("§9: usage adds up over separate sessions of one day")
    func sessions() {
        var ledger = UsageLedger()
        ledger.setRunning("games", true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        ledger.setRunning("games", false, at: at("2026-11-29T10:20:00+09:00"), clock: tokyo)
        ledger.setRunning("games", true, at: at("2026-11-29T15:00:00+09:00"), clock: tokyo)
        let day = tokyo.civil(of: at("2026-11-29T12:00:00+09:00")).date
        #expect(ledger.used("games", on: day, at: at("2026-11-29T15:10:00+09:00"), clock: tokyo) == 30 * 60)
        ledger.setRunning("games", true, at: at("2026-11-29T15:05:00+09:00"), clock: tokyo)  // a second process: no double count
        #expect(ledger.used("games", on: day, at: at("2026-11-29T15:10:00+09:00"), clock: tokyo) == 30 * 60)
    }

    @Test("§9, T7: a session across local midnight counts toward each day what fell on it")
    func midnight() {
        var ledger = UsageLedger()
        ledger.setRunning("games", true, at: at("2026-11-29T23:30:00+09:00"), clock: tokyo)
        ledger.setRunning("games", false, at: at("2026-11-30T00:45:00+09:00"), clock: tokyo)
        #expect(ledger.used["2026-11-29"]?["games"] == Double(30 * 60))
        #expect(ledger.used["2026-11-30"]?["games"] == Double(45 * 60))
    }

    @Test("§9, T7: on a spring-forward day the day is 23 hours and usage still splits at local midnight")
    func dstDay() {
        let ny = zone("America/New_York")
        var ledger = UsageLedger()
        ledger.setRunning("games", true, at: at("2026-03-07T23:00:00-05:00"), clock: ny)
        ledger.setRunning("games", false, at: at("2026-03-09T00:30:00-04:00"), clock: ny)
        #expect(ledger.used["2026-03-07"]?["games"] == Double(3600))
        #expect(ledger.used["2026-03-08"]?["games"] == Double(23 * 3600))
        #expect(ledger.used["2026-03-09"]?["games"] == Double(1800))
    }

    @Test("§9: a restart neither loses what was checkpointed nor counts the time blockd was down")
    func restart() {
        var ledger = UsageLedger()
        ledger.setRunning("games", true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        ledger.checkpoint(at: at("2026-11-29T10:40:00+09:00"), clock: tokyo)  // the last reconcile before a crash
        ledger.forgetRunning()  // start-up
        let day = tokyo.civil(of: at("2026-11-29T12:00:00+09:00")).date
        #expect(ledger.used("games", on: day, at: at("2026-11-29T12:00:00+09:00"), clock: tokyo) == 40 * 60)
        ledger.checkpoint(at: at("2026-11-29T12:00:00+09:00"), clock: tokyo)
        #expect(ledger.used["2026-11-29"]?["games"] == Double(40 * 60), "checkpointing twice counts nothing twice")
    }

    @Test("§9: a running app projects the instant the allowance runs out, with the warning before it")
    func projection() throws {
        var ledger = UsageLedger()
        let limit = Limit(name: "games", selections: ["steam"], seconds: 3600, warnSeconds: 300)
        ledger.setRunning("games", true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        let state = try #require(limit.refreshed(ledger: ledger, at: at("2026-11-29T10:30:00+09:00"), clock: tokyo).state)
        #expect(state.used == 1800)
        #expect(state.remaining == 1800)
        #expect(state.window == Window(start: at("2026-11-29T11:00:00+09:00"), end: at("2026-11-30T00:00:00+09:00")))
        #expect(state.warnAt == at("2026-11-29T10:55:00+09:00"))
        // As an activity: not active yet, and its next boundary is the warning, then the limit.
        let activity = Activity.limit(limit.refreshed(ledger: ledger, at: at("2026-11-29T10:30:00+09:00"), clock: tokyo))
        #expect(activity.activeWindow(at: at("2026-11-29T10:30:00+09:00"), clock: tokyo) == nil)
        #expect(activity.nextBoundary(after: at("2026-11-29T10:30:00+09:00"), clock: tokyo) == at("2026-11-29T10:55:00+09:00"))
        #expect(activity.activeWindow(at: at("2026-11-29T11:00:00+09:00"), clock: tokyo) != nil)
    }

    @Test("§9: a limit that is not for today, or not running, blocks nothing")
    func inactive() {
        var ledger = UsageLedger()
        ledger.setRunning("games", true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)  // a Sunday
        let weekdays = Limit(name: "games", selections: ["steam"], seconds: 60, days: .weekdays)
        #expect(weekdays.refreshed(ledger: ledger, at: at("2026-11-29T12:00:00+09:00"), clock: tokyo).state?.window == nil)
        #expect(weekdays.refreshed(ledger: ledger, at: at("2026-11-29T12:00:00+09:00"), clock: tokyo).state?.recheckAt
                == at("2026-11-30T00:00:00+09:00"), "looked at again when Monday starts")
        let idle = Limit(name: "other", selections: ["x"], seconds: 60)
        #expect(idle.refreshed(ledger: ledger, at: at("2026-11-29T12:00:00+09:00"), clock: tokyo).state?.window == nil)
    }

    @Test("T5, seed 000 bug 5: a manual block of steam ends while its daily limit is exhausted: steam stays blocked")
    func unionWithLimit() throws {
        var ledger = UsageLedger()
        let day = tokyo.civil(of: at("2026-11-29T12:00:00+09:00")).date
        ledger.setRunning("games", true, at: at("2026-11-29T10:00:00+09:00"), clock: tokyo)
        ledger.setRunning("games", false, at: at("2026-11-29T11:00:00+09:00"), clock: tokyo)
        ledger.markExhausted("games", on: day, at: at("2026-11-29T11:00:00+09:00"))
        let limit = Limit(name: "games", selections: ["steam"], seconds: 3600)
        let now = at("2026-11-29T13:00:00+09:00")
        let activities: [Activity] = [
            .limit(limit.refreshed(ledger: ledger, at: now, clock: tokyo)),
            .block(Block(name: "steam", selections: ["steam"], start: at("2026-11-29T12:00:00+09:00"), end: at("2026-11-29T13:00:00+09:00"))),
        ]
        let policy = Policy(clock: tokyo)
        let blocked = policy.desired(at: now, activities: activities)
        #expect(blocked.map(\.selection) == ["steam"])
        #expect(blocked[0].reasons.map(\.activity) == ["games"])
        #expect(blocked[0].until == at("2026-11-30T00:00:00+09:00"))
    }

    @Test("limits.d: a [Limit] file", arguments: [
        ("[Limit]\nName=games\nDaily=1h\nSelections=steam\n", "1h daily"),
        ("[Limit]\nName=games\nDaily=30m\nDays=mon-fri\nWarn=5m\nSelections=steam discord\n", "30m mon-fri"),
    ])
    func limitFile(text: String, rule: String) throws {
        let l = try ConfigFiles.parseLimit(file: "/etc/blockd/limits.d/games.conf", text: text)
        #expect(l.rule == rule)
        #expect(l.origin == .config(file: "/etc/blockd/limits.d/games.conf"))
    }

    @Test("limits.d: bad files name file and line", arguments: [
        "[Limit]\nName=games\nSelections=steam\n", "[Limit]\nName=games\nDaily=25h\nSelections=steam\n",
        "[Limit]\nName=games\nDaily=1h\n", "[Limit]\nName=games\nDaily=1h\nWarn=2h\nSelections=steam\n", "[Limit]\nBogus=1\n",
    ])
    func badLimitFile(text: String) {
        do {
            _ = try ConfigFiles.parseLimit(file: "/etc/blockd/limits.d/games.conf", text: text)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidConfig)
            #expect(error.message.hasPrefix("/etc/blockd/limits.d/games.conf:"))
        }
    }

    /// A limit on selections that name neither an app nor a domain (URL prefixes only) could
    /// never be used up: the extension reports sites, not pages.
    @Test("§9, B3: a limit on selections with neither apps nor domains is refused, in limits.d and from a client; sites alone count")
    func uncountable() throws {
        let shorts = ConfigSource(path: "/etc/blockd/selections.d/shorts.conf", text: "[Selection]\nName=shorts\nPaths=youtube.com/shorts\n")
        let file = ConfigSource(path: "/etc/blockd/limits.d/shorts.conf", text: "[Limit]\nName=pagesonly\nDaily=1h\nSelections=shorts\n")
        #expect { try ConfigSet.load(daemonFile: nil, selectionFiles: [shorts], scheduleFiles: [], limitFiles: [file]) } throws: {
            let e = $0 as? CoreError
            return e?.code == .invalidConfig && e?.message == "/etc/blockd/limits.d/shorts.conf:4: limit 'pagesonly' could never be used up: "
                + "a limit counts the time apps run and sites are open, and 'shorts' names no app and no domain; limit a selection with apps or domains "
                + "(Apps= or Domains= in selections.d), or block its pages at set times with 'blockc schedule add'"
        }
        // B3: sites alone count (web time), and so does a mix.
        let web = ConfigSource(path: "/etc/blockd/selections.d/web.conf", text: "[Selection]\nName=web\nDomains=example.com\n")
        let sites = ConfigSource(path: "/etc/blockd/limits.d/web.conf", text: "[Limit]\nName=webonly\nDaily=1h\nSelections=web youtube\n")
        #expect(try ConfigSet.load(daemonFile: nil, selectionFiles: [web], scheduleFiles: [], limitFiles: [sites]).limits.count == 1)
        let mixed = ConfigSource(path: "/etc/blockd/limits.d/mixed.conf", text: "[Limit]\nName=mixed\nDaily=1h\nSelections=web steam\n")
        #expect(try ConfigSet.load(daemonFile: nil, selectionFiles: [web], scheduleFiles: [], limitFiles: [mixed]).limits.count == 1)
        #expect(throws: CoreError.self) { try Limit.checkCountable("x", [Selection(name: "shorts", paths: ["youtube.com/shorts"])]) }
        try Limit.checkCountable("x", [Selection(name: "youtube", domains: ["youtube.com"])])
        try Limit.checkCountable("x", [Selection(name: "steam", apps: ["steam"])])
    }

    @Test("T4: a limit counts toward the cap")
    func cap() throws {
        var r = Registry(maxActivities: 1)
        try r.addLimit(Limit(name: "games", selections: ["steam"], seconds: 3600), by: .root, now: at("2026-11-29T00:00:00Z"))
        do {
            try r.addLimit(Limit(name: "more", selections: ["x"], seconds: 60), by: .root, now: at("2026-11-29T00:00:00Z"))
            Issue.record("accepted past the cap")
        } catch {
            #expect(error.code == .activityLimit)
        }
    }
}
