import BlockCore
import Foundation
import Testing
@testable import BlockAgent

/// The browser extension's native-messaging host (B1) without I/O: its framing, what each
/// message from the extension asks of blockd, and what each answer and event of blockd tells
/// the extension, as tables. Fixed zone and instants (PlannerTests').
@Suite struct NativeHostTests {
    static let now = PlannerTests.now  // 2026-11-29 13:06 in Tokyo
    static let me = 1000

    static func words(_ language: Language = .en) -> NativeHostWords {
        NativeHostWords(planner: NotificationPlanner(language: language, clock: PlannerTests.tokyo), uid: me)
    }

    static func session(_ language: Language = .en) -> NativeHostSession { NativeHostSession(words: words(language)) }

    /// A session the extension has greeted and told `site`, with blockd answering.
    static func started(site: String? = "www.youtube.com", _ language: Language = .en) -> NativeHostSession {
        var s = session(language)
        _ = s.received(.hello(browser: "chromium", version: "1.0.0", lang: language.rawValue), now: now)
        _ = s.received(.site(site), now: now)
        _ = s.answered(web: site, .ok([:]), now: now)
        return s
    }

    static func frame(_ text: String) -> [UInt8] {
        let body = Array(text.utf8)
        return withUnsafeBytes(of: UInt32(body.count)) { Array($0) } + body
    }

    // MARK: Framing

    @Test("B1: a frame is a native-endian 4-byte length and the JSON, and reads back whole however stdin cuts it", arguments: [1, 3, 4, 7, 4096])
    func roundTrip(piece: Int) throws {
        let messages: [JSONObject] = [["type": "hello", "browser": "firefox", "lang": "ja"], ["type": "site", "site": nil],
                                      ["type": "more", "selection": "ソーシャル", "minutes": 15, "reason": "宿題 \"quoted\"\n"]]
        let bytes = try messages.flatMap { try #require(NativeFraming.encode($0)) }
        let first = try #require(NativeFraming.encode(messages[0]))
        #expect(Array(first.prefix(4)) == withUnsafeBytes(of: UInt32(first.count - 4)) { Array($0) }, "the machine's own byte order")
        var reader = NativeFraming.Reader()
        var read: [NativeFraming.Frame] = []
        var offset = 0
        while offset < bytes.count {
            reader.feed(bytes[offset..<min(bytes.count, offset + piece)])
            offset += piece
            while let frame = try reader.next() { read.append(frame) }
        }
        #expect(read == messages.map { .message($0) })
        try reader.finish()
    }

    /// What a reader makes of bad input: a frame reported as not JSON (the stream goes on), a
    /// frame cut short by the end of input, or a length over the cap (the stream stops).
    enum Bad: Equatable, Sendable {
        case invalid
        case cutShort(AgentError)
        case tooLong
    }

    @Test("B1: bad input from the browser is a clear error, never a crash", arguments: [
        (NativeHostTests.frame("{\"type\":"), Bad.invalid),
        (NativeHostTests.frame("[1,2]"), .invalid),
        (NativeHostTests.frame("\"text\""), .invalid),
        ([0, 0, 0, 0], .invalid),
        ([7, 0], .cutShort(.frameCutShort(have: 2, want: 4))),
        (Array(NativeHostTests.frame("{\"type\":\"refresh\"}").dropLast(3)), .cutShort(.frameCutShort(have: 19, want: 22))),
        (withUnsafeBytes(of: UInt32(1 << 20 | 1)) { Array($0) }, .tooLong),
        (withUnsafeBytes(of: UInt32.max) { Array($0) }, .tooLong),
    ])
    func badInput(bytes: [UInt8], bad: Bad) throws {
        var reader = NativeFraming.Reader()
        reader.feed(bytes)
        switch bad {
        case .invalid:
            guard case .invalid(let why)? = try reader.next() else { Issue.record("not reported as invalid"); return }
            #expect(why.contains("not a JSON object") && why.hasSuffix("skipped it"), "\(why)")
            try reader.finish()
        case .cutShort(let expected):
            #expect(try reader.next() == nil)
            #expect(throws: expected) { try reader.finish() }
            #expect(expected.description.hasPrefix("the browser closed its end in the middle of a message"))
        case .tooLong:
            #expect { try reader.next() } throws: { error in
                (error as? AgentError).map { if case .frameTooLong = $0 { $0.description.contains("at most 1048576") } else { false } } ?? false
            }
        }
    }

    @Test("B1: a frame that is not JSON is skipped whole, and the next one still reads")
    func skipsInvalid() throws {
        var reader = NativeFraming.Reader()
        reader.feed(NativeHostTests.frame("not json") + NativeHostTests.frame("{\"type\":\"refresh\"}"))
        guard case .invalid? = try reader.next() else { Issue.record("the bad frame was not reported"); return }
        #expect(try reader.next() == .message(["type": "refresh"]))
        #expect(try reader.next() == nil)
    }

    @Test("B1: a message over 1 MB is not framed for the browser (it would refuse it)")
    func tooLargeForTheBrowser() {
        #expect(NativeFraming.encode(["text": .string(String(repeating: "x", count: 1 << 20))]) == nil)
        #expect(NativeFraming.encode(["text": .string(String(repeating: "x", count: (1 << 20) - 11))]) != nil, "exactly 1 MiB of JSON")
    }

    // MARK: The extension's messages

    @Test("B1: each message the extension sends is read as the contract says, and anything else is refused", arguments: [
        (#"{"type":"hello","browser":"chromium","version":"1.0.0","lang":"ja"}"#, "hello chromium 1.0.0 ja"),
        (#"{"type":"site","site":"www.youtube.com"}"#, "site www.youtube.com"),
        (#"{"type":"site","site":" www.youtube.com\n"}"#, "site www.youtube.com"),
        (#"{"type":"site","site":null}"#, "site nil"),
        (#"{"type":"site"}"#, "site nil"),
        (#"{"type":"site","site":""}"#, "site nil"),
        (#"{"type":"more","selection":"social","minutes":15,"reason":"homework research"}"#, "more social 15 homework research"),
        (#"{"type":"more","selection":"social","minutes":1}"#, "more social 1 nil"),
        (#"{"type":"refresh","extra":true}"#, "refresh"),
        (#"{"type":"site","site":42}"#, "error: the browser sent a 'site' message whose site is not a string; ignored it"),
        (#"{"type":"status"}"#, "error: the browser sent a message of unknown type 'status'; ignored it"),
        (#"{"site":"a.example"}"#, "error: the browser sent a message of unknown type ''; ignored it"),
    ])
    func browserMessages(json: String, read: String) throws {
        let object = try #require(try JSON.parse(json).object)
        let got: String
        do throws(AgentError) {
            switch try BrowserMessage(object) {
            case .hello(let b, let v, let l): got = "hello \(b ?? "nil") \(v ?? "nil") \(l ?? "nil")"
            case .site(let s): got = "site \(s ?? "nil")"
            case .more(let s, let m, let r): got = "more \(s) \(m.map(String.init) ?? "nil") \(r ?? "nil")"
            case .refresh: got = "refresh"
            }
        } catch {
            got = "error: \(error.description)"
        }
        #expect(got == read)
    }

    @Test("B1: hello's lang picks the texts' language; a language blockd has no texts for keeps the session's", arguments: [
        (String?("ja"), Language.ja), ("ja-JP", .ja), ("JA_jp", .ja), ("en-GB", .en), ("de", .ja), (nil, .ja),
    ])
    func helloLanguage(lang: String?, language: Language) {
        var s = NativeHostTests.session(.ja)
        _ = s.received(.hello(browser: nil, version: nil, lang: lang), now: NativeHostTests.now)
        #expect(s.words.planner.language == language)
    }

    @Test("B1: what each extension message asks of blockd", arguments: [
        (BrowserMessage.hello(browser: "firefox", version: "1.0.0", lang: "en"), [NativeHostSession.Action.web(site: "www.youtube.com")]),
        (.site("m.youtube.com"), [.web(site: "m.youtube.com")]),
        (.site(nil), [.web(site: nil)]),
        (.refresh, [.web(site: "www.youtube.com")]),
        (.more(selection: "social", minutes: 15, reason: "homework research"),
         [.more(.init(selection: "social", seconds: 900, reason: "homework research"))]),
        (.more(selection: "social", minutes: 1, reason: nil), [.more(.init(selection: "social", seconds: 60))]),
        (.more(selection: "social", minutes: 5, reason: nil), [.browser(["type": "more", "ok": false, "text": "ask for 15 or 1 minutes"])]),
        (.more(selection: "social", minutes: nil, reason: nil), [.browser(["type": "more", "ok": false, "text": "ask for 15 or 1 minutes"])]),
        (.more(selection: "social", minutes: 15, reason: String(repeating: "x", count: 201)),
         [.browser(["type": "more", "ok": false, "text": "a reason is one line of at most 200 bytes"])]),
        (.more(selection: "", minutes: 15, reason: nil), [.browser(["type": "more", "ok": false, "text": "'' is not a valid selection name: use 1 to 255 letters, digits, '-', '_', '.' or '+', not starting with '-' or '.'"])]),
    ])
    func requests(message: BrowserMessage, actions: [NativeHostSession.Action]) {
        var s = NativeHostTests.started()
        let got = s.received(message, now: NativeHostTests.now).filter { if case .log = $0 { false } else { true } }
        #expect(got == actions)
    }

    @Test("B1: the request lines on the wire are the contract's")
    func webLines() throws {
        #expect(WebRequest.line(site: "www.youtube.com") == #"web {"site":"www.youtube.com"}"#)
        #expect(WebRequest.line(site: nil) == "web {}")
        #expect(Request.more(.init(selection: "social", seconds: 900, reason: "homework")).line
                == #"more {"selection":"social","seconds":900,"reason":"homework"}"#)
    }

    // MARK: blockd's answers

    static let reply: JSONObject = [
        "site": "youtube.com", "counted": ["social"],
        "blocked": [
            ["selection": "social", "activities": ["kid/homework"], "until": "2026-11-29T18:00:00+09:00", "domains": ["instagram.com"],
             "more": "ask"],
            ["selection": "games", "activities": [], "until": "2026-11-30T07:00:00+09:00", "domains": ["steam.com"], "more": nil],
            ["selection": "news", "activities": [], "until": nil, "domains": ["news.example"], "more": nil],
        ],
        "limits": [["activity": "social-limit", "selections": ["social"], "allowance": 1800, "used": 1200, "left": 600, "reached": false]],
        "later": "a key a newer blockd adds",
    ]

    @Test("B1: the web answer goes to the extension as it is, connected, each blocked entry with its untilText", arguments: [
        (Language.en, ["until 18:00", "until Mon 30 Nov 07:00", nil]),
        (.ja, ["18:00まで", "11月30日 07:00まで", nil]),
    ])
    func state(language: Language, untilTexts: [String?]) throws {
        var s = NativeHostTests.started(language)
        let actions = s.answered(web: "www.youtube.com", .ok(NativeHostTests.reply), now: NativeHostTests.now)
        guard case .browser(let state)? = actions.last, actions.count == 1 else { Issue.record("\(actions)"); return }
        #expect(state.keys == ["type", "connected", "site", "counted", "blocked", "limits", "later"])
        #expect(state["type"] == "state" && state["connected"] == true)
        for key in ["site", "counted", "limits", "later"] { #expect(state[key] == NativeHostTests.reply[key]) }
        let blocked = try #require(state["blocked"]?.array)
        #expect(blocked.map { $0["untilText"]?.string } == untilTexts)
        #expect(blocked.allSatisfy { $0["untilText"] != nil }, "null, not left out, when there is no end")
        var original = blocked[0].object!
        _ = original.insertNew("untilText", .null)
        #expect(blocked[0]["selection"] == "social" && blocked[0]["activities"] == ["kid/homework"] && blocked[0]["more"] == "ask")
    }

    @Test("B1: blockd away is said once per outage and reason, retried every 5 seconds, and the site is sent again when it answers")
    func outage() {
        let t0 = NativeHostTests.now
        var s = NativeHostTests.started()
        #expect(s.deadline == nil, "while blockd answers, nothing is asked on a timer: its events say when to ask")
        #expect(s.tick(now: t0.addingTimeInterval(3600)) == [])
        let t1 = t0.addingTimeInterval(60)
        #expect(s.received(.refresh, now: t1) == [.web(site: "www.youtube.com")])
        let down = "blockd is not running (no daemon at /run/blockd/blockd.sock)"
        let first = s.answered(web: "www.youtube.com", .unreachable(down), now: t1)
        #expect(first.contains(.browser(["type": "state", "connected": false, "message": .string(down)])))
        #expect(s.deadline == t1.addingTimeInterval(5))
        #expect(s.tick(now: t1.addingTimeInterval(5)) == [.web(site: "www.youtube.com")])
        #expect(s.answered(web: "www.youtube.com", .unreachable(down), now: t1.addingTimeInterval(5)) == [], "the same outage, said once")
        let refused = s.answered(web: nil, .refused(CoreError(.unknownCommand, "unknown command 'web'")), now: t1.addingTimeInterval(10))
        #expect(refused.contains { if case .browser(let o) = $0 { o["connected"] == false } else { false } }, "another reason is said")
        let back = s.answered(web: "www.youtube.com", .ok(NativeHostTests.reply), now: t1.addingTimeInterval(15))
        #expect(back.first == .log("blockd answers again"))
        guard case .browser(let state)? = back.last else { Issue.record("no state"); return }
        #expect(state["connected"] == true)
    }

    @Test("B1: a site blockd refuses is asked again without it, so that the extension still learns what is blocked")
    func refusedSite() {
        var s = NativeHostTests.started(site: "bad..site")
        let refusal = DaemonOutcome.refused(CoreError(.invalidDomain, "web: bad site"))
        #expect(s.answered(web: "bad..site", refusal, now: NativeHostTests.now)
                == [.log("blockd refused the site bad..site: web: bad site; asking without it"), .web(site: nil)])
        #expect(s.answered(web: "bad..site", refusal, now: NativeHostTests.now) == [.web(site: nil)], "said once")
        #expect(s.site == "bad..site", "offered again at the next refresh")
        #expect(s.connected == true)
    }

    @Test("B1: nothing is asked or said before the extension's first message")
    func quietBeforeHello() {
        var s = NativeHostTests.session()
        #expect(s.deadline == nil)
        #expect(s.tick(now: NativeHostTests.now.addingTimeInterval(3600)) == [])
        #expect(s.event(.event(.lock(time: "", selection: "social", until: nil, reasons: [])), selection: nil, now: NativeHostTests.now) == [])
        #expect(s.event(.resubscribed, selection: nil, now: NativeHostTests.now) == [])
    }

    // MARK: blockd's events

    static let t = "2026-11-29T13:06:00+09:00"

    static func moreTime(_ kind: WatchEvent.MoreTime.Kind, uid: Int) -> WatchEvent {
        .moreTime(time: t, kind: kind, id: "m3", selection: "social", until: "2026-11-29T13:21:00+09:00", message: "words", uid: UInt32(uid))
    }

    /// "refresh": the site is sent again (then a state follows its answer); a string: the type
    /// and text of the message the extension gets first.
    @Test("B1: what each event of blockd tells the extension", arguments: [
        (WatchEvent.lock(time: NativeHostTests.t, selection: "social", until: nil, reasons: ["bedtime"]), Language.en, [String]()),
        (.unlock(time: t, selection: "social", why: "ended"), .en, []),
        (.limit(time: t, activity: "social-limit", selections: ["social"], until: "2026-11-30T00:00:00+09:00"), .en, []),
        (.warning(time: t, activity: "social-limit", selection: "social", starts: "2026-11-29T13:11:00+09:00", remaining: "5m", users: [1000]),
         .en, ["warning social will be blocked soon. Blocking starts in 5 min. left=300"]),
        (.warning(time: t, activity: "social-limit", selection: "social", starts: "2026-11-29T13:11:00+09:00", remaining: "5m"),
         .ja, ["warning まもなくsocialがブロックされます。あと5分でブロックが始まります。 left=300"]),
        (.warning(time: t, activity: "social-limit", selection: "social", starts: "2026-11-29T13:11:00+09:00", remaining: "5m", users: [1001]),
         .en, ["nothing"]),
        (NativeHostTests.moreTime(.granted, uid: 1000), .en, ["more-time More time for social. Available until 13:21 — 15 min left."]),
        (NativeHostTests.moreTime(.granted, uid: 1000), .ja, ["more-time socialの時間が延長されました。13:21まで使えます（残り15分）。"]),
        (NativeHostTests.moreTime(.denied, uid: 1000), .en, ["more-time No more time for social. The request was denied."]),
        (NativeHostTests.moreTime(.expired, uid: 1000), .en, ["more-time No answer about social. The request for more time expired unanswered."]),
        (NativeHostTests.moreTime(.granted, uid: 1001), .en, []),
        (NativeHostTests.moreTime(.asked, uid: 1000), .en, []),
        (NativeHostTests.moreTime(.ended, uid: 1000), .en, []),
        (.shieldHit(time: t, kind: .deniedLaunch, selection: "games", path: "/usr/games/steam", app: "Steam", until: nil), .en, ["nothing"]),
    ])
    func events(event: WatchEvent, language: Language, told: [String]) {
        var s = NativeHostTests.started(language)
        let actions = s.event(.event(event), selection: nil, now: NativeHostTests.now)
        let refreshes: Bool = switch event {
        case .lock, .unlock, .limit, .moreTime, .dropped: true
        default: false
        }
        let said = actions.compactMap { action -> String? in
            guard case .browser(let o) = action else { return nil }
            let left = o["left"]?.int.map { " left=\($0)" } ?? ""
            return "\(o["type"]?.string ?? "?") \(o["text"]?.string ?? "?")\(left)"
        }
        #expect(said == told.filter { $0 != "nothing" })
        #expect(actions.last == (refreshes ? .web(site: "www.youtube.com") : actions.last), "\(actions)")
        #expect(actions.contains(.web(site: "www.youtube.com")) == refreshes, "\(actions)")
        if case .moreTime = event, let first = actions.first, case .browser(let o) = first {
            #expect(o["event"] == .object(event.json), "the watch event as it is")
        }
        if case .warning = event, let first = actions.first, case .browser(let o) = first {
            #expect(o["activity"] == "social-limit" && o["selections"] == ["social"])
        }
    }

    @Test("B1: blockd's restart (subscribed again) and missed events send the site again")
    func resubscribed() {
        var s = NativeHostTests.started()
        #expect(s.event(.resubscribed, selection: nil, now: NativeHostTests.now) == [.web(site: "www.youtube.com")])
        #expect(s.event(.event(WatchEvent(["event": "dropped", "count": 3])), selection: nil, now: NativeHostTests.now)
                == [.web(site: "www.youtube.com")])
    }

    @Test("B5: while logind says the session is idle or locked no page counts, whatever the extension says; back, the site counts again")
    func presence() {
        var s = NativeHostTests.started()
        let now = NativeHostTests.now
        #expect(s.presence(away: true, now: now).contains(.web(site: nil)))
        #expect(s.received(.site("reddit.com"), now: now) == [.web(site: nil)], "the extension's word is kept, not counted")
        #expect(s.received(.refresh, now: now) == [.web(site: nil)])
        #expect(s.presence(away: true, now: now) == [], "no news")
        #expect(s.presence(away: false, now: now).contains(.web(site: "reddit.com")))
        var quiet = NativeHostTests.session()
        #expect(quiet.presence(away: true, now: now).allSatisfy { if case .log = $0 { true } else { false } }, "nothing is asked before the extension speaks")
        #expect(quiet.received(.hello(browser: "firefox", version: nil, lang: nil), now: now).contains(.web(site: nil)))
    }

    @Test("B1: a selection's own texts word the warning, as they word the notification (S6)")
    func selectionTexts() {
        var s = NativeHostTests.started()
        let warning = WatchEvent.warning(time: NativeHostTests.t, activity: "social-limit", selection: "social",
                                         starts: "2026-11-29T13:11:00+09:00", remaining: "5m")
        #expect(s.textsWanted(for: .event(warning)) == "social")
        #expect(s.textsWanted(for: .event(.lock(time: NativeHostTests.t, selection: "social", until: nil, reasons: []))) == nil)
        let info = SelectionInfo(name: "social", texts: ["WarningTitle": "Wrap up", "WarningBody": "{remaining} to go."])
        guard case .browser(let o)? = s.event(.event(warning), selection: info, now: NativeHostTests.now).first else { Issue.record("nothing said"); return }
        #expect(o["text"] == "Wrap up. 5 min to go.")
    }

    // MARK: more

    @Test("B1, M5: the answer to the extension's more, worded as the agent words the same news", arguments: [
        (DaemonOutcome.ok(GrantReply(id: "m7", selection: "social", start: t, end: "2026-11-29T13:21:00+09:00", uid: 1000).json), Language.en,
         ["type": "more", "ok": true, "answer": "granted", "id": "m7", "until": "2026-11-29T13:21:00+09:00",
          "text": "More time for social. Available until 13:21 — 15 min left."] as JSONObject, true),
        // M5: a grant another activity still holds says so on the block page too.
        (.ok({ var g = GrantReply(id: "m9", selection: "social", start: t, end: "2026-11-29T13:21:00+09:00", uid: 1000)
               g.lifts = .known(.nothing)
               g.held = [HeldReply(selection: "social", activity: "bedtime", kind: .known(.schedule), moreTime: .known(.no), locked: false,
                                   until: "2026-11-29T21:00:00+09:00")]
               return g.json }()), .en,
         ["type": "more", "ok": true, "answer": "granted", "id": "m9", "until": "2026-11-29T13:21:00+09:00",
          "text": "More time for social. It lifts nothing yet: social stays blocked by another activity until 21:00."] as JSONObject, true),
        (.ok(MoreTimeRequestReply(id: "m8", selection: "social", asked: t, expires: "2026-11-29T13:36:00+09:00", uid: 1000).json), .en,
         ["type": "more", "ok": true, "answer": "asked", "id": "m8", "until": "2026-11-29T13:36:00+09:00",
          "text": "Asked for more time. You will be told the answer for social."] as JSONObject, true),
        (.ok(MoreTimeRequestReply(id: "m8", selection: "social", asked: t, expires: nil, uid: 1000).json), .ja,
         ["type": "more", "ok": true, "answer": "asked", "id": "m8", "until": nil,
          "text": "時間の延長を頼みました。socialについての返事をお知らせします。"] as JSONObject, true),
        (.refused(CoreError(.permissionDenied, "more time for social is not allowed (MoreTime=no)")), .en,
         ["type": "more", "ok": false, "text": "more time for social is not allowed (MoreTime=no)"] as JSONObject, false),
        (.unreachable("blockd is not running"), .en, ["type": "more", "ok": false, "text": "blockd is not running"] as JSONObject, false),
    ])
    func more(outcome: DaemonOutcome, language: Language, told: JSONObject, refreshes: Bool) {
        var s = NativeHostTests.started(language)
        let actions = s.answered(more: "social", outcome, now: NativeHostTests.now)
        #expect(actions.first == .browser(told))
        #expect(actions.contains(.web(site: "www.youtube.com")) == refreshes, "a grant or a request changes what is blocked or asked")
    }

    // MARK: The command line

    @Test("B1: blockc-agent is the host under the name blockd-nm-host or with --native-host, whatever the browser passes", arguments: [
        ("/usr/local/libexec/blockd/blockd-nm-host", ["chrome-extension://abcdefghijklmnop/"],
         AgentCommandLine.Mode.nativeHost(caller: ["chrome-extension://abcdefghijklmnop/"])),
        ("blockd-nm-host", ["/usr/lib/mozilla/native-messaging-hosts/blockd.json", "blockd@example.org"],
         .nativeHost(caller: ["/usr/lib/mozilla/native-messaging-hosts/blockd.json", "blockd@example.org"])),
        ("blockd-nm-host", [], .nativeHost(caller: [])),
        ("/x/blockc-agent", ["--native-host", "chrome-extension://a/"], .nativeHost(caller: ["chrome-extension://a/"])),
        ("/x/blockc-agent", ["--socket", "/run/blockd/blockd.sock", "watch", "--notify"],
         .agent(["--socket", "/run/blockd/blockd.sock", "watch", "--notify"])),
        ("/x/blockc-agent", ["--help"], .help),
        ("/x/blockc-agent", ["-h"], .help),
        ("/x/blockc-agent", ["--version"], .version),
        ("blockd-nm-host", ["--version"], .version),
        ("/x/blockc-agent", ["status"], .agent(["status"])),
    ])
    func commandLine(argv0: String, arguments: [String], mode: AgentCommandLine.Mode) {
        #expect(AgentCommandLine.mode(argv0: argv0, arguments: arguments) == mode)
    }
}
