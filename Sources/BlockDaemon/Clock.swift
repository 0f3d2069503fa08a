import CLinux
import Foundation

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

/// A clock that moves only when told, for tests: `advance` moves both clocks (time passes),
/// `stepWall` moves only the wall clock (someone set the time).
public final class ManualClock: SystemClock, @unchecked Sendable {
    private let lock = NSLock()
    private var wall: Date
    private var boot: TimeInterval

    public init(wall: Date, boot: TimeInterval = 1000) {
        self.wall = wall
        self.boot = boot
    }

    public func wallNow() -> Date { lock.withLock { wall } }
    public func bootNow() -> TimeInterval { lock.withLock { boot } }

    public func advance(_ seconds: TimeInterval) {
        lock.withLock {
            wall += seconds
            boot += seconds
        }
    }

    public func stepWall(_ seconds: TimeInterval) { lock.withLock { wall += seconds } }
}
