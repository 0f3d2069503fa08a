import BlockClient
import BlockCore
import FoundationEssentials

/// A message from blockd's browser extension to the native-messaging host (B1), read from
/// one frame. The contract between the extension, the host and blockd names four.
enum BrowserMessage: Equatable {
    /// The extension started: which browser, its version, and the language to word texts in.
    case hello(browser: String?, version: String?, lang: String?)
    /// The host shown in the focused window's visible tab while the person is active; nil: no
    /// browser page counts now (idle, locked, unfocused, not an http(s) page).
    case site(String?)
    /// "Ask for more time" on the block page: 15 or 1 minutes, checked by the session so that
    /// a wrong number gets an answer rather than silence.
    case more(selection: String, minutes: Int?, reason: String?)
    case refresh

    init(_ o: JSONObject) throws(AgentError) {
        let type = o["type"]?.string ?? ""
        func text(_ key: String) throws(AgentError) -> String? {
            switch o[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw .badMessage("the browser sent a '\(type)' message whose \(key) is not a string; ignored it")
            }
        }
        switch type {
        case "hello": self = .hello(browser: try text("browser"), version: try text("version"), lang: try text("lang"))
        case "site":
            let site = try text("site")
            self = .site(site.map { $0.trimmed() }.flatMap { $0.isEmpty ? nil : $0 })
        case "more": self = .more(selection: try text("selection") ?? "", minutes: o["minutes"]?.int, reason: try text("reason"))
        case "refresh": self = .refresh
        default:
            let shown = String(type.unicodeScalars.prefix(40).map { $0.value < 0x20 ? "?" : Character($0) })
            throw .badMessage("the browser sent a message of unknown type '\(shown)'; ignored it")
        }
    }

    /// hello's `lang` ("ja", "ja-JP", "en_US") as one of the languages blockd has texts for.
    static func language(_ tag: String?) -> Language? {
        guard let tag else { return nil }
        return Language(rawValue: tag.prefix { $0 != "-" && $0 != "_" && $0 != "." }.lowercased())
    }
}

/// The one request the host sends on its long-lived connection, `web`, as the contract spells
/// it: `web {"site":"www.youtube.com"}`, or `web {}` when no page counts.
enum WebRequest {
    static let command = Command.web.rawValue

    static func line(site: String?) -> String {
        var o = JSONObject()
        if let site { o["site"] = .string(site) }
        return "\(command) \(JSON.object(o).serialized())"
    }
}

/// What one request to blockd came to.
enum DaemonOutcome: Equatable {
    case ok(JSONObject)
    /// blockd answered `ERR`.
    case refused(CoreError)
    /// No answer: not running, not ours to reach, or it went away; the sentence says which.
    case unreachable(String)
}

/// The host's messages to the extension, worded by the notification agent's own planner (S6:
/// the same built-in texts, a selection's own overrides, the user's zone), in hello's language.
struct NativeHostWords {
    var planner: NotificationPlanner
    /// The browser's user: the host says only what concerns them (A1, U2).
    var uid: Int

    /// `until 18:00` today, `until Sat 5 Dec 07:00` on another day (T3); `18:00まで`. The time
    /// is the notifications' `{until}`; nil when the daemon gave no end or an unreadable one.
    func untilText(_ iso: String?, now: Date) -> String? {
        guard let date = planner.instant(iso) else { return nil }
        let shown = planner.display(date, now: now)
        return switch planner.language {
        case .en: "until \(shown)"
        case .ja: "\(shown)まで"
        }
    }

    /// The daemon's `web` answer as it is, marked connected, each blocked entry with its
    /// `untilText`.
    func state(_ reply: JSONObject, now: Date) -> JSONObject {
        var o: JSONObject = ["type": "state", "connected": true]
        for (key, value) in reply where key != "type" && key != "connected" {
            guard key == "blocked", case .array(let entries) = value else {
                o[key] = value
                continue
            }
            o[key] = .array(entries.map { entry in
                guard case .object(var e) = entry else { return entry }
                e["untilText"] = untilText(e["until"]?.string, now: now).map(JSON.string) ?? .null
                return .object(e)
            })
        }
        return o
    }

    /// blockd cannot be reached, or will not answer `web`: the extension keeps what it had.
    static func disconnected(_ message: String) -> JSONObject {
        ["type": "state", "connected": false, "message": .string(message)]
    }

    /// A limit's warning, for this user only: the notification's title and body as one text.
    func warning(_ event: WatchEvent, selection info: SelectionInfo?, now: Date) -> JSONObject? {
        guard case .warning(let w) = event,
              let note = planner.plan(event, selection: info, now: now, abilities: .init(serverActions: false, opener: false),
                                      viewer: .init(uid: uid)) else { return nil }
        let left = (try? DurationText.parse(w.remaining))
            ?? planner.instant(w.starts).map { max(0, Int($0.timeIntervalSince(now).rounded(.up))) }
        return ["type": "warning", "activity": .string(w.activity), "selections": [.string(w.selection)],
                "left": left.map { .int(Int64($0)) } ?? .null, "text": .string(sentence(note.summary, note.body))]
    }

    /// The answer to one of this user's requests for more time (granted, denied, expired), as
    /// the agent words it; nil for anything else (a request that waits, someone else's).
    func moreTime(_ event: WatchEvent, selection info: SelectionInfo?, now: Date) -> JSONObject? {
        guard case .moreTime(let m) = event, m.uid == uid else { return nil }
        switch m.kind {
        case .known(.granted), .known(.denied), .known(.expired): break
        case .known(.asked), .known(.ended), .known(.cancelled), .unknown: return nil
        }
        guard let note = answer(m, info, now) else { return nil }
        return ["type": "more-time", "event": .object(event.json), "text": .string(note)]
    }

    /// The answer to the extension's `more`: what blockd said, worded as the agent words the
    /// same news (a grant as "More time for …", a request that waits as "Asked for more time").
    func more(_ outcome: DaemonOutcome, selection: String, now: Date) -> JSONObject {
        switch outcome {
        case .refused(let e): return ["type": "more", "ok": false, "text": .string(Output.clean(e.message))]
        case .unreachable(let why): return ["type": "more", "ok": false, "text": .string(why)]
        case .ok(let o):
            let (answer, id, until, kind): (String, String, String?, WatchEvent.MoreTime.Kind?) = switch MoreReply(o) {
            case .granted(let g): ("granted", g.id, g.end, .granted)
            case .pending(let r): ("asked", r.id, r.expires, .asked)
            case .unknown(let o): (o["state"]?.string ?? "", o["id"]?.string ?? "", nil, nil)
            }
            var text = answer
            if let kind, case .moreTime(var m) = WatchEvent.moreTime(time: "", kind: kind, id: id.isEmpty ? "-" : id, selection: selection,
                                                                     until: until, message: "", uid: uid >= 0 ? UInt32(uid) : nil) {
                // M5: a grant another activity still holds is worded as the agent words it.
                if case .granted(let g) = MoreReply(o), let held = g.held, !held.isEmpty {
                    let ends = held.map(\.until)
                    (m.lifts, m.heldUntil) = (g.lifts, ends.contains(nil) ? nil : ends.compactMap { $0 }.max())
                }
                if let note = self.answer(m, nil, now) { text = note }
            }
            return ["type": "more", "ok": true, "answer": .string(answer), "id": .string(id),
                    "until": until.map(JSON.string) ?? .null, "text": .string(text)]
        }
    }

    /// The asker's own notification for a more-time event: the one not in an administrator's slot.
    private func answer(_ m: WatchEvent.MoreTime, _ info: SelectionInfo?, _ now: Date) -> String? {
        planner.planMoreTime(m, selection: info, now: now, abilities: .init(serverActions: false, opener: false),
                             viewer: .init(uid: uid)).first { $0.slot == nil }.map { sentence($0.summary, $0.body) }
    }

    /// A notification's title and body as one text: the title ends as a sentence first.
    func sentence(_ title: String, _ body: String) -> String {
        guard !body.isEmpty else { return title }
        if let last = title.last, ".!?。！？".contains(last) { return title + (planner.language == .ja ? "" : " ") + body }
        return planner.language == .ja ? "\(title)。\(body)" : "\(title). \(body)"
    }
}
