import BlockClient
import BlockCore
import Dispatch
import FoundationEssentials
import Glibc
import ZoneInfo

/// `blockd-nm-host`: the native-messaging host of blockd's browser extension (B1). The browser
/// starts it and speaks to it in frames on stdin and stdout (NativeHostFraming.swift); it
/// speaks to blockd as the browser's user, on one long-lived connection for `web` (the site
/// in the focused tab, and blockd's answer: what is blocked for this user) and one for
/// `watch`. It decides nothing: NativeHostSession.swift turns each input into actions, and
/// this loop carries them out.
///
/// Two threads: the subscriber reads blockd's events into a queue (as the notification agent's
/// does), and the calling thread owns stdin, stdout, the `web` connection and the session,
/// sleeping in poll(2) on stdin, the queue and logind's bus; its only timer is the retry every
/// 5 seconds while blockd is away.
public enum NativeHost {
    public struct Options: Sendable {
        public var socketPath: String
        public var environment: [String: String]
        /// What the browser gave it: Chromium the caller's origin (`chrome-extension://ID/`),
        /// Firefox the manifest's path and the extension's ID. Logged, not trusted.
        public var callerArguments: [String]
        /// The browser's user: blockd knows it from the socket (SO_PEERCRED); the host needs it
        /// only to tell this user's events from an administrator's view of everyone's.
        public var uid = Int(getuid())

        public init(socketPath: String, environment: [String: String], callerArguments: [String]) {
            (self.socketPath, self.environment, self.callerArguments) = (socketPath, environment, callerArguments)
        }
    }

    /// Runs until the browser closes stdin (exit 0) or sends what the host refuses (exit 1).
    public static func run(_ options: Options) -> Int32 {
        let log: @Sendable (String) -> Void = { line in
            let text = "blockd-nm-host: \(Output.clean(line))\n"
            _ = text.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        }
        // stdout is the browser's channel: frames go to a descriptor of their own, and fd 1
        // becomes stderr, so that nothing else can ever reach the browser through it.
        let channel = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard channel >= 0 else {
            log("cannot take stdout for the browser: \(String(cString: strerror(errno)))")
            return 1
        }
        dup2(STDERR_FILENO, STDOUT_FILENO)
        defer { close(channel) }

        let caller = options.callerArguments.first.map { " for \($0)" } ?? ""
        log("started\(caller); blockd at \(options.socketPath)")
        let queue = EventQueue(capacity: 64)
        defer { queue.close() }
        let subscriber = Subscriber(path: options.socketPath, queue: queue, backoff: Backoff(first: 0.5, cap: NativeHostSession.retrySeconds),
                                    log: log) { p throws(ClientError) in
            // The receive timeout only wakes the reader of a quiet stream (it reads on); long, so
            // that an idle host wakes for its minute's refresh and little else.
            try ControlConnection(path: p, timeout: 600)
        }
        NotifyAgent.detach { _ = subscriber.run() }

        let environment = options.environment
        let planner = NotificationPlanner(language: Language.from(environment: environment),
                                          clock: LocalClock(SystemTimeZone.current(environment: environment)))
        var loop = Loop(session: NativeHostSession(words: NativeHostWords(planner: planner, uid: options.uid)),
                        path: options.socketPath, channel: channel, log: log)
        let (presence, why) = LogindPresence.open(environment: environment)
        if let presence {
            loop.presence = presence
            loop.perform(loop.session.presence(away: presence.away, now: Date()))
        } else {
            log("not following logind's idle and lock hints (\(why ?? "no session")); the browser's idle state alone counts")
        }
        defer { loop.daemon.close() }
        return loop.run(queue: queue)
    }

    /// The connection that carries `web`: opened when first needed, opened again once at once
    /// when blockd closed it (a restart), and otherwise left to the session's retry deadline.
    final class WebConnection {
        let path: String
        private var connection: ControlConnection?

        init(path: String) { self.path = path }

        func send(site: String?) -> DaemonOutcome {
            for attempt in 0..<2 {
                do throws(ClientError) {
                    if connection == nil { connection = try ControlConnection(path: path, timeout: 5) }
                    switch try connection!.send(line: WebRequest.line(site: site), command: WebRequest.command) {
                    case .ok(let o): return .ok(o)
                    case .error(let e): return .refused(e)
                    case .event: throw ClientError.protocolError("blockd sent an event instead of answering 'web'")
                    }
                } catch {
                    close()
                    if attempt == 0, case .protocolError = error { continue }
                    return .unreachable(error.description)
                }
            }
            return .unreachable("blockd at \(path) closed the connection twice")
        }

        func close() {
            connection?.close()
            connection = nil
        }
    }

    struct Loop {
        var session: NativeHostSession
        let path: String
        let channel: Int32
        let log: @Sendable (String) -> Void
        let daemon: WebConnection
        var reader = NativeFraming.Reader()
        /// B5: logind's idle and lock hints for the browser's session (nil: none to follow).
        var presence: LogindPresence?
        /// The browser stopped reading (its end of stdout is closed): time to go.
        var browserGone = false

        init(session: NativeHostSession, path: String, channel: Int32, log: @escaping @Sendable (String) -> Void) {
            (self.session, self.path, self.channel, self.log) = (session, path, channel, log)
            daemon = WebConnection(path: path)
        }

        mutating func run(queue: EventQueue) -> Int32 {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while !browserGone {
                let timeout = presence?.bus.hasQueued == true ? 0 : session.deadline.map { max(0, Int32(min(3_600_000, ($0.timeIntervalSinceNow * 1000).rounded(.up)))) } ?? -1
                var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: queue.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
                if let presence { fds.append(presence.bus.pollDescriptor) }
                if poll(&fds, nfds_t(fds.count), timeout) < 0 && errno != EINTR {
                    log("poll failed: \(String(cString: strerror(errno)))")
                    return 1
                }
                if fds[0].revents != 0 {
                    let n = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                    if n == 0 {
                        do throws(AgentError) {
                            try reader.finish()
                        } catch {
                            log(error.description)
                            return 1
                        }
                        log("the browser closed the connection; stopping")
                        return 0
                    }
                    if n < 0 {
                        if errno == EINTR || errno == EAGAIN { continue }
                        log("cannot read from the browser: \(String(cString: strerror(errno))); stopping")
                        return 1
                    }
                    reader.feed(chunk[..<n])
                    do throws(AgentError) {
                        while let frame = try reader.next() {
                            switch frame {
                            case .invalid(let why): log(why)
                            case .message(let o):
                                do throws(AgentError) {
                                    perform(session.received(try BrowserMessage(o), now: Date()))
                                } catch {
                                    log(error.description)
                                }
                            }
                        }
                    } catch {
                        log(error.description)
                        return 1
                    }
                }
                if fds.count > 2, fds[2].revents != 0 || presence?.bus.hasQueued == true, let presence {
                    do {
                        if try presence.update() { perform(session.presence(away: presence.away, now: Date())) }
                    } catch {
                        log("stopped following logind's idle and lock hints: \(error)")
                        self.presence = nil
                    }
                }
                for item in queue.take().items {
                    let info = session.textsWanted(for: item).flatMap { NotifyAgent.selection($0, path: path) }
                    perform(session.event(item, selection: info, now: Date()))
                }
                perform(session.tick(now: Date()))
            }
            log("the browser stopped reading; stopping")
            return 0
        }

        /// Carries out actions, feeding blockd's answers back to the session.
        mutating func perform(_ actions: [NativeHostSession.Action]) {
            for action in actions {
                switch action {
                case .log(let line): log(line)
                case .browser(let message): send(message)
                case .web(let site):
                    perform(session.answered(web: site, daemon.send(site: site), now: Date()))
                case .more(let arguments):
                    perform(session.answered(more: arguments.selection, more(arguments), now: Date()))
                }
            }
        }

        /// `more`, as blockc sends it, on a short connection: the `web` one only reports.
        func more(_ arguments: Request.MoreArguments) -> DaemonOutcome {
            do throws(ClientError) {
                let connection = try ControlConnection(path: path, timeout: 5)
                defer { connection.close() }
                switch try connection.send(.more(arguments)) {
                case .ok(let o): return .ok(o)
                case .error(let e): return .refused(e)
                case .event: return .unreachable("blockd sent an event instead of answering 'more'")
                }
            } catch {
                return .unreachable(error.description)
            }
        }

        /// One frame to the browser; one it would refuse is not sent (and said on stderr).
        mutating func send(_ message: JSONObject) {
            guard !browserGone else { return }
            guard let frame = NativeFraming.encode(message) else {
                log("a '\(message["type"]?.string ?? "")' message for the browser is over 1 MB; not sent")
                return
            }
            var offset = 0
            while offset < frame.count {
                let start = offset
                let n = frame.withUnsafeBytes { write(channel, $0.baseAddress! + start, $0.count - start) }
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    browserGone = true
                    return
                }
            }
        }
    }
}
