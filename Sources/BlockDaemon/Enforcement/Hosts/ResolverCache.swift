import CSystemd
import Dispatch
import FoundationEssentials
import Glibc

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
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
        var pid = pid_t()
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(nscd), strdup("--invalidate=hosts"), nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nil]
        defer { envp.forEach { free($0) } }
        guard posix_spawn(&pid, nscd, &actions, nil, argv, envp) == 0 else { return }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    }
}
