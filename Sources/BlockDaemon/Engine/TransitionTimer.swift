import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// The one timer (T9): a timerfd on CLOCK_BOOTTIME armed for the exact next transition, so
/// it counts time spent suspended (T6) and fires on resume if the deadline passed meanwhile.
/// A second timerfd on CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET never fires by itself; its
/// read fails with ECANCELED when someone sets the clock, which triggers a reconcile (T7).
/// Both sources run on the engine's queue, and so does `onWake`: the daemon hands the wake to the
/// engine there and then (`EngineInbox.postHere`), not through another trip through the queue.
public final class TransitionTimer: @unchecked Sendable {
    let bootFD: Int32
    let stepFD: Int32
    let clock: any SystemClock
    var sources: [DispatchSourceRead] = []
    public private(set) var armedFor: Date?

    public init(clock: any SystemClock, queue: DispatchQueue, onWake: @escaping @Sendable () -> Void) throws(DaemonError) {
        bootFD = blockd_timerfd_create(1)
        stepFD = blockd_timerfd_create(0)
        self.clock = clock
        guard bootFD >= 0, stepFD >= 0 else {
            throw .system("cannot create timers", errno)
        }
        armStepDetector()
        let boot = DispatchSource.makeReadSource(fileDescriptor: bootFD, queue: queue)
        boot.setEventHandler { [bootFD] in
            _ = blockd_timerfd_read(bootFD)
            onWake()
        }
        let step = DispatchSource.makeReadSource(fileDescriptor: stepFD, queue: queue)
        step.setEventHandler { [weak self, stepFD] in
            // ECANCELED: the realtime clock was set. Re-arm, then let the engine look.
            _ = blockd_timerfd_read(stepFD)
            self?.armStepDetector()
            onWake()
        }
        boot.resume()
        step.resume()
        sources = [boot, step]
    }

    /// Arms the timer for the wall instant `date` (nil: disarm), converted to the boot clock.
    public func arm(_ date: Date?) {
        armedFor = date
        guard let date else {
            _ = blockd_timerfd_arm(bootFD, 0, 0)
            return
        }
        let (wall, boot) = clock.observed()
        let delay = max(date.timeIntervalSince(wall), 0)
        // At least 1 ns: a zero deadline would disarm the timer.
        let deadline = max(Int64((boot + delay) * 1e9), 1)
        _ = blockd_timerfd_arm(bootFD, deadline, 0)
    }

    func armStepDetector() {
        // A deadline far away: the timer exists only to be cancelled by a clock change.
        let farFuture = blockd_clock_ns(0) + Int64(10 * 365 * 86_400) * 1_000_000_000
        _ = blockd_timerfd_arm(stepFD, farFuture, 1)
    }
}

/// T7: watches /etc/localtime (a symlink that tools replace by rename) through its directory.
public final class TimeZoneWatcher: @unchecked Sendable {
    let watch: FileWatch

    public init?(path: String = "/etc/localtime", queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        guard let watch = FileWatch(path: path, queue: queue, onChange: onChange) else { return nil }
        self.watch = watch
    }
}
