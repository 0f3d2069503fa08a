import BlockClient
import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// How long to wait before reconnecting: doubling from `first` to `cap`, back to `first`
/// once a subscription succeeds. A daemon restart (systemd brings it back in about a second)
/// is caught quickly; a daemon that stays down costs one connect(2) per `cap`.
public struct Backoff: Sendable, Equatable {
    public var first: Double
    public var cap: Double
    private var next: Double

    public init(first: Double = 0.5, cap: Double = 30) {
        self.first = first
        self.cap = cap
        next = first
    }

    public mutating func delay() -> Double {
        defer { next = min(next * 2, cap) }
        return next
    }

    public mutating func reset() { next = first }
}

/// The event reader: subscribes with `watch`, queues each `EVENT`, and on any loss of the
/// daemon reconnects with backoff and subscribes again. It runs on its own thread and never
/// touches D-Bus, so a slow notification server cannot stall it (S3).
final class Subscriber: Sendable {
    typealias Connect = @Sendable (String) throws(ClientError) -> any Transport
    let path: String
    let queue: EventQueue
    let log: @Sendable (String) -> Void
    let connect: Connect
    let backoff: Backoff
    /// After each subscription, the first included: blockd may have restarted and forgotten
    /// what the agent told it (R1's foreground).
    let onSubscribed: @Sendable () -> Void

    init(path: String, queue: EventQueue, backoff: Backoff, log: @escaping @Sendable (String) -> Void,
         onSubscribed: @escaping @Sendable () -> Void = {}, connect: @escaping Connect) {
        self.path = path
        self.onSubscribed = onSubscribed
        self.queue = queue
        self.backoff = backoff
        self.log = log
        self.connect = connect
    }

    /// Reads until the queue is closed (SIGTERM) or the daemon refuses us for good. The one
    /// log line per outage: the first failure is logged, the retries are not, the recovery is.
    func run() -> AgentError? {
        var backoff = self.backoff
        var subscriptions = 0
        var outage = false
        while !queue.isClosed {
            do throws(ClientError) {
                let transport = try connect(path)
                defer { transport.close() }
                switch try transport.send(.watch) {
                case .ok: break
                case .error(let e): throw ClientError.protocolError("blockd refused 'watch': \(e.message) (\(e.code.rawValue))")
                case .event(let e): queue.push(.event(WatchEvent(e)))
                }
                subscriptions += 1
                backoff.reset()
                if subscriptions > 1 { queue.push(.resubscribed) }
                if outage { log("subscribed to blockd's events again at \(path)") }
                outage = false
                onSubscribed()
                while let line = try transport.readLine() {
                    guard case .event(let e)? = try? Response.parse(line) else { continue }
                    // S3: a full queue drops its oldest entry and counts it; nothing waits here.
                    queue.push(.event(WatchEvent(e)))
                }
                throw ClientError.protocolError("blockd closed the event stream (stopped or restarted?)")
            } catch {
                if case .unreachable = error, access(path, W_OK) != 0, errno == EACCES {
                    // Membership in group blockd changes only at the next login: retrying
                    // until then would only fill the journal.
                    return .permission(error.description)
                }
                if !outage { log("\(error.description); reconnecting with backoff (up to \(Int(backoff.cap))s)") }
                outage = true
            }
            let wait = backoff.delay()
            var slept = 0.0
            while slept < wait && !queue.isClosed {
                usleep(UInt32(min(0.1, wait - slept) * 1e6))
                slept += 0.1
            }
        }
        return nil
    }
}
