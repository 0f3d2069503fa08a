import BlockBus
import BlockCore
import CSystemd
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Screen time's edge: every login session as logind describes it, read on the system bus and
/// read again whenever logind says something changed (a session new or removed, a session's
/// `Active`, `IdleHint` or `LockedHint`: its signals, nothing polled), handed to the engine as
/// values (`LoginSession`); what counts is decided in BlockCore (`ScreenTime`). The bus is
/// owned by one thread of its own (sd-bus objects are not thread-safe) that sleeps in poll(2).
/// Without a system bus or logind, screen time is not counted: said once, tried again with
/// backoff (logind may start after blockd), and nobody is taken to be at the screen meanwhile,
/// nor while the machine sleeps (logind's PrepareForSleep).
public final class LogindSessions: @unchecked Sendable {
    static let logind = "org.freedesktop.login1"
    static let managerPath = "/org/freedesktop/login1"
    static let sessionPrefix = "/org/freedesktop/login1/session"

    private let report: @Sendable ([LoginSession]?) -> Void
    private let say: @Sendable (String, Bool) -> Void
    private let stopped = Atomic(false)
    /// Signalled by `stop`: the wait before trying the bus again sleeps on it, not in steps.
    private let stopping = DispatchSemaphore(value: 0)
    /// How long to wait before trying the bus again, at first and at most.
    let retry: (first: Double, most: Double)

    /// `report` gets every change of the sessions; `say` a line for the journal (true: a
    /// warning). Starts following at once, on a thread of its own.
    public init(retry: (first: Double, most: Double) = (5, 300), report: @escaping @Sendable ([LoginSession]?) -> Void,
                say: @escaping @Sendable (String, Bool) -> Void) {
        (self.retry, self.report, self.say) = (retry, report, say)
        startThread(name: "blockd-logind") { [self] in follow() }
    }

    public func stop() {
        stopped.store(true, ordering: .relaxed)
        stopping.signal()
    }

    private func follow() {
        var wait = retry.first
        var failing: String?
        while !stopped.load(ordering: .relaxed) {
            do {
                let bus = try Bus(system: true)
                // Signals only mark that something changed; the sessions are read whole after.
                let noted: sd_bus_message_handler_t = { _, _, _ in 0 }
                let slots = try [
                    bus.addMatch("type='signal',sender='\(Self.logind)',path='\(Self.managerPath)',interface='org.freedesktop.login1.Manager'",
                                 userdata: nil, callback: noted),
                    bus.addMatch("type='signal',sender='\(Self.logind)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='\(Self.sessionPrefix)'",
                                 userdata: nil, callback: noted),
                    // logind stopping (or starting again) is a change too: read at once.
                    bus.addMatch("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.logind)'",
                                 userdata: nil, callback: noted),
                ]
                // Suspend: nobody is at the screen while the machine sleeps. blockd holds a
                // delay inhibitor, so that it reads logind's PrepareForSleep and says so before
                // the machine goes to sleep, and lets go of it then; it takes one again on resume.
                var inhibitor = Self.inhibitSleep(on: bus)
                defer { if inhibitor >= 0 { close(inhibitor) } }
                var last = try Self.sessions(on: bus)
                report(last)
                if failing != nil { say("Screen time is counted again: logind answers on the system bus", false) }
                (failing, wait) = (nil, retry.first)
                while !stopped.load(ordering: .relaxed) {
                    var fd = bus.pollDescriptor
                    // A signal read while a call waited sits in sd-bus's queue, where poll cannot
                    // see it; a minute's timeout reads the sessions again regardless.
                    if !bus.hasQueued { _ = poll(&fd, 1, 60_000) }
                    try bus.processPending()
                    let sleeping = Self.preparingForSleep(on: bus)
                    let now = sleeping ? [] : try Self.sessions(on: bus)
                    if now != last {
                        report(now)
                        last = now
                    }
                    if sleeping, inhibitor >= 0 {
                        close(inhibitor)  // counted up to now: the machine may sleep
                        inhibitor = -1
                    } else if !sleeping, inhibitor < 0 {
                        inhibitor = Self.inhibitSleep(on: bus)
                    }
                }
                withExtendedLifetime(slots) {}
            } catch {
                if failing == nil { report(nil) }  // who is at the screen is not known: said once, not at every try
                let why = "\(error)"
                if failing != why {
                    say("Screen time is not counted: \(why); blockd tries again in \(Int(wait)) s and then with backoff", true)
                    failing = why
                }
                // One sleep until the next try or `stop`: without logind blockd does not wake
                // meanwhile (it used to look at the flag five times a second, for good).
                if !stopped.load(ordering: .relaxed) { _ = stopping.wait(timeout: .now() + wait) }
                wait = min(wait * 2, retry.most)
            }
        }
    }

    /// The queue logind's actions are asked on, each on a connection of its own (the
    /// follower's bus belongs to its thread).
    static let actions = DispatchQueue(label: "blockd.logind.actions")

    /// A screen-time limit's action, asked of logind: lock or end each of `sessions`
    /// (LockSession, TerminateSession), or suspend or power off the machine. What fails is
    /// said (`failed`); the core acts again when the person comes back to the screen.
    public static func act(_ action: SessionAction, uid: UInt32, sessions: [String], failed: @escaping @Sendable (String) -> Void) {
        actions.async {
            do {
                let bus = try Bus(system: true)
                let manager = (logind, managerPath, "org.freedesktop.login1.Manager")
                switch action {
                case .lock, .logout:
                    for id in sessions {
                        _ = try bus.call(manager.0, manager.1, manager.2, action == .lock ? "LockSession" : "TerminateSession") { try $0.append(id) }
                    }
                case .suspend, .poweroff:
                    _ = try bus.call(manager.0, manager.1, manager.2, action == .suspend ? "Suspend" : "PowerOff") { try $0.append(bool: false) }
                }
            } catch {
                failed("Screen time: logind did not \(action.rawValue) for uid \(uid) (\(sessions.joined(separator: ", "))): \(error)")
            }
        }
    }

    /// A delay inhibitor for sleep (logind's `Inhibit`): the machine waits for blockd, up to
    /// logind's `InhibitDelayMaxSec=`, until it is closed. -1 when logind gives none.
    static func inhibitSleep(on bus: Bus) -> Int32 {
        let reply = try? bus.call(logind, managerPath, "org.freedesktop.login1.Manager", "Inhibit") { m in
            try m.append("sleep")
            try m.append("blockd")
            try m.append("Screen time stops counting before the machine sleeps")
            try m.append("delay")
        }
        return (try? reply?.readFileDescriptor()) ?? -1
    }

    /// Whether logind is about to suspend or hibernate the machine (`PreparingForSleep`,
    /// announced by its PrepareForSleep signal); false when it cannot say.
    static func preparingForSleep(on bus: Bus) -> Bool {
        let reply = try? bus.call(logind, managerPath, "org.freedesktop.DBus.Properties", "Get") { m in
            try m.append("org.freedesktop.login1.Manager")
            try m.append("PreparingForSleep")
        }
        return (try? reply?.readVariantBool()) ?? false
    }

    /// Every session logind knows, with the properties screen time reads.
    static func sessions(on bus: Bus) throws -> [LoginSession] {
        let reply = try bus.call(logind, managerPath, "org.freedesktop.login1.Manager", "ListSessions")
        var paths: [String] = []
        guard try reply.enter("a", "(susso)") else { return [] }
        while try reply.enter("r", "susso") {
            _ = try reply.readString()  // id
            _ = try reply.readUInt32()  // uid
            _ = try reply.readString()  // user name
            _ = try reply.readString()  // seat
            paths.append(try reply.readObjectPath())
            try reply.exit()
        }
        try reply.exit()
        var out: [LoginSession] = []
        for path in paths {
            do {
                out.append(try session(at: path, on: bus))
            } catch let error as BusError where error.name != nil {
                continue  // logind's answer for a session that ended between the list and the read
            }
        }
        return out.sorted { $0.id < $1.id }
    }

    static func session(at path: String, on bus: Bus) throws -> LoginSession {
        func get(_ name: String) throws -> BusMessage {
            try bus.call(logind, path, "org.freedesktop.DBus.Properties", "Get") { m in
                try m.append("org.freedesktop.login1.Session")
                try m.append(name)
            }
        }
        let id = try get("Id").readVariantString()
        let user = try get("User")
        guard try user.enter("v", "(uo)"), try user.enter("r", "uo") else { throw BusError(name: nil, message: "\(path) has no User") }
        let uid = try user.readUInt32()
        let idle = try get("IdleHint").readVariantBool()
        let since = idle ? try get("IdleSinceHint").readVariantUInt64() : 0
        // IdleSinceHint is CLOCK_REALTIME in microseconds; 0 when the desktop did not say.
        let idleSince: Date? = idle ? (since > 0 ? Date(timeIntervalSince1970: Double(since) / 1_000_000) : Date()) : nil
        return LoginSession(id: id, uid: uid, active: try get("Active").readVariantBool(), locked: try get("LockedHint").readVariantBool(),
                            idleSince: idleSince, remote: try get("Remote").readVariantBool(),
                            isUser: try get("Class").readVariantString().hasPrefix("user"),
                            graphical: ["x11", "wayland", "mir"].contains(try get("Type").readVariantString()))
    }
}
