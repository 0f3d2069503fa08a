import BlockClient
import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import ZoneInfo

/// `blockc watch --notify`: the user's agent. The daemon is root and outside the desktop
/// session, so it cannot show anything or open anything for the user (S1); this process,
/// running in the session, subscribes to its events and shows them as notifications.
///
/// Two threads: the subscriber reads the daemon's stream into a bounded queue (S3) and the
/// calling thread owns the session bus, sending notifications and acting on their buttons.
public enum NotifyAgent {
    public struct Options: Sendable {
        public var socketPath: String
        public var environment: [String: String]
        public var backoff = Backoff()
        public var queueCapacity = 256
        /// SIGTERM: how long to keep delivering what is queued before giving up on the rest.
        public var drainSeconds = 5.0
        /// R1: tell blockd which app has the focus (X11 sessions).
        public var foreground = true

        public init(socketPath: String, environment: [String: String]) {
            self.socketPath = socketPath
            self.environment = environment
        }
    }

    /// Runs until SIGTERM or SIGINT (exit 0, after draining) or until the daemon refuses us
    /// for good (exit 3: not in group blockd). Logs go to stderr, i.e. the journal under the
    /// user unit.
    public static func run(_ options: Options) -> Int32 {
        let log: @Sendable (String) -> Void = { line in
            let text = "blockc: \(line)\n"
            _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        }
        guard let lock = singleInstance(options.environment) else {
            log("another blockc watch --notify is already running in this session; exiting, so that each selection is notified once per session")
            return 0
        }
        defer { if lock >= 0 { close(lock) } }

        let queue = EventQueue(capacity: options.queueCapacity)
        // Handlers only close the queue; the loop below notices and drains (the loop's thread owns the queue).
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { queue.close() }
            source.resume()
            sources.append(source)
        }
        defer { sources.forEach { $0.cancel() } }

        let path = options.socketPath
        let exitStatus = Mutex<Int32>(0)
        let foreground = options.foreground ? foregroundWatcher(path: path, environment: options.environment, log: log) : nil  // R1
        let subscriber = Subscriber(path: path, queue: queue, backoff: options.backoff, log: log,
                                    onSubscribed: { foreground?.resend() }) { p throws(ClientError) in
            try ControlConnection(path: p)
        }
        // The subscriber blocks in poll() for the daemon's lines, for the agent's whole life:
        // a thread of its own, not one of Dispatch's pool.
        NotifyAgent.detach {
            if case .permission(let why)? = subscriber.run() {
                log(why)
                exitStatus.withLock { $0 = 3 }
                queue.close()
            }
        }

        let environment = options.environment
        let notifier = Notifier(
            planner: NotificationPlanner(language: Language.from(environment: environment), clock: LocalClock(SystemTimeZone.current(environment: environment))),
            opener: Opener(environment: environment),
            lookup: { name in selection(name, path: path) },
            log: log,
            now: { Date() },
            daemon: .at(path))  // M4
        log("watching blockd at \(path); notifications go to \(Notifier.service) on the session bus")
        let summary = WeeklySummaryTask(environment: environment, socketPath: path,  // R3
                                        clock: notifier.planner.clock, log: log)
        foreground?.start()
        loop(queue: queue, notifier: notifier, drainSeconds: options.drainSeconds) { summary.tick(now: Date(), notifier: notifier) }
        foreground?.stop()
        let c = notifier.counts
        log("stopped: \(c.shown) shown, \(c.skipped) not shown (no server), \(c.dropped) dropped (the server fell behind), \(c.opened) opened")
        return exitStatus.withLock { $0 }
    }

    /// Takes what the subscriber queued, notifies, dispatches bus signals, and sleeps in
    /// poll(2) on the queue's wake pipe and the bus until either has something.
    static func loop(queue: EventQueue, notifier: Notifier, drainSeconds: Double, tick: () -> Void = {}) {
        var drainDeadline: Date?
        while true {
            let (items, dropped, closed) = queue.take()
            notifier.dropped(dropped)
            if closed && drainDeadline == nil { drainDeadline = Date().addingTimeInterval(drainSeconds) }
            for (i, item) in items.enumerated() {
                if let deadline = drainDeadline, Date() > deadline {
                    // The server is too slow to drain in time: say what is lost rather than hang.
                    notifier.dropped(items.count - i)
                    break
                }
                notifier.handle(item)
            }
            notifier.service()
            if closed { return }
            tick()
            var fds = [pollfd(fd: queue.wakeDescriptor, events: Int16(POLLIN), revents: 0)] + notifier.pollDescriptors
            _ = poll(&fds, nfds_t(fds.count), 1000)
        }
    }

    /// `selection-show` on a short connection of its own: the watch connection only streams.
    static func selection(_ name: String, path: String) -> SelectionInfo? {
        guard let connection = try? ControlConnection(path: path, timeout: 2) else { return nil }
        defer { connection.close() }
        guard case .ok(let answer)? = try? connection.send(.selectionShow(name: name)) else { return nil }
        return SelectionInfo(answer: answer)
    }

    /// One agent per session: with both the user unit and the XDG autostart entry enabled,
    /// the second one to start leaves. A lock on a file in $XDG_RUNTIME_DIR (per user, per
    /// boot); without one there is nothing to share, so no lock.
    static func singleInstance(_ environment: [String: String]) -> Int32? {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return -1 }
        let fd = open(runtime + "/blockd-agent.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return -1 }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            return nil
        }
        return fd
    }

    /// Runs `body` on a new detached thread.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, Unmanaged.passRetained(Box(body)).toOpaque())
        precondition(rc == 0, "pthread_create failed: \(String(cString: strerror(rc)))")
        pthread_detach(thread)
    }
}
