import BlockClient
import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// M4: how the agent reaches blockd for more time: each on a short connection of its own, as
/// this user, so the daemon checks who asks from SO_PEERCRED and decides; the agent only shows.
struct MoreTimeDaemon: Sendable {
    var uid: Int = Int(getuid())
    /// Sends a button's request; the daemon's answer, or nil when it could not be reached.
    var send: @Sendable (Request) -> Response? = { _ in nil }
    /// Whether blockd lets this user approve (`requests` answers `admin`); nil: not known now.
    var isAdmin: @Sendable () -> Bool? = { nil }

    /// The real daemon at `path`.
    static func at(_ path: String) -> MoreTimeDaemon {
        let send: @Sendable (Request) -> Response? = { request in
            guard let connection = try? ControlConnection(path: path, timeout: 5) else { return nil }
            defer { connection.close() }
            return try? connection.send(request)
        }
        var d = MoreTimeDaemon()
        d.send = send
        d.isAdmin = {
            guard case .ok(let answer)? = send(.requests) else { return nil }
            return RequestsReply(answer).admin
        }
        return d
    }
}

/// What the agent remembers of more time between events (plain data).
struct MoreTimeMemory {
    /// Whether blockd said we may approve; asked again after a resubscription.
    var admin: Bool?
    /// Selections we asked for and still wait on (S4: no second "Ask" button).
    var asked: Set<String> = []
    /// Request ids an administrator's notification shows, for the answer to replace (S2).
    var requests: Set<String> = []

    /// Takes note of a more-time event about us before it is planned.
    mutating func note(_ event: WatchEvent, uid: Int) {
        guard case .moreTime(let m) = event, m.uid == uid else { return }
        switch m.kind {
        case .known(.asked): asked.insert(m.selection)
        case .known(.granted), .known(.denied), .known(.expired), .known(.ended), .known(.cancelled), .unknown: asked.remove(m.selection)
        }
    }

    /// After a notification went out: an administrator's request slot is now showing, or its
    /// answer replaced it.
    mutating func shown(_ plan: PlannedNotification) {
        guard let slot = plan.slot, slot.hasPrefix("more-time ") else { return }
        let id = String(slot.dropFirst("more-time ".count))
        if plan.buttons.isEmpty { requests.remove(id) } else { requests.insert(id) }
    }
}

extension Notifier {
    /// The viewer for planning `event`: asks blockd once whether we may approve, and only when
    /// a request arrives.
    func viewer(for event: WatchEvent) -> NotificationPlanner.Viewer {
        moreTime.note(event, uid: daemon.uid)
        // Only a request, or (A1) a lock for everyone with an offer, shows something that
        // depends on whether we may approve.
        let matters: Bool = switch event {
        case .moreTime(let m): m.kind == .known(.asked)
        case .lock(let l): l.users == nil && l.more != nil
        case .unlock, .refusal, .failure, .shieldHit, .tamper, .limit, .warning, .dropped, .unknown: false
        }
        if matters, moreTime.admin == nil { moreTime.admin = daemon.isAdmin() }
        return .init(uid: daemon.uid, isAdmin: moreTime.admin ?? false, asked: moreTime.asked, requests: moreTime.requests)
    }

    /// A more-time button was pressed: the request goes to blockd as this user. The answer
    /// comes back as an event (granted, asked, ...) that replaces the notification (S2).
    func send(_ request: Request) {
        switch daemon.send(request) {
        case .ok?:
            log("sent '\(request.command.rawValue)' to blockd from a notification button")
        case .error(let e)?:
            log("blockd refused '\(request.command.rawValue)' from a notification button: \(e.message)")
        case .event?, nil:
            log("cannot reach blockd to send '\(request.command.rawValue)' from a notification button; is it running?")
        }
    }
}
