import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// §8: the one thread that reads every connection. It waits in epoll for all of them and
/// handles a readable connection on its own thread, inside `connection.queue.sync`: the
/// connection's state is still touched only under its serial queue, but a request answered
/// from the snapshot (`status`, the lists) costs no hand-off to another thread, where a
/// dispatch read source woke a worker for every request (with 50 clients that wake-up was most
/// of the cost of an answer). Requests for the engine still go to the engine's queue, and the
/// engine writes each answer itself, under the connection's queue (Connection.swift).
///
/// A connection is in the poll set exactly while it reads (`add` when it starts or resumes,
/// `remove` when it pauses or closes, both on its queue), so a paused or closed one is never
/// woken, not even for a hang-up. Connections are known here by an id, never by their
/// descriptor, so an event that was already collected when its connection closed finds
/// nothing, even if the number was given to a new client meanwhile.
final class ReadPoller: @unchecked Sendable {
    private let epfd: Int32
    /// Written by `stop` to wake the thread.
    private let wake: Int32
    private let lock = Lock()
    private var polled: [UInt64: Connection] = [:]
    private var nextID: UInt64 = 1
    private var state = State.idle
    private let finished = DispatchSemaphore(value: 0)
    static let wakeID: UInt64 = 0

    enum State { case idle, running, stopped }

    init() {
        epfd = blockd_poller_create()
        wake = blockd_eventfd()
        precondition(epfd >= 0 && wake >= 0, "blockd cannot create the control socket's epoll descriptor: \(String(cString: strerror(errno)))")
        precondition(blockd_poller_add(epfd, wake, ReadPoller.wakeID) == 0, "blockd cannot poll its own eventfd: \(String(cString: strerror(errno)))")
    }

    deinit {
        if state == .idle {  // never started nor stopped: `stop` closes them otherwise
            Glibc.close(epfd)
            Glibc.close(wake)
        }
    }

    /// A new id for a connection (ids are never reused).
    func register() -> UInt64 {
        lock.withLock {
            defer { nextID += 1 }
            return nextID
        }
    }

    /// Starts the thread; once only.
    func start() {
        lock.withLock {
            guard state == .idle else { return }
            state = .running
            var thread = pthread_t()
            let rc = pthread_create(&thread, nil, { raw in
                Unmanaged<ReadPoller>.fromOpaque(raw!).takeRetainedValue().loop()
                return nil
            }, Unmanaged.passRetained(self).toOpaque())
            precondition(rc == 0, "blockd cannot start the control socket's reader thread: \(String(cString: strerror(rc)))")
            pthread_detach(thread)
        }
    }

    /// Wakes `connection` (on its queue) whenever its descriptor is readable, from now until
    /// `remove`. After `stop`, nothing.
    func add(_ connection: Connection) {
        lock.withLock {
            guard state != .stopped, polled[connection.pollID] == nil else { return }
            guard blockd_poller_add(epfd, connection.fd, connection.pollID) == 0 else {
                // Only ENOMEM or ENOSPC (the user's epoll watch limit) can get here: the
                // connection could never be read, so it is closed rather than left hanging.
                let code = errno
                connection.server.log.warning("cannot poll a control connection: \(String(cString: strerror(code))); closing it")
                connection.queue.async { connection.close() }
                return
            }
            polled[connection.pollID] = connection
        }
    }

    /// No more wake-ups for `connection`; on its queue, before its descriptor is closed.
    func remove(_ connection: Connection) {
        lock.withLock {
            guard polled.removeValue(forKey: connection.pollID) != nil, state != .stopped else { return }
            _ = blockd_poller_remove(epfd, connection.fd)
        }
    }

    /// Stops the thread and returns once it has left its loop (after the connection it may be
    /// handling); the descriptors are closed then. Not on a connection's queue.
    func stop() {
        let was: State = lock.withLock {
            defer { state = .stopped }
            return state
        }
        guard was != .stopped else { return }  // stopped already: the descriptors are closed
        if was == .running {
            var one: UInt64 = 1
            _ = Glibc.write(wake, &one, 8)
            finished.wait()
        }
        lock.withLock {
            polled = [:]
            Glibc.close(epfd)
            Glibc.close(wake)
        }
    }

    private func loop() {
        var ids = [UInt64](repeating: 0, count: 64)
        while true {
            let n = Int(blockd_poller_wait(epfd, &ids, Int32(ids.count), -1))
            if n < 0 { break }  // EBADF or EINVAL only: the descriptor is gone
            var stopping = false
            for id in ids[0..<n] {
                if id == ReadPoller.wakeID {
                    stopping = true
                    continue
                }
                guard let connection = lock.withLock({ polled[id] }) else { continue }
                connection.queue.sync { connection.readable() }
            }
            if stopping { break }  // `stop` sets the state, then writes the eventfd
        }
        finished.signal()
    }
}
