import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

extension PlannedNotification {
    /// M4: a button that sends one request to blockd, over the control socket as this user.
    public struct Button: Sendable, Equatable {
        /// The action key given to the notification server.
        public var key: String
        public var label: String
        public var request: Request
    }
}

extension NotificationPlanner {
    /// Who is looking (M4): the agent's uid, whether blockd said it may approve, and what it
    /// asked for and still waits on. Gathered by the notifier; plain data here.
    public struct Viewer: Sendable, Equatable {
        public var uid: Int
        public var isAdmin: Bool
        /// Selections this user has a pending request for: no second "Ask" button (S4).
        public var asked: Set<String>
        /// Request ids an administrator's notification is showing, to be replaced by the answer.
        public var requests: Set<String>

        public init(uid: Int = -1, isAdmin: Bool = false, asked: Set<String> = [], requests: Set<String> = []) {
            (self.uid, self.isAdmin, self.asked, self.requests) = (uid, isAdmin, asked, requests)
        }
    }

    public static let moreKey = "more", approveKey = "approve", denyKey = "deny"

    /// M4, S4: the daemon put into the event what `more SELECTION 15m` would get (`more`);
    /// without it, or with a request of ours already waiting, there is no button. A1: a lock
    /// for everyone is a block for the whole machine, which more time never lifts for one
    /// member, so only an administrator's agent offers it.
    func moreButtons(_ event: WatchEvent, viewer: Viewer, _ texts: [String: String], _ values: TemplateValues) -> [PlannedNotification.Button] {
        let selection: String, more: WireWord<MoreTimeOffer>?
        switch event {
        case .lock(let e): (selection, more) = (e.selection, e.more)
        case .shieldHit(let e): (selection, more) = (e.selection, e.more)
        case .unlock, .refusal, .failure, .tamper, .limit, .warning, .moreTime, .dropped, .unknown: return []
        }
        // A newer daemon's offer is one this agent cannot make a button for.
        guard case .known(let offer)? = more, !viewer.asked.contains(selection), !(event.isForEveryone && !viewer.isAdmin) else { return [] }
        let label: TextKey = switch offer {
        case .grant: .moreLabel
        case .ask: .askLabel
        case .minute: .minuteLabel
        }
        let request = Request.more(.init(selection: selection, seconds: offer.seconds))
        return [.init(key: NotificationPlanner.moreKey, label: text(label, texts, values), request: request)]
    }

    /// M4: a more-time event as notifications. The asker's own request and its answer share
    /// the selection's slot, so the answer replaces "Asked for more time" (S2); an
    /// administrator gets each request in a slot of its own with Approve and Deny, replaced by
    /// the answer too.
    public func planMoreTime(_ event: WatchEvent.MoreTime, selection info: SelectionInfo?, now: Date, abilities: Abilities,
                             viewer: Viewer) -> [PlannedNotification] {
        let (selection, id, kind) = (event.selection, event.id, event.kind)
        guard !selection.isEmpty, !id.isEmpty else { return [] }
        let texts = info?.texts ?? [:]
        let until = instant(event.until)
        let values = TemplateValues(selection: selection, until: until.map { display($0, now: now) },
                                    remaining: until.flatMap { remaining(from: now, to: $0) })
        func note(_ title: TextKey, _ body: TextKey, slot: String?, urgency: UInt8 = 1, bodyValues: TemplateValues? = nil) -> PlannedNotification {
            PlannedNotification(selection: selection, summary: text(title, texts, values), body: text(body, texts, bodyValues ?? values),
                                action: nil, urgency: urgency, slot: slot)
        }
        let mine = event.uid == viewer.uid
        let adminSlot = "more-time \(id)"
        var out: [PlannedNotification] = []
        // The answer replaces the asker's "Asked for more time" and an administrator's request.
        func answered(_ title: TextKey, _ body: TextKey, bodyValues: TemplateValues? = nil) {
            if mine { out.append(note(title, body, slot: nil, urgency: 0, bodyValues: bodyValues)) }
            if viewer.requests.contains(id) { out.append(note(title, body, slot: adminSlot, urgency: 0, bodyValues: bodyValues)) }
        }
        switch kind {
        case .known(.asked):
            if mine { out.append(note(.askedTitle, .askedBody, slot: nil, urgency: 0)) }
            if viewer.isAdmin {
                var request = note(.requestTitle, .requestBody, slot: adminSlot)
                if abilities.serverActions {
                    request.buttons = [.init(key: NotificationPlanner.approveKey, label: text(.approveLabel, texts, values), request: .approve(id: id, seconds: nil)),
                                       .init(key: NotificationPlanner.denyKey, label: text(.denyLabel, texts, values), request: .deny(id: id, reason: nil))]
                }
                out.append(request)
            }
        case .known(.granted):
            // M5: a grant that another activity still holds says so, with when that ends.
            switch event.lifts {
            case .known(.nothing)?, .known(.some)?:
                let held = instant(event.heldUntil)
                let heldValues = TemplateValues(selection: selection, until: held.map { display($0, now: now) },
                                                remaining: held.flatMap { remaining(from: now, to: $0) })
                answered(.grantedTitle, event.lifts == .known(.nothing) ? .heldBody : .partHeldBody, bodyValues: heldValues)
            case .known(.all)?, .unknown?, nil: answered(.grantedTitle, .grantedBody)
            }
        case .known(.denied): answered(.deniedTitle, .deniedBody)
        case .known(.expired): answered(.expiredTitle, .expiredBody)
        case .known(.ended), .known(.cancelled), .unknown:
            // "ended" is followed by the lock it gives way to; "cancelled" was the user's own
            // doing; a newer daemon's kind has no texts here (blockc watch shows its message).
            break
        }
        return out
    }
}
