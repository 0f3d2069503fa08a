import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// The two clocks the engine needs: wall time (schedules, T7; stored instants) and the boot
/// clock (elapsed time including suspend, T6). Injected so that tests never read real time.
public protocol SystemClock: Sendable {
    func wallNow() -> Date
    /// Seconds on CLOCK_BOOTTIME.
    func bootNow() -> TimeInterval
}

public struct RealClock: SystemClock {
    public init() {}
    public func wallNow() -> Date { Date(timeIntervalSince1970: Double(blockd_clock_ns(0)) / 1e9) }
    public func bootNow() -> TimeInterval { Double(blockd_clock_ns(1)) / 1e9 }
}
