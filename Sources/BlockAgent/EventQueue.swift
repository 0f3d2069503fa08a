import BlockCore
import Glibc
import Synchronization

/// What the event reader hands the notifier.
public enum AgentInput: Sendable, Equatable {
    case event(WatchEvent)
    /// The reader subscribed again after losing the daemon: selection files may have changed.
    case resubscribed
}

/// S3 on the agent's side: the thread reading the daemon's stream never waits on D-Bus. It
/// puts events here and goes back to reading; the notifier takes them when it can. Bounded:
/// when full the oldest event is dropped (the newest says more about now, and S2 would
/// replace the older one anyway) and the drop is counted.
public final class EventQueue: Sendable {
    public let capacity: Int
    private struct State {
        var items: [AgentInput] = []
        var dropped = 0
        var closed = false
    }
    private let state = Mutex(State())
    /// A self-pipe, so that the notifier can poll(2) the bus and this queue together.
    private let wakeRead: Int32, wakeWrite: Int32

    public init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)  // not inherited by the opener
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        Glibc.close(wakeRead)
        Glibc.close(wakeWrite)
    }

    /// False when the queue was full and the oldest entry made room (S3: counted).
    @discardableResult
    public func push(_ item: AgentInput) -> Bool {
        let kept = state.withLock { s -> Bool in
            guard !s.closed else { return true }
            s.items.append(item)
            guard s.items.count > capacity else { return true }
            s.items.removeFirst()
            s.dropped += 1
            return false
        }
        wake()
        return kept
    }

    /// Everything queued, and whether the agent is stopping. Takes the drop count with it.
    public func take() -> (items: [AgentInput], dropped: Int, closed: Bool) {
        var byte: UInt8 = 0
        while read(wakeRead, &byte, 1) > 0 {}
        return state.withLock { s in
            defer {
                s.items = []
                s.dropped = 0
            }
            return (s.items, s.dropped, s.closed)
        }
    }

    /// SIGTERM: accept no more, let the notifier drain what is here.
    public func close() {
        state.withLock { $0.closed = true }
        wake()
    }

    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Readable when there is something to take.
    public var wakeDescriptor: Int32 { wakeRead }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // EAGAIN: the pipe is already full, so already awake
    }
}
