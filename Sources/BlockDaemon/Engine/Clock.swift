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

extension SystemClock {
    /// The wall clock and the boot clock read as one instant (T6): the boot clock before and
    /// after the wall clock, read again when the thread was held up between them (a loaded
    /// machine), so that a pause is never taken for a step of the wall clock, which shifts
    /// blocks, grants and the usage ledger.
    public func observed() -> (wall: Date, boot: TimeInterval) {
        var before = bootNow(), wall = wallNow(), after = bootNow()
        for _ in 0..<5 where after - before > 0.1 {
            (before, wall, after) = (bootNow(), wallNow(), bootNow())
        }
        return (wall, after - (after - before) / 2)
    }
}

public struct RealClock: SystemClock {
    public init() {}
    public func wallNow() -> Date { Date(timeIntervalSince1970: Double(blockd_clock_ns(0)) / 1e9) }
    public func bootNow() -> TimeInterval { Double(blockd_clock_ns(1)) / 1e9 }
}
