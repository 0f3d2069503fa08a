import CSystemd
import Dispatch
import FoundationEssentials
import Glibc

/// sd_notify(3) messages (§7). Without NOTIFY_SOCKET these are no-ops.
public enum Systemd {
    /// Sends `state` to NOTIFY_SOCKET without ever blocking. sd_notify(3) sends on a blocking
    /// socket: a manager that stops reading fills the datagram queue (net.unix.max_dgram_qlen,
    /// 10 by default) and the next watchdog ping would stop the engine queue, and with it
    /// every timer and answer. A message that cannot be sent now is dropped; the next ping or
    /// status follows. Path and abstract (`@name`) sockets, as systemd passes them.
    public static func notify(_ state: String) {
        // getenv, not ProcessInfo's environment, which copies every variable at each call
        // (a status line follows every change).
        guard let raw = getenv("NOTIFY_SOCKET") else { return }
        let target = String(cString: raw)
        guard target.utf8.count > 1 else { return }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let name = Array(target.utf8)
        let bytes = name[0] == UInt8(ascii: "@") ? [0] + name.dropFirst() : name + [0]
        guard name[0] == UInt8(ascii: "@") || name[0] == UInt8(ascii: "/"),
              bytes.count <= MemoryLayout.size(ofValue: addr.sun_path) else { return }
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let payload = Array(state.utf8)
        _ = withUnsafePointer(to: &addr) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), sa, length) }
            }
        }
    }

    public static func ready(status: String) { notify("READY=1\nSTATUS=\(oneLine(status))") }
    public static func status(_ text: String) { notify("STATUS=\(oneLine(text))") }
    public static func stopping() { notify("STOPPING=1") }
    public static func reloading() { notify("RELOADING=1") }

    /// The watchdog interval from WATCHDOG_USEC, if systemd asked for pings.
    public static var watchdogInterval: TimeInterval? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return TimeInterval(usec) / 1e6
    }

    /// Pings WATCHDOG=1 from `queue` (the engine's), at half the interval: if the engine
    /// queue is stuck, the pings stop and systemd restarts blockd.
    public static func startWatchdog(on queue: DispatchQueue) -> DispatchSourceTimer? {
        guard let interval = watchdogInterval else { return nil }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: interval / 2, leeway: .milliseconds(Int(interval * 50)))
        timer.setEventHandler { notify("WATCHDOG=1") }
        timer.resume()
        return timer
    }

    static func oneLine(_ s: String) -> String { s.replacing("\n", with: " ") }
}
