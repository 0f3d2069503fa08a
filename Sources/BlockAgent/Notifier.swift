import BlockBus
import BlockCore
import CSystemd
import Dispatch
import FoundationEssentials
import Glibc

/// The D-Bus half of the agent: turns queued events into `Notify` calls on the session bus
/// and acts on `ActionInvoked`. Everything here runs on one thread, the one in
/// `NotifyAgent.run` (sd-bus objects are not thread-safe; each piece of mutable state has one owner).
final class Notifier {
    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"

    /// The server currently owning the name, and our matches on its signals.
    private struct Server {
        var owner: String
        var capabilities: Set<String>
        var slots: [BusSlot]
    }

    struct Counts: Equatable {
        var shown = 0, skipped = 0, dropped = 0, opened = 0
    }

    let planner: NotificationPlanner
    let opener: Opener
    let lookup: (String) -> SelectionInfo?
    let log: (String) -> Void
    let now: () -> Date
    private var bus: Bus?
    private var server: Server?
    private(set) var slots = NotificationSlots()
    private var selections: [String: SelectionInfo] = [:]
    private var children = Children()
    /// Conditions already logged, so each is said once per occurrence (S4: log once).
    private var logged: Set<String> = []
    private(set) var counts = Counts()

    /// M4: the daemon, as this user: sends a button's request and says whether we may approve.
    let daemon: MoreTimeDaemon
    var moreTime = MoreTimeMemory()

    init(planner: NotificationPlanner, opener: Opener, lookup: @escaping (String) -> SelectionInfo?,
         log: @escaping (String) -> Void, now: @escaping () -> Date, daemon: MoreTimeDaemon = MoreTimeDaemon()) {
        self.planner = planner
        self.opener = opener
        self.lookup = lookup
        self.log = log
        self.now = now
        self.daemon = daemon
    }

    func handle(_ input: AgentInput) {
        switch input {
        case .resubscribed:
            // The daemon restarted and may have reloaded its selection files.
            selections = [:]
            moreTime.admin = nil
        case .event(.dropped(let d)):
            missed(d.count)
        case .event(let event):
            show(event)
        }
    }

    /// blockd dropped events queued for this agent because it read too slowly: nothing to
    /// show (the events are gone), but the loss is said and counted rather than silent.
    func missed(_ n: Int) {
        guard n > 0 else { return }
        counts.dropped += n
        log("blockd dropped \(n) event\(n == 1 ? "" : "s") for this agent, which fell behind; \(counts.dropped) dropped so far")
    }

    func dropped(_ n: Int) {
        guard n > 0 else { return }
        counts.dropped += n
        log("dropped \(n) event\(n == 1 ? "" : "s"): the notification server is slower than blockd's events, and only the newest are kept; \(counts.dropped) so far")
    }

    private func show(_ event: WatchEvent) {
        guard let selection = event.selection, !selection.isEmpty, slots.admit(event) else { return }
        let info = selectionInfo(selection)
        let viewer = self.viewer(for: event)
        // Planned before the bus is touched: events people never see cost no D-Bus call.
        let probe = NotificationPlanner.Abilities(serverActions: false, opener: false)
        let plan: (NotificationPlanner.Abilities) -> [PlannedNotification] = { abilities in
            if case .moreTime(let m) = event { return self.planner.planMoreTime(m, selection: info, now: self.now(), abilities: abilities, viewer: viewer) }
            return self.planner.plan(event, selection: info, now: self.now(), abilities: abilities, viewer: viewer).map { [$0] } ?? []
        }
        guard !plan(probe).isEmpty else { return }
        guard let bus = openBus(), let server = currentServer(bus) else {
            counts.skipped += 1
            return
        }
        // S4: the button needs all of OpenURL=, the server's `actions` and an opener.
        let abilities = NotificationPlanner.Abilities(serverActions: server.capabilities.contains("actions"),
                                                      opener: opener.find() != nil)
        for p in plan(abilities) {
            deliver(p, bus: bus, markup: server.capabilities.contains("body-markup"))
            moreTime.shown(p)
        }
    }

    /// R3: a notification that is no daemon event's, planned once the server's abilities are
    /// known (S4). False when there was something to say and no server showed it.
    @discardableResult
    func post(_ plan: (NotificationPlanner.Abilities) -> PlannedNotification?) -> Bool {
        guard plan(NotificationPlanner.Abilities(serverActions: false, opener: false)) != nil else { return true }  // nothing to say: no bus
        guard let bus = openBus(), let server = currentServer(bus) else {
            counts.skipped += 1
            return false
        }
        let abilities = NotificationPlanner.Abilities(serverActions: server.capabilities.contains("actions"),
                                                      opener: opener.find() != nil)
        guard let p = plan(abilities) else { return true }
        let shown = counts.shown
        deliver(p, bus: bus, markup: server.capabilities.contains("body-markup"))
        return counts.shown > shown
    }

    private func deliver(_ plan: PlannedNotification, bus: Bus, markup: Bool) {
        do {
            let reply = try bus.call(Notifier.service, Notifier.path, Notifier.service, "Notify") { m in
                try m.append("blockd")
                try m.append(self.slots.replacesID(for: plan.slotKey))  // S2
                try m.append("")
                try m.append(plan.summary)
                try m.append(markup ? Notifier.escapeMarkup(plan.body) : plan.body)
                try m.container("a", "s") {
                    if let action = plan.action {
                        try m.append(NotificationSlots.openKey)
                        try m.append(action.label)
                    }
                    for button in plan.buttons {  // M4
                        try m.append(button.key)
                        try m.append(button.label)
                    }
                }
                try m.container("a", "{sv}") {
                    try m.container("e", "sv") {
                        try m.append("urgency")
                        try m.container("v", "y") { try m.append(byte: plan.urgency) }
                    }
                }
                try m.append(Int32(-1))  // the server's default timeout
            }
            let id = try reply.readUInt32()
            slots.record(id: id, selection: plan.slotKey, url: plan.action?.url,
                         requests: Dictionary(plan.buttons.map { ($0.key, $0.request) }) { first, _ in first })
            counts.shown += 1
            logged.remove("notify-failed")
        } catch {
            counts.skipped += 1
            lost(error, doing: "sending a notification")
        }
    }

    /// The selection's texts and OpenURL=, asked once per selection per subscription.
    private func selectionInfo(_ name: String) -> SelectionInfo? {
        if let cached = selections[name] { return cached }
        let info = lookup(name)
        if let info { selections[name] = info }
        return info
    }

    private func openBus() -> Bus? {
        if let bus { return bus }
        do {
            bus = try Bus()
            if logged.remove("no-bus") != nil { log("connected to the session bus") }
        } catch {
            once("no-bus", "no session bus (\(error)); is DBUS_SESSION_BUS_ADDRESS or XDG_RUNTIME_DIR set? Events are counted but not shown")
        }
        return bus
    }

    /// The notification server now. A new owner (a restarted or replaced server) gets fresh
    /// capabilities and matches, and our old ids are forgotten: they were the old server's.
    private func currentServer(_ bus: Bus) -> Server? {
        do {
            var owner = try bus.owner(of: Notifier.service)
            if owner == nil {
                // Not running but perhaps activatable: any call to the name starts it.
                _ = try? bus.call(Notifier.service, Notifier.path, Notifier.service, "GetCapabilities")
                owner = try bus.owner(of: Notifier.service)
            }
            guard let owner else {
                server = nil
                once("no-server", "no notification server on the session bus (\(Notifier.service)); events are counted but not shown until one starts")
                return nil
            }
            if let server, server.owner == owner { return server }
            let capabilities = try bus.call(Notifier.service, Notifier.path, Notifier.service, "GetCapabilities").readStringArray()
            // S1: act on the server's own signals only, matched on its unique name, so no
            // other client on the bus can make us open anything.
            let me = Unmanaged.passUnretained(self).toOpaque()
            let matches = try ["ActionInvoked", "NotificationClosed"].map { member in
                try bus.matchSignal(sender: owner, path: Notifier.path, interface: Notifier.service, member: member,
                                    userdata: me, callback: { message, userdata, _ in
                                        guard let message, let userdata else { return 0 }
                                        Unmanaged<Notifier>.fromOpaque(userdata).takeUnretainedValue().signal(BusMessage(borrowing: message))
                                        return 0
                                    })
            }
            slots.forgetServer()
            server = Server(owner: owner, capabilities: Set(capabilities), slots: matches)
            if logged.remove("no-server") != nil { log("a notification server is available again (\(owner))") }
            if !capabilities.contains("actions") {
                once("no-actions", "the notification server does not support actions; notifications will have no \"open\" button, since a button that does nothing is worse than none")
            }
            return server
        } catch {
            lost(error, doing: "asking for the notification server")
            return nil
        }
    }

    /// A D-Bus error name is the peer's answer; anything else means the connection itself is
    /// gone, and the next event reconnects.
    private func lost(_ error: Error, doing what: String) {
        if let e = error as? BusError, e.isNoServer {
            server = nil
            once("no-server", "no notification server on the session bus (\(Notifier.service)); events are counted but not shown until one starts")
        } else if let e = error as? BusError, e.name != nil {
            once("notify-failed", "\(what) failed: \(e)")
        } else {
            server = nil  // its match slots go before the bus they belong to
            bus = nil
            once("notify-failed", "\(what) failed: \(error); reconnecting to the session bus at the next event")
        }
    }

    private func once(_ key: String, _ message: String) {
        if logged.insert(key).inserted { log(message) }
    }

    /// A signal from the server (already matched on its unique name).
    func signal(_ message: BusMessage) {
        guard let server, message.sender == server.owner, let member = sd_bus_message_get_member(message.raw) else { return }
        switch String(cString: member) {
        case "ActionInvoked":
            guard let id = try? message.readUInt32(), let key = try? message.readString() else { return }
            // Our ids only: the same server shows other programs' notifications too.
            if let request = slots.request(forAction: id, key: key) { return send(request) }  // M4
            guard let url = slots.url(forAction: id, key: key) else { return }
            switch opener.open(url) {
            case .success(let pid):
                children.add(pid)
                counts.opened += 1
            case .failure(let e):
                log("cannot open \(url): \(e)")
            }
        case "NotificationClosed":
            if let id = try? message.readUInt32() { slots.closed(id: id) }
        default:
            break
        }
    }

    /// Between waits: dispatch arrived signals and reap finished openers.
    func service() {
        if let bus {
            do { try bus.processPending() } catch { lost(error, doing: "reading the session bus") }
        }
        for (pid, status) in children.reap() {
            log("\(opener.name) (pid \(pid)) failed with wait status \(status)")
        }
    }

    var pollDescriptors: [pollfd] { bus.map { [$0.pollDescriptor] } ?? [] }

    /// The spec lets a server with `body-markup` parse the body as markup: `<`, `>` and `&`
    /// from a selection name or app name must then be shown, not interpreted.
    static func escapeMarkup(_ text: String) -> String {
        text.replacing("&", with: "&amp;").replacing("<", with: "&lt;").replacing(">", with: "&gt;")
    }
}
