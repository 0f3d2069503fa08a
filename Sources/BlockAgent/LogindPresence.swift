import BlockBus
import CSystemd
import Glibc

/// B5: whether the person is at their session, as logind says: its `IdleHint` (set by the
/// desktop after its idle delay) and `LockedHint` (set by the screen locker). The session is
/// the browser's own (`XDG_SESSION_ID`, else the one logind finds for this process); the
/// host follows its `PropertiesChanged` signal, so nothing is polled. Without logind or
/// without a session (a browser started outside any login), logind says nothing and only
/// the browser's own idle state counts.
final class LogindPresence {
    static let logind = "org.freedesktop.login1"
    let bus: Bus
    let path: String
    private var slot: BusSlot?
    private(set) var away = false

    /// nil, with the reason, when there is no logind session to follow.
    static func open(environment: [String: String]) -> (LogindPresence?, String?) {
        do {
            let bus = try Bus(system: true)
            let reply: BusMessage
            if let id = environment["XDG_SESSION_ID"], !id.isEmpty {
                reply = try bus.call(logind, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "GetSession") { try $0.append(id) }
            } else {
                reply = try bus.call(logind, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "GetSessionByPID") {
                    try $0.append(UInt32(getpid()))
                }
            }
            let presence = try LogindPresence(bus: bus, path: try reply.readObjectPath())
            return (presence, nil)
        } catch {
            return (nil, "\(error)")
        }
    }

    private init(bus: Bus, path: String) throws {
        (self.bus, self.path) = (bus, path)
        let changed: sd_bus_message_handler_t = { _, _, _ in 0 }  // read again after processing
        slot = try bus.matchSignal(sender: Self.logind, path: path, interface: "org.freedesktop.DBus.Properties",
                                   member: "PropertiesChanged", userdata: Unmanaged.passUnretained(self).toOpaque(), callback: changed)
        away = try read()
    }

    private func hint(_ name: String) throws -> Bool {
        try bus.call(Self.logind, path, "org.freedesktop.DBus.Properties", "Get") { m in
            try m.append("org.freedesktop.login1.Session")
            try m.append(name)
        }.readVariantBool()
    }

    private func read() throws -> Bool { try hint("IdleHint") || hint("LockedHint") }

    /// After the bus's descriptor was readable: dispatches what arrived and reads the hints
    /// again. Whether `away` changed; a bus that failed leaves `away` as it was (thrown).
    func update() throws -> Bool {
        var now = away
        // A signal that came while a hint was being read waits in sd-bus's queue, where poll
        // cannot see it: read again until nothing is left to dispatch.
        var rounds = 0
        repeat {
            try bus.processPending()
            now = try read()
            rounds += 1
        } while bus.hasQueued && rounds < 4
        defer { away = now }
        return now != away
    }
}
