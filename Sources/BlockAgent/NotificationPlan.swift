import BlockClient
import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// What the agent knows about a selection from the daemon's `selection-show`: its alternative
/// (`OpenURL=`, S1) and its own texts (S6). Missing or unreadable means "none".
public struct SelectionInfo: Sendable, Equatable {
    public var name: String
    public var openURL: String?
    public var texts: [String: String]

    public init(name: String, openURL: String? = nil, texts: [String: String] = [:]) {
        self.name = name
        self.openURL = openURL
        self.texts = texts
    }

    /// From the `selection-show` answer, `{"selection": {name, openURL, texts, …}}`; nil when
    /// it names no selection.
    public init?(answer: JSONObject) {
        let s = SelectionShowReply(answer).selection
        guard !s.name.isEmpty else { return nil }
        self.init(name: s.name, openURL: (s.openURL?.isEmpty ?? true) ? nil : s.openURL, texts: s.texts)
    }
}

/// One notification to send, decided without any I/O so that every rule is unit-tested.
public struct PlannedNotification: Sendable, Equatable {
    /// S2: the slot this notification occupies; a later one for the same selection replaces it.
    public var selection: String
    public var summary: String
    public var body: String
    /// The "open" button (S1), present only when S4 allows it.
    public var action: Action?
    /// freedesktop urgency: 0 low, 1 normal, 2 critical.
    public var urgency: UInt8
    /// M4: more-time buttons, each sending one request to blockd as this user.
    public var buttons: [Button] = []
    /// S2: the slot when it is not the selection's (an administrator's request notification).
    public var slot: String? = nil
    public var slotKey: String { slot ?? selection }

    public struct Action: Sendable, Equatable {
        public var label: String
        /// Already expanded with S7 encoding; handed to the opener as one argv element.
        public var url: String
    }
}

/// Turns daemon events into notifications: texts from S6 templates in the user's language,
/// the selection's overrides first, values formatted for people in the user's zone.
public struct NotificationPlanner: Sendable {
    public var language: Language
    public var clock: LocalClock

    public init(language: Language, clock: LocalClock) {
        self.language = language
        self.clock = clock
    }

    /// What the S4 check found, passed in because finding it is I/O.
    public struct Abilities: Sendable, Equatable {
        /// The server's `GetCapabilities` includes `actions`.
        public var serverActions: Bool
        /// An opener (`xdg-open`) is on PATH.
        public var opener: Bool

        public init(serverActions: Bool, opener: Bool) {
            self.serverActions = serverActions
            self.opener = opener
        }
    }

    /// The notification for an event, or nil for events people are not shown (tamper repairs,
    /// refusals and failures go to `blockc failures` and the journal, not to the desktop).
    public func plan(_ event: WatchEvent, selection info: SelectionInfo?, now: Date, abilities: Abilities,
                     viewer: Viewer = Viewer()) -> PlannedNotification? {
        // More-time events are planned by planMoreTime; tamper repairs, refusals and failures
        // are not shown, nor are a limit (its selections' locks are) and a newer daemon's event.
        let selection: String, until: String?
        switch event {
        case .shieldHit(let e): (selection, until) = (e.selection, e.until)
        case .lock(let e): (selection, until) = (e.selection, e.until)
        case .unlock(let e): (selection, until) = (e.selection, nil)
        case .warning(let e): (selection, until) = (e.selection, nil)
        case .refusal, .failure, .tamper, .limit, .dropped, .moreTime, .unknown: return nil
        }
        // U2: an administrator's agent gets every user's events; it shows only its own user's.
        guard !selection.isEmpty, event.concerns(viewer.uid) else { return nil }
        let texts = info?.texts ?? [:]
        let end = instant(until)
        var values = TemplateValues(selection: AllowOnly.display(selection), until: end.map { display($0, now: now) },  // W2
                                    remaining: end.flatMap { remaining(from: now, to: $0) })
        let title: TextKey, body: TextKey
        var offersAlternative = false
        var urgency: UInt8 = 1
        switch event {
        case .shieldHit(let hit):
            // A `tamper` kind arrives as its own event; only launches reach the user (S1), and
            // not a newer daemon's kind, which this agent has no words for.
            switch hit.kind {
            case .known(.deniedLaunch), .known(.killed): break
            case .known(.tamper), .unknown: return nil
            }
            // Seed lesson 6: the app name may be missing; S6's fallback (selection name, then
            // "this app") applies in `render`, so nothing here invents one.
            values.app = hit.app
            (title, body, offersAlternative) = (.shieldTitle, .shieldBody, true)
        case .lock:
            (title, body, offersAlternative) = (.blockStartedTitle, .blockStartedBody, true)
        case .unlock:
            (title, body, urgency) = (.unblockedTitle, .unblockedBody, 0)
        case .warning(let warning):
            // For Warning texts {remaining} is the time until the block starts (TextKey docs).
            values.remaining = instant(warning.starts).flatMap { remaining(from: now, to: $0) }
            if let action = warning.session.flatMap(SessionAction.init(rawValue:)) {
                // Screen time: what happens to the sessions, not a selection's block.
                return PlannedNotification(selection: selection, summary: Output.clean(ScreenTexts.title(language).render(values, language: language)),
                                           body: Output.clean(ScreenTexts.body(action, language).render(values, language: language)),
                                           action: nil, urgency: action == .lock ? 1 : 2)
            }
            (title, body) = (.warningTitle, .warningBody)
        case .refusal, .failure, .tamper, .limit, .dropped, .moreTime, .unknown:
            return nil
        }
        var action: PlannedNotification.Action?
        // S4: no dead buttons. All three conditions, or no action at all.
        if offersAlternative, abilities.serverActions, abilities.opener, let url = info?.openURL {
            action = .init(label: text(.openLabel, texts, values),
                           url: PercentEncoding.expand(urlTemplate: url, values: values))
        }
        var plan = PlannedNotification(selection: selection, summary: text(title, texts, values), body: text(body, texts, values),
                                       action: action, urgency: urgency)
        if offersAlternative, abilities.serverActions { plan.buttons = moreButtons(event, viewer: viewer, texts, values) }  // M4
        return plan
    }

    /// S6: `Key[lang]`, then `Key`, then the built-in text; the values are daemon text and are
    /// cleaned of control characters before anyone sees them.
    func text(_ key: TextKey, _ overrides: [String: String], _ values: TemplateValues) -> String {
        Output.clean(Texts.resolve(key, language: language, overrides: overrides).render(values, language: language))
    }

    func instant(_ text: String?) -> Date? {
        guard let s = text else { return nil }
        return try? TimeText.parseISO8601WithOffset(s)
    }

    /// `13:35` today; with the date otherwise, so a block that ends tomorrow never reads as if
    /// it ended this afternoon (T3).
    public func display(_ date: Date, now: Date) -> String {
        let c = clock.civil(of: date)
        let hm = "\(two(c.secondsOfDay / 3600)):\(two(c.secondsOfDay / 60 % 60))"
        let today = clock.civil(of: now).date
        if c.date == today { return hm }
        switch language {
        case .en:
            return Output(now: now, clock: clock, color: false).time(date)
        case .ja:
            let year = c.date.year == today.year ? "" : "\(c.date.year)年"
            return "\(year)\(c.date.month)月\(c.date.day)日 \(hm)"
        }
    }

    /// The time from `now` to `date` by the rule `blockc` uses (Output.between): the minutes
    /// the two clock times show, so "until 13:50 — 44 min left" always agrees with itself.
    public func remaining(from now: Date, to date: Date) -> String? {
        let seconds = date.timeIntervalSince(now)
        guard seconds >= 60, seconds < 86_400 else { return remaining(seconds) }
        return remaining(Double(DurationText.minutesShown(from: now, to: date) * 60))
    }

    /// "29 min" / "29分": at most two units, rounded up so that nothing reads as over while
    /// time remains; nil once it has passed (the template then falls back, S6).
    public func remaining(_ seconds: Double) -> String? {
        guard seconds > 0 else { return nil }
        let s = Int(seconds.rounded(.up))
        let en = language == .en
        if s < 60 { return en ? "\(s) s" : "\(s)秒" }
        let m = (s + 59) / 60
        if m < 60 { return en ? "\(m) min" : "\(m)分" }
        if s < 86_400 {
            let (h, rest) = (m / 60, m % 60)
            if rest == 0 { return en ? "\(h) h" : "\(h)時間" }
            return en ? "\(h) h \(rest) min" : "\(h)時間\(rest)分"
        }
        let h = (s + 3599) / 3600
        let (d, rest) = (h / 24, h % 24)
        if rest == 0 { return en ? "\(d) d" : "\(d)日" }
        return en ? "\(d) d \(rest) h" : "\(d)日\(rest)時間"
    }

    private func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
