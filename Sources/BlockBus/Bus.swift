import CSystemd
import Glibc

/// One sd-bus message: a call being built, a reply, or a signal handed to a match callback.
/// Built with the non-variadic API (`append_basic`, `open_container`), since Swift cannot
/// call `sd_bus_message_append`.
public final class BusMessage {
    public let raw: OpaquePointer
    private let owned: Bool

    public init(owning raw: OpaquePointer) {
        self.raw = raw
        owned = true
    }

    /// A message sd-bus lends to a callback; not unref'd here.
    public init(borrowing raw: OpaquePointer) {
        self.raw = raw
        owned = false
    }

    deinit { if owned { sd_bus_message_unref(raw) } }

    private func check(_ rc: Int32, _ what: String) throws {
        if rc < 0 { throw BusError(rc, what) }
    }

    public func append(_ s: String) throws {
        try check(s.withCString { sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "s")), $0) }, "appending a string")
    }

    public func append(_ u: UInt32) throws {
        var v = u
        try check(sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "u")), &v), "appending a uint32")
    }

    public func append(_ i: Int32) throws {
        var v = i
        try check(sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "i")), &v), "appending an int32")
    }

    public func append(bool: Bool) throws {
        var v: Int32 = bool ? 1 : 0
        try check(sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "b")), &v), "appending a boolean")
    }

    public func append(byte: UInt8) throws {
        var v = byte
        try check(sd_bus_message_append_basic(raw, CChar(UInt8(ascii: "y")), &v), "appending a byte")
    }

    /// `type` is `a`, `e` (dict entry), `v` or `r`; `contents` the signature inside.
    public func container(_ type: Character, _ contents: String, _ body: () throws -> Void) throws {
        let rc = contents.withCString { sd_bus_message_open_container(raw, CChar(type.asciiValue!), $0) }
        try check(rc, "opening a container")
        try body()
        try check(sd_bus_message_close_container(raw), "closing a container")
    }

    public func readString() throws -> String {
        var p: UnsafePointer<CChar>?
        let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "s")), &p)
        guard rc > 0, let p else { throw rc < 0 ? BusError(rc, "reading a string") : BusError(name: nil, message: "a string was missing from the message") }
        return String(cString: p)
    }

    public func readUInt32() throws -> UInt32 {
        var v: UInt32 = 0
        let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "u")), &v)
        guard rc > 0 else { throw rc < 0 ? BusError(rc, "reading a uint32") : BusError(name: nil, message: "a uint32 was missing from the message") }
        return v
    }

    public func readStringArray() throws -> [String] {
        try check(sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "a")), "s"), "reading an array")
        var out: [String] = []
        while true {
            var p: UnsafePointer<CChar>?
            let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "s")), &p)
            try check(rc, "reading an array element")
            guard rc > 0, let p else { break }
            out.append(String(cString: p))
        }
        try check(sd_bus_message_exit_container(raw), "leaving an array")
        return out
    }

    public var sender: String? { sd_bus_message_get_sender(raw).map { String(cString: $0) } }
}

/// A connection to the user's session bus (`DBUS_SESSION_BUS_ADDRESS`, else
/// `$XDG_RUNTIME_DIR/bus`) or to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else
/// `/run/dbus/system_bus_socket`), owned by one thread: sd-bus objects are not thread-safe.
public final class Bus {
    public let raw: OpaquePointer

    /// `system`: the system bus (logind's) instead of the session's.
    public init(system: Bool = false) throws {
        var bus: OpaquePointer?
        let rc = system ? sd_bus_open_system(&bus) : sd_bus_open_user(&bus)
        guard rc >= 0, let bus else { throw BusError(rc < 0 ? rc : -EINVAL, "cannot connect to the \(system ? "system" : "session") bus") }
        raw = bus
    }

    deinit { sd_bus_flush_close_unref(raw) }

    /// A method call; `arguments` appends its arguments. Waits at most `timeout` seconds:
    /// only this thread waits, never the event reader (S3).
    public func call(_ destination: String, _ path: String, _ interface: String, _ member: String, timeout: Double = 5,
              arguments: (BusMessage) throws -> Void = { _ in }) throws -> BusMessage {
        var m: OpaquePointer?
        let rc = sd_bus_message_new_method_call(raw, &m, destination, path, interface, member)
        guard rc >= 0, let m else { throw BusError(rc < 0 ? rc : -ENOMEM, "building \(member)") }
        let message = BusMessage(owning: m)
        try arguments(message)
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let r = sd_bus_call(raw, m, UInt64(timeout * 1_000_000), &error, &reply)
        if r < 0 {
            if let name = error.name {
                throw BusError(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? "")
            }
            throw BusError(r, "\(member) on \(destination)")
        }
        guard let reply else { throw BusError(name: nil, message: "\(member) on \(destination) gave no reply") }
        return BusMessage(owning: reply)
    }

    /// The unique name (`:1.42`) owning a well-known name; nil when nobody owns it.
    public func owner(of name: String) throws -> String? {
        do {
            let reply = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner") { m in
                try m.append(name)
            }
            return try reply.readString()
        } catch let error as BusError where error.isNoServer {
            return nil
        }
    }

    /// Subscribes to a signal from one sender (`path` nil: from any of its objects). The
    /// callback gets `userdata` back; the match lasts as long as the returned slot.
    public func matchSignal(sender: String, path: String?, interface: String, member: String,
                     userdata: UnsafeMutableRawPointer, callback: sd_bus_message_handler_t) throws -> BusSlot {
        var slot: OpaquePointer?
        let rc = sd_bus_match_signal(raw, &slot, sender, path, interface, member, callback, userdata)
        guard rc >= 0, let slot else { throw BusError(rc < 0 ? rc : -EINVAL, "subscribing to \(member)") }
        return BusSlot(slot)
    }

    /// Subscribes to the messages a match rule selects (`type='signal',sender=…,path_namespace=…`).
    /// The callback gets `userdata` back; the match lasts as long as the returned slot.
    public func addMatch(_ rule: String, userdata: UnsafeMutableRawPointer?, callback: sd_bus_message_handler_t) throws -> BusSlot {
        var slot: OpaquePointer?
        let rc = sd_bus_add_match(raw, &slot, rule, callback, userdata)
        guard rc >= 0, let slot else { throw BusError(rc < 0 ? rc : -EINVAL, "subscribing to \(rule)") }
        return BusSlot(slot)
    }

    /// Dispatches whatever has arrived (signals to their callbacks) without waiting.
    public func processPending() throws {
        while true {
            let rc = sd_bus_process(raw, nil)
            if rc < 0 { throw BusError(rc, "reading from the bus") }
            if rc == 0 { return }
        }
    }

    /// Whether messages wait in sd-bus's own queue (read from the socket while a call waited
    /// for its reply), which poll(2) on the descriptor cannot see.
    public var hasQueued: Bool {
        var n: UInt64 = 0
        return sd_bus_get_n_queued_read(raw, &n) >= 0 && n > 0
    }

    /// What to poll(2) for: the bus's fd and events.
    public var pollDescriptor: pollfd {
        let events = sd_bus_get_events(raw)
        return pollfd(fd: sd_bus_get_fd(raw), events: Int16(max(events, 0)), revents: 0)
    }
}

/// A match or other sd-bus slot; dropping it removes the match.
public final class BusSlot {
    public let raw: OpaquePointer
    public init(_ raw: OpaquePointer) { self.raw = raw }
    deinit { sd_bus_slot_unref(raw) }
}

public extension BusMessage {
    func readObjectPath() throws -> String {
        var p: UnsafePointer<CChar>?
        let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "o")), &p)
        guard rc > 0, let p else { throw rc < 0 ? BusError(rc, "reading an object path") : BusError(name: nil, message: "an object path was missing from the message") }
        return String(cString: p)
    }

    /// A `v` holding a boolean (what `org.freedesktop.DBus.Properties.Get` answers for one).
    func readVariantBool() throws -> Bool {
        let rc = sd_bus_message_enter_container(raw, CChar(UInt8(ascii: "v")), "b")
        guard rc > 0 else { throw rc < 0 ? BusError(rc, "reading a variant") : BusError(name: nil, message: "a boolean was missing from the message") }
        var v: Int32 = 0
        let r = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "b")), &v)
        guard r > 0 else { throw r < 0 ? BusError(r, "reading a boolean") : BusError(name: nil, message: "a boolean was missing from the message") }
        _ = sd_bus_message_exit_container(raw)
        return v != 0
    }

    /// A `v` holding a string.
    func readVariantString() throws -> String {
        guard try enter("v", "s") else { throw BusError(name: nil, message: "a string was missing from the message") }
        defer { _ = sd_bus_message_exit_container(raw) }
        return try readString()
    }

    /// A `v` holding a uint64 (`t`, such as a timestamp in microseconds).
    func readVariantUInt64() throws -> UInt64 {
        guard try enter("v", "t") else { throw BusError(name: nil, message: "a uint64 was missing from the message") }
        defer { _ = sd_bus_message_exit_container(raw) }
        var v: UInt64 = 0
        let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "t")), &v)
        guard rc > 0 else { throw rc < 0 ? BusError(rc, "reading a uint64") : BusError(name: nil, message: "a uint64 was missing from the message") }
        return v
    }

    /// A file descriptor (`h`), as a copy of its own (close-on-exec) that outlives the message;
    /// the caller closes it.
    func readFileDescriptor() throws -> Int32 {
        var fd: Int32 = -1
        let rc = sd_bus_message_read_basic(raw, CChar(UInt8(ascii: "h")), &fd)
        guard rc > 0, fd >= 0 else { throw rc < 0 ? BusError(rc, "reading a file descriptor") : BusError(name: nil, message: "a file descriptor was missing from the message") }
        let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        guard copy >= 0 else { throw BusError(-errno, "copying a file descriptor") }
        return copy
    }

    /// Enters a container (`a`, `r`, `v`, `e`) of `contents`; false at the end of an array.
    func enter(_ type: Character, _ contents: String) throws -> Bool {
        let rc = contents.withCString { sd_bus_message_enter_container(raw, CChar(type.asciiValue!), $0) }
        if rc < 0 { throw BusError(rc, "reading a container") }
        return rc > 0
    }

    /// Leaves the container entered last.
    func exit() throws {
        let rc = sd_bus_message_exit_container(raw)
        if rc < 0 { throw BusError(rc, "leaving a container") }
    }
}
