import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// Accepts clients on the control socket and speaks the line protocol (§8). The table of
/// connections lives on `queue`, each connection's state under that connection's own queue,
/// and one thread reads them all (`poller`);
/// requests go to the engine's queue, which writes their answers under the connection's queue
/// (nothing there ever waits for a client: sockets are non-blocking), so a slow or hostile
/// client never stalls the engine, the timers or the other clients.
public final class ControlServer: @unchecked Sendable {
    public struct Limits: Sendable {
        public var maxConnections = 64
        /// One user (other than root) may hold at most this many connections, and the last
        /// `reservedForRoot` slots are root's: nobody else can lock root out (slow-loris).
        public var maxPerUser = 16
        public var reservedForRoot = 8
        public var idleTimeout: TimeInterval = 60
        /// Responses waiting to be read by a client that does not read; past this the
        /// connection stops reading new requests until the client catches up.
        public var maxPendingOutput = 1 << 20
        /// A connection's output buffer kept for its next answer once sent; a larger one is
        /// let go.
        public var keptOutput = 1 << 20
        /// After an answer this large (`schedule list` or `status --all` at 100,000
        /// activities: tens of MB, and hundreds while it was built) malloc's free memory is
        /// given back to the kernel: otherwise blockd's RSS would keep the peak of that answer
        /// for good (479 MiB at 100,000 activities after one `schedule list`). Not after every
        /// answer over `keptOutput`: `status` at 5,000 active is a few MB, and the page faults
        /// of taking the memory back made the next `start` 2.5 ms slower.
        public var trimAfterOutput = 8 << 20
        /// S3: events queued for one watcher; past this new events are dropped and counted.
        public var maxQueuedEvents = 1024
        public init() {}
    }

    let hub: EventHub
    var queue: DispatchQueue { hub.queue }
    var counters: EventHub.Counters { hub.counters }
    let engine: Engine
    let log: any LogSink
    let limits: Limits
    let listenFD: Int32
    var acceptSource: DispatchSourceRead?
    /// Reads every connection from one thread (ReadPoller.swift).
    let poller = ReadPoller()
    var connections: [ObjectIdentifier: Connection] = [:]
    var perUser: [UInt32: Int] = [:]
    /// Who is on the other end of an accepted descriptor: SO_PEERCRED (`peer(of:)`) unless a
    /// test gives its connections other users' credentials. Set before `start()`.
    var credentials: ((Int32) -> Peer)?

    /// `hub` is the one the engine publishes its events into.
    public init(listenFD: Int32, engine: Engine, hub: EventHub, log: any LogSink, limits: Limits = Limits()) {
        self.listenFD = listenFD
        self.engine = engine
        self.hub = hub
        self.log = log
        self.limits = limits
    }

    public func start() {
        poller.start()
        let source = DispatchSource.makeReadSource(fileDescriptor: listenFD, queue: queue)
        source.setEventHandler { [weak self] in self?.acceptAll() }
        source.resume()
        acceptSource = source
    }

    /// Stops accepting and closes every connection; an answer still with the engine is dropped
    /// when it comes back. Returns once the listening source is gone, so the caller may then
    /// close `listenFD` (which stays the caller's). Connections hold their server, so this is
    /// also what lets a server go (a test's fixture calls it; the daemon exits instead).
    public func stop() {
        dispatchPrecondition(condition: .notOnQueue(queue))
        let cancelled = DispatchSemaphore(value: 0)
        let open = queue.sync {
            if let source = acceptSource {
                acceptSource = nil
                source.setCancelHandler { cancelled.signal() }
                source.cancel()
            } else {
                cancelled.signal()
            }
            return Array(connections.values)
        }
        for connection in open { connection.queue.sync { connection.close() } }
        queue.sync {}  // each closed connection has left `connections`
        cancelled.wait()
        poller.stop()
    }

    func acceptAll() {
        while true {
            let fd = blockd_accept(listenFD)
            if fd < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK {
                    log.warning("accept on the control socket failed: \(String(cString: strerror(errno)))")
                }
                return
            }
            let who = credentials?(fd) ?? peer(of: fd)
            if let refusal = admission(for: who) {
                // Counted before the client can see the refusal: its `stats` then says so.
                counters.update { _, _, _, refused in refused += 1 }
                let line = Response.error(CoreError(.busy, refusal)).line + "\n"
                _ = line.withCString { send(fd, $0, strlen($0), Int32(BLOCKD_MSG_NOSIGNAL)) }
                close(fd)
                continue
            }
            let connection = Connection(fd: fd, peer: who, server: self)
            connections[ObjectIdentifier(connection)] = connection
            perUser[who.uid, default: 0] += 1
            counters.update { c, _, _, _ in c = connections.count }
            connection.queue.async { connection.start() }
        }
    }

    /// Why a new connection from `peer` is refused, or nil to accept it.
    func admission(for peer: Peer) -> String? {
        if connections.count >= limits.maxConnections {
            return "too many connections (\(limits.maxConnections)); try again later"
        }
        guard !peer.isRoot else { return nil }
        if connections.count >= limits.maxConnections - limits.reservedForRoot {
            return "too many connections; the remaining ones are kept for root; try again later"
        }
        if perUser[peer.uid, default: 0] >= limits.maxPerUser {
            return "too many connections from uid \(peer.uid) (\(limits.maxPerUser)); close some and try again"
        }
        return nil
    }

    /// §5: SO_PEERCRED says who; the users table decides the rank (`UsersTable.peer`, the one
    /// place): root, the daemon's own user (an unprivileged sandbox) and members of group
    /// blockd may modify, root, the daemon's user and members of blockd-admin administer;
    /// everyone who can connect may read. A uid the table lacks is looked up here (getpwuid_r).
    func peer(of fd: Int32) -> Peer {
        var uid: UInt32 = UInt32.max, gid: UInt32 = UInt32.max, pid: Int32 = 0
        guard blockd_peer_credentials(fd, &uid, &gid, &pid) == 0 else { return Peer(uid: UInt32.max, mayModify: false) }
        let table = engine.usersNow.read { $0 }
        return table.lookingUp(names: [], uids: [uid]).peer(uid, processGID: gid)
    }

    /// `status` from the engine's published snapshot as the bytes of its line, on the
    /// connection's queue (StatusSnapshot+Line.swift); nil when it goes the way every other
    /// read goes (`Engine.answerFromSnapshot`, or the engine), under the same conditions.
    func statusLine(_ request: Request, peer: Peer) -> [UInt8]? {
        guard case .status(all: false, view: .caller) = request, let snapshot = engine.published.read({ $0 }) else { return nil }
        let (now, boot) = engine.clock.observed()
        guard snapshot.answers(at: now, boot: boot) else { return nil }
        return snapshot.statusLine(now: now, private: Core.privateView(peer))
    }

    func closed(_ connection: Connection) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        perUser[connection.peer.uid, default: 1] -= 1
        if perUser[connection.peer.uid] == 0 { perUser[connection.peer.uid] = nil }
        hub.remove(connection)
        counters.update { c, _, _, _ in c = connections.count }
    }
}
