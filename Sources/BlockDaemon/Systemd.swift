import CSystemd
import Dispatch
import Foundation

/// sd_notify(3) messages (DESIGN §7). Without NOTIFY_SOCKET these are no-ops.
public enum Systemd {
    public static func notify(_ state: String) {
        _ = sd_notify(0, state)
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

    static func oneLine(_ s: String) -> String { s.replacingOccurrences(of: "\n", with: " ") }
}
