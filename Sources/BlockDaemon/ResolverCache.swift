import CSystemd
import Dispatch
import Foundation

/// E1: after the hosts file changes, resolver caches that may still hold answers for newly
/// blocked names are flushed where present: systemd-resolved (FlushCaches over the system
/// bus) and nscd. Runs in the background; enforcement never waits for it.
public enum ResolverCache {
    static let queue = DispatchQueue(label: "blockd.resolver-flush")

    @Sendable public static func flush() {
        queue.async {
            flushResolved()
            flushNscd()
        }
    }

    static func flushResolved() {
        var bus: OpaquePointer?
        guard sd_bus_open_system(&bus) >= 0, let bus else { return }
        defer { sd_bus_flush_close_unref(bus) }
        var message: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &message, "org.freedesktop.resolve1", "/org/freedesktop/resolve1",
                                             "org.freedesktop.resolve1.Manager", "FlushCaches") >= 0 else { return }
        defer { sd_bus_message_unref(message) }
        var error = sd_bus_error()
        var reply: OpaquePointer?
        _ = sd_bus_call(bus, message, 2_000_000, &error, &reply)  // resolved absent: nothing to flush
        sd_bus_error_free(&error)
        if let reply { sd_bus_message_unref(reply) }
    }

    static func flushNscd() {
        let nscd = "/usr/sbin/nscd"
        guard FileManager.default.isExecutableFile(atPath: nscd),
              FileManager.default.fileExists(atPath: "/var/run/nscd/socket") || FileManager.default.fileExists(atPath: "/run/nscd/socket")
        else { return }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: nscd)
        p.arguments = ["--invalidate=hosts"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        if (try? p.run()) != nil { p.waitUntilExit() }
    }
}
