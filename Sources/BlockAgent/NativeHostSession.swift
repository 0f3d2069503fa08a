import BlockClient
import BlockCore
import FoundationEssentials

/// The native-messaging host's decisions (B1), with no I/O: each input (a message from the
/// extension, blockd's answer, a `watch` event, the clock) gives the actions to carry out,
/// and the loop in NativeHost.swift carries them out and feeds blockd's answers back. Timers
/// are data: `deadline` is when the loop must call `tick`.
struct NativeHostSession {
    static let retrySeconds = 5.0

    var words: NativeHostWords
    /// What the extension reported last (nil: no page counts), sent again on every refresh.
    private(set) var site: String?
    private(set) var browser: String?
    /// Whether the extension has said anything: until then there is nobody to tell.
    private(set) var started = false
    /// Whether blockd answered the last `web` (nil: not asked yet).
    private(set) var connected: Bool?
    /// The last `connected: false` text sent, so that a retry that fails the same way is quiet.
    private(set) var outage: String?
    /// When the last `web` went out.
    private(set) var lastAttempt: Date?
    /// The last site blockd refused, said once.
    private var refusedSite: String?
    /// B5: logind says the person's session is idle or locked: no page counts, whatever the
    /// browser says (its own idle state may not know of a locked screen).
    private(set) var away = false

    enum Action: Equatable {
        /// `web` on the long-lived connection; its outcome goes back to `answered(web:…)`.
        case web(site: String?)
        /// `more` on a connection of its own; its outcome goes back to `answered(more:…)`.
        case more(Request.MoreArguments)
        case browser(JSONObject)
        case log(String)
    }

    init(words: NativeHostWords) {
        self.words = words
    }

    /// When the loop must wake for `tick`: a retry every 5 seconds while blockd does not
    /// answer; nil otherwise. While it answers nothing is asked on a timer: its events say when
    /// what is blocked changed (and a restart of blockd, by the events' connection subscribing
    /// again), so an idle host and an idle blockd sleep.
    var deadline: Date? {
        guard started, let lastAttempt, connected == false else { return nil }
        return lastAttempt.addingTimeInterval(Self.retrySeconds)
    }

    mutating func tick(now: Date) -> [Action] {
        guard let deadline, now >= deadline else { return [] }
        return refresh(now: now)
    }

    /// Asks blockd again with the last site: what is blocked may have changed.
    private mutating func refresh(now: Date) -> [Action] {
        guard started else { return [] }
        lastAttempt = now
        return [.web(site: away ? nil : site)]
    }

    /// B5: logind's word on the session changed (idle or locked, or back).
    mutating func presence(away: Bool, now: Date) -> [Action] {
        guard away != self.away else { return [] }
        self.away = away
        return [.log(away ? "the session is idle or locked: no page counts" : "the session is in use again")] + refresh(now: now)
    }

    mutating func received(_ message: BrowserMessage, now: Date) -> [Action] {
        started = true
        switch message {
        case .hello(let browser, let version, let lang):
            self.browser = browser
            if let language = BrowserMessage.language(lang) { words.planner.language = language }
            let what = [browser, version].compactMap { $0 }.joined(separator: " ")
            return [.log("the extension says hello\(what.isEmpty ? "" : " from \(what)"); texts in \(words.planner.language.rawValue)")]
                + refresh(now: now)
        case .site(let site):
            self.site = site
            return refresh(now: now)
        case .refresh:
            return refresh(now: now)
        case .more(let selection, let minutes, let reason):
            let arguments = Request.MoreArguments(selection: selection, seconds: minutes.map { $0 * 60 }, reason: reason)
            guard minutes == 15 || minutes == 1 else {
                return [.browser(["type": "more", "ok": false, "text": "ask for 15 or 1 minutes"])]
            }
            do throws(CoreError) {
                try arguments.validate()
            } catch {
                return [.browser(words.more(.refused(error), selection: selection, now: now))]
            }
            return [.more(arguments)]
        }
    }

    /// blockd's answer to `web` for `site`.
    mutating func answered(web site: String?, _ outcome: DaemonOutcome, now: Date) -> [Action] {
        switch outcome {
        case .ok(let reply):
            var actions: [Action] = []
            if connected == false { actions.append(.log("blockd answers again")) }
            (connected, outage) = (true, nil)
            return actions + [.browser(words.state(reply, now: now))]
        case .refused(let error) where site != nil:
            // A site blockd will not take (not a host name, or a blockd without `web`): ask
            // with no site, so that the extension still learns what is blocked, or hears that
            // blockd will not answer. The site stays: the next refresh offers it again.
            let said = refusedSite == site
            refusedSite = site
            return (said ? [] : [.log("blockd refused the site \(site!): \(error.message); asking without it")]) + [.web(site: nil)]
        case .refused(let error):
            return lost("blockd refused 'web': \(error.message) (is blockd older than this host?)")
        case .unreachable(let why):
            return lost(why)
        }
    }

    /// blockd is away, or will not answer `web`: say so once per outage and per reason, and
    /// retry on the 5-second deadline. The extension keeps the last state it had.
    private mutating func lost(_ why: String) -> [Action] {
        connected = false
        guard outage != why else { return [] }
        outage = why
        return [.log("\(why); retrying every \(Int(Self.retrySeconds)) seconds"), .browser(NativeHostWords.disconnected(why))]
    }

    /// blockd's answer to the extension's `more`; a grant changes what is blocked at once.
    mutating func answered(more selection: String, _ outcome: DaemonOutcome, now: Date) -> [Action] {
        var actions: [Action] = [.browser(words.more(outcome, selection: selection, now: now))]
        if case .ok = outcome { actions += refresh(now: now) }
        return actions
    }

    /// The selection whose own texts (`selection-show`) the event is worded with, if the host
    /// will say anything about it.
    func textsWanted(for input: AgentInput) -> String? {
        guard started, case .event(let event) = input else { return nil }
        switch event {
        case .warning(let w) where event.concerns(words.uid): return w.selection
        case .moreTime(let m) where m.uid == words.uid: return m.selection
        case .lock, .unlock, .refusal, .failure, .shieldHit, .tamper, .limit, .warning, .moreTime, .dropped, .unknown: return nil
        }
    }

    /// A `watch` event, or the subscriber's note that it subscribed again (blockd restarted
    /// and forgot the site: it is sent again).
    mutating func event(_ input: AgentInput, selection info: SelectionInfo?, now: Date) -> [Action] {
        guard started else { return [] }
        let event: WatchEvent
        switch input {
        case .resubscribed: return refresh(now: now)
        case .event(let e): event = e
        }
        switch event {
        case .lock, .unlock, .limit, .dropped:
            return refresh(now: now)
        case .moreTime:
            return (words.moreTime(event, selection: info, now: now).map { [Action.browser($0)] } ?? []) + refresh(now: now)
        case .warning:
            return words.warning(event, selection: info, now: now).map { [.browser($0)] } ?? []
        case .refusal, .failure, .shieldHit, .tamper, .unknown:
            return []
        }
    }
}
