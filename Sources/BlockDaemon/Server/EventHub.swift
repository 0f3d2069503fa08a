import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// S3: the `watch` subscribers and the control server's counters. Created before the engine,
/// which publishes into it, and before the control server, which serves on its queue and adds
/// and removes its watching connections; so neither needs the other to exist first.
public final class EventHub: @unchecked Sendable {
    /// The control server's queue: the table of connections and the watchers live here; each
    /// connection's own state lives on the connection's queue.
    public let queue = DispatchQueue(label: "blockd.server")
    public let counters = Counters()
    /// The connections that asked for `watch`; owned by `queue`.
    var watchers: [ObjectIdentifier: Connection] = [:]

    public init() {}

    /// Counters shown by `blockc status` (S3: drops are reported, never silent).
    public final class Counters: @unchecked Sendable {
        private let lock = Lock()
        private var _connections = 0, _watchers = 0, _dropped = 0, _refusedConnections = 0
        func update(_ body: (inout Int, inout Int, inout Int, inout Int) -> Void) {
            lock.withLock { body(&_connections, &_watchers, &_dropped, &_refusedConnections) }
        }
        public var json: JSONObject {
            lock.withLock {
                ["connections": .int(Int64(_connections)), "watchers": .int(Int64(_watchers)),
                 "droppedEvents": .int(Int64(_dropped)), "refusedConnections": .int(Int64(_refusedConnections))]
            }
        }
    }

    /// S3: called from the engine queue; never waits. Each watcher gets the event queued on
    /// its own bounded buffer, on its own queue, in the order published; a full buffer drops,
    /// counts, and later tells that watcher.
    /// Per-user blocks: only the watchers whose peer may see the event get it (§5). The event
    /// comes typed and is encoded here, once, for every watcher.
    public func publish(_ event: WatchEvent) {
        let line = Response.event(event.json).line
        queue.async { [self] in
            for connection in watchers.values where event.isShown(to: connection.peer) {
                connection.queue.async { [counters] in
                    if !connection.enqueueEvent(line, time: event.time) { counters.update { _, _, dropped, _ in dropped += 1 } }
                }
            }
        }
    }

    func add(_ connection: Connection) {
        dispatchPrecondition(condition: .onQueue(queue))
        watchers[ObjectIdentifier(connection)] = connection
        counters.update { _, w, _, _ in w = watchers.count }
    }

    func remove(_ connection: Connection) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard watchers.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        counters.update { _, w, _, _ in w = watchers.count }
    }
}
