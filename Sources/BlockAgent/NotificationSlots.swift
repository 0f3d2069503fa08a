import BlockCore

/// The agent's memory, as plain data so the rules are unit-tested without a bus:
/// - S2: the server's id for each selection's one notification, passed back as `replaces_id`;
/// - S1/S4: which ids are ours and what their "open" action opens (only those are acted on);
/// - no duplicates: an event already shown is not shown again, e.g. when a restarted daemon
///   re-announces a block the agent showed before the restart.
public struct NotificationSlots: Sendable {
    /// Selection → the notification currently showing it.
    public private(set) var ids: [String: UInt32] = [:]
    /// Our notification id → the URL its action opens (nil: it has no action).
    public private(set) var actions: [UInt32: String?] = [:]
    /// M4: our notification id → its more-time buttons' requests, by action key.
    public private(set) var requests: [UInt32: [String: Request]] = [:]
    /// Selection → what its notification last said, as a key ("lock|until|reasons", "unlock").
    private var shownState: [String: String] = [:]
    /// Recently shown events, exactly as received, oldest first (bounded).
    private var recent: [String] = []
    private var recentSet: Set<String> = []
    static let recentLimit = 128

    public init() {}

    /// True when the event should be shown, and remembers it; false for a duplicate.
    public mutating func admit(_ event: WatchEvent) -> Bool {
        let exact = JSON.object(event.json).serialized()
        if recentSet.contains(exact) { return false }
        // A lock with the same end and reasons as the one on screen says nothing new;
        // neither does a second unlock. Shield hits always count: each is a new launch.
        let shown: (selection: String, key: String)? = switch event {
        case .lock(let l): (l.selection, "lock|\(l.until ?? "")|\(l.reasons.joined(separator: ","))")
        case .unlock(let u): (u.selection, "unlock")
        case .refusal, .failure, .shieldHit, .tamper, .limit, .warning, .moreTime, .dropped, .unknown: nil
        }
        if let shown {
            if shownState[shown.selection] == shown.key { return false }
            shownState[shown.selection] = shown.key
        }
        recent.append(exact)
        recentSet.insert(exact)
        if recent.count > NotificationSlots.recentLimit {
            recentSet.remove(recent.removeFirst())
        }
        return true
    }

    /// S2: the id to replace, 0 for a new notification.
    public func replacesID(for selection: String) -> UInt32 { ids[selection] ?? 0 }

    /// The server's answer to Notify for this selection.
    public mutating func record(id: UInt32, selection: String, url: String?, requests buttons: [String: Request] = [:]) {
        if let old = ids[selection], old != id { (actions[old], requests[old]) = (nil, nil) }
        ids[selection] = id
        actions[id] = .some(url)
        requests[id] = buttons.isEmpty ? nil : buttons
    }

    /// M4: `ActionInvoked(id, key)` for a more-time button: the request to send, only for our
    /// own id and a key we gave it.
    public func request(forAction id: UInt32, key: String) -> Request? {
        requests[id]?[key]
    }

    /// `ActionInvoked(id, key)`: the URL to open, only for our own id and our own key.
    public func url(forAction id: UInt32, key: String) -> String? {
        guard key == NotificationSlots.openKey, let entry = actions[id] else { return nil }
        return entry
    }

    /// `NotificationClosed(id)`: the id is the server's to reuse now; the next notification
    /// for that selection is a new one.
    public mutating func closed(id: UInt32) {
        guard actions[id] != nil else { return }
        (actions[id], requests[id]) = (nil, nil)
        for (selection, held) in ids where held == id { ids[selection] = nil }
    }

    /// Another server took over the name: the old ids mean nothing to it.
    public mutating func forgetServer() {
        ids = [:]
        actions = [:]
        requests = [:]
    }

    public static let openKey = "open"
}
