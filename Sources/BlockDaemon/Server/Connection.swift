import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// One client (§8): reads LF-terminated lines of at most 4096 bytes, answers each in
/// order (one request at a time goes to the engine), and after `watch` streams events.
/// Everything here runs under the connection's own serial queue (hence `@unchecked Sendable`:
/// the queue, not the compiler, serialises access): reading on the server's one reader thread
/// inside `queue.sync` (ReadPoller.swift), engine answers and timers on the queue itself. Each
/// connection is answered in its own order; what the connections share (the server's table of
/// connections, the watchers) stays on the server's queue, which a connection only ever
/// reaches with `async`.
final class Connection: @unchecked Sendable {
    /// Where the connection is in its life; `move(to:)` is the one place it changes.
    enum State: Equatable {
        /// Requests are read and answered one at a time, in order.
        case reading
        /// The client closed its side: what it sent is answered, then the connection closes.
        case inputEnded
        /// A line was too long (§8): the lines before it are answered, then the error, then close.
        case refusing
        /// `watch`: events are streamed; input is ignored.
        case watching(inputEnded: Bool)
        /// The last answer (an error) is queued; once it is flushed our side shuts down.
        case closing
        /// Our side is shut down; what the client still sends is discarded until it closes.
        case draining
        case closed
    }

    let fd: Int32
    let peer: Peer
    /// Held strongly: a callback still running on the connection's queue (the tail of an answer,
    /// an engine reply coming back) may outlive whoever let go of the server. The cycle
    /// server → connection → server ends when the connection closes (`ControlServer.stop()`
    /// closes them all).
    let server: ControlServer
    /// How the server's reader knows this connection (ReadPoller.swift).
    let pollID: UInt64
    var writeSource: DispatchSourceWrite?
    var idleTimer: DispatchSourceTimer?
    var input: [UInt8] = []
    var pending: [String] = []  // complete lines not yet handled
    var output: [UInt8] = []
    var outputOffset = 0
    /// Requests with the engine. Consecutive engine-bound requests are pipelined (so that one
    /// fdatasync covers several, group commit); the engine answers them in order. Anything
    /// answered here (a parse error, `watch`, a snapshot answer) waits until none is in flight,
    /// so answers always come back in request order.
    var inFlight = 0
    static let maxInFlight = 64
    private(set) var state = State.reading
    /// Closing after a last answer (Connection+Closing.swift): input discarded, the linger.
    var drained = 0
    var lingerTimer: DispatchSourceTimer?
    var isClosed: Bool { state == .closed }
    var queuedEvents = 0
    var lastActivity = DispatchTime.now()
    /// B2: a native-messaging host reports web time here: the connection stays open while the
    /// browser runs (no idle time-out), and its reports end when it closes.
    var reportsWeb = false

    /// Serial, of its own. Not one targeting the global pool: that pool's thread monitor reads
    /// /proc/PID/task/TID/stat, and in a PID namespace whose /proc is the host's (a container,
    /// the test rigs) it finds nothing there and libdispatch kills the process. At most
    /// `maxConnections` clients, so at most that many threads, and only while they are busy.
    let queue = DispatchQueue(label: "blockd.connection")
    /// The dispatch sources registered on `fd` that are not cancelled yet. The descriptor is
    /// closed only once every one of them is (libdispatch's rule: closing it while a source
    /// still watches it can crash the process in the event loop, or watch a reused number).
    let fdSources = DispatchGroup()

    init(fd: Int32, peer: Peer, server: ControlServer) {
        self.fd = fd
        self.server = server
        pollID = server.poller.register()
        var peer = peer
        peer.connection = pollID  // B2: what a browser reports on this connection ends with it
        self.peer = peer
    }

    /// Should a connection ever be dropped without `close()`, it must still let go of its
    /// sources and descriptor. (While it reads, the server's reader holds it, so it is closed
    /// before it can be dropped.)
    deinit {
        writeSource?.cancel()
        idleTimer?.cancel()
        lingerTimer?.cancel()
        if state != .closed { closeWhenSourcesAreGone() }
    }

    /// A source on `fd`, counted in `fdSources` until its cancellation is done.
    func watching<S: DispatchSourceProtocol>(_ source: S) -> S {
        fdSources.enter()
        source.setCancelHandler { [fdSources] in fdSources.leave() }
        return source
    }

    /// Closes `fd` once no source watches it any more.
    func closeWhenSourcesAreGone() {
        let fd = self.fd
        fdSources.notify(queue: queue) { Glibc.close(fd) }
    }

    /// The connection's state machine: every transition it makes, and nothing else.
    func move(to next: State) {
        switch (state, next) {
        case (.reading, .inputEnded), (.reading, .refusing),
             (.reading, .watching), (.inputEnded, .watching), (.watching(inputEnded: false), .watching(inputEnded: true)),
             (.reading, .closing), (.inputEnded, .closing), (.refusing, .closing),
             (.closing, .draining),
             (_, .closed) where state != .closed:
            state = next
        default:
            preconditionFailure("a connection cannot go from \(state) to \(next)")
        }
    }

    /// On `queue`.
    func start() {
        guard !isClosed else { return }  // the server stopped before the connection started
        server.poller.add(self)
        armIdleTimer()
    }

    // MARK: Reading

    /// The server's reader found the descriptor readable (on `queue`). An event collected
    /// just before the connection paused or closed finds it so, and reads nothing.
    func readable() {
        guard !readPaused, !isClosed else { return }
        readAvailable()
    }

    func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        if state == .draining { return discardInput(&buffer) }
        while !isClosed {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                if case .watching = state { continue }  // a watch connection only streams; its input is ignored
                input.append(contentsOf: buffer[0..<n])
                splitLines()
                // Back-pressure: a client that pipelines faster than it is answered, does not
                // read its answers, or sent a line that ends the connection stops being read.
                if state != .reading || pending.count >= Connection.maxPendingLines
                    || output.count - outputOffset > server.limits.maxPendingOutput {
                    pauseReading()
                    break
                }
                continue
            }
            if n == 0 { return inputEnded() }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { break }
            close()
            return
        }
        handleNext()
    }

    static let maxPendingLines = 64
    var readPaused = false

    /// Out of the reader's poll set until `resumeReadingIfPossible` (or `finish`) puts it back.
    func pauseReading() {
        guard !readPaused, !isClosed else { return }
        readPaused = true
        server.poller.remove(self)
    }

    func resumeReadingIfPossible() {
        guard readPaused, state == .reading || state == .watching(inputEnded: false), pending.count < Connection.maxPendingLines / 4,
              output.count - outputOffset <= server.limits.maxPendingOutput else { return }
        readPaused = false
        server.poller.add(self)
    }

    func splitLines() {
        guard state != .refusing else {
            input = []
            return
        }
        while let lf = input.firstIndex(of: 10) {
            let lineBytes = input[..<lf]
            input.removeSubrange(...lf)
            guard lineBytes.count <= Request.maxLineBytes + 1 else { refuseLongLine(); return }
            pending.append(String(decoding: lineBytes, as: UTF8.self))
            // The idle clock runs from the last complete request, so a client that drips bytes
            // without ever finishing a line is still timed out (slow-loris).
            lastActivity = .now()
        }
        if input.count > Request.maxLineBytes + 1 { refuseLongLine() }
    }

    /// §8: a too-long line is answered with an error (after the lines before it) and
    /// the connection closed.
    func refuseLongLine() {
        input = []
        move(to: .refusing)
    }

    // MARK: Requests, answered in order

    func handleNext() {
        guard inFlight < Connection.maxInFlight, [.reading, .inputEnded, .refusing].contains(state) else { return }
        guard let line = pending.first else {
            if state == .refusing && inFlight == 0 {
                write(Response.error(CoreError(.lineTooLong, "a request is at most \(Request.maxLineBytes) bytes; closing the connection")).line)
                move(to: .closing)
                flush()
            }
            return
        }
        let request: Request
        do { request = try Request.parse(line) } catch {
            guard inFlight == 0 else { return }
            pending.removeFirst()
            defer { resumeReadingIfPossible() }
            write(Response.error(error).line)
            handleNext()
            return
        }
        if case .watch = request {
            guard inFlight == 0 else { return }
            pending.removeFirst()
            move(to: .watching(inputEnded: state == .inputEnded))
            pending = []
            cancelIdleTimer()
            // Added before the OK is written, so that every event published after the client
            // reads its OK reaches it; events come through this queue, so none precedes the OK.
            let hub = server.hub
            hub.queue.async { hub.add(self) }
            write(Response.ok(WatchingReply().json).line)
            return
        }
        // The read-only requests are answered here, from what the engine last published,
        // without waiting for the engine; the rest (and a stale snapshot) go to the engine.
        // `status` comes as the bytes of its line, rendered once per snapshot.
        if inFlight == 0, let line = server.statusLine(request, peer: peer)
            ?? server.engine.answerFromSnapshot(request, peer: peer).map({ Array($0.line.utf8) }) {
            pending.removeFirst()
            defer { resumeReadingIfPossible() }
            write(bytes: line)
            handleNext()
            return
        }
        pending.removeFirst()
        defer { resumeReadingIfPossible() }
        if case .web = request, !reportsWeb {
            reportsWeb = true
            cancelIdleTimer()
        }
        inFlight += 1
        let engine = server.engine
        let peer = self.peer
        engine.queue.async { [weak self] in
            // The answer comes once the change is on disk (group commit, §7). It is written
            // from the engine's thread, under the connection's queue: nothing under that queue
            // waits for the engine or its client, so this takes microseconds, and it spares a
            // thread's wake-up per answer.
            engine.handle(request, from: peer) { [weak self] response in
                let line = response.line
                self?.queue.sync { [weak self] in
                    guard let self, !self.isClosed else { return }
                    self.inFlight -= 1
                    self.write(line)
                    self.handleNext()
                    self.closeIfAnswered()
                }
            }
        }
        handleNext()
    }

    // MARK: Writing

    func write(_ line: String) {
        output.append(contentsOf: line.utf8)
        output.append(10)
        flush()
    }

    func write(bytes line: [UInt8]) {
        output += line
        output.append(10)
        flush()
    }

    /// S3: false when this watcher's queue is full and the event was dropped. The watcher is
    /// told: a `dropped` event with the count takes the place of what it missed, as soon as
    /// there is room, so that the stream has no silent gap.
    func enqueueEvent(_ line: String, time: String?) -> Bool {
        guard !isClosed else { return true }
        guard queuedEvents < server.limits.maxQueuedEvents else {
            droppedEvents += 1
            droppedTime = time
            return false
        }
        reportDrops()
        queuedEvents += 1
        write(line)
        return true
    }

    /// Events dropped since the watcher last had room, and the time of the newest of them.
    var droppedEvents = 0
    var droppedTime: String?

    func reportDrops() {
        guard droppedEvents > 0, !isClosed else { return }
        let marker = Response.event(WatchEvent.dropped(count: droppedEvents, time: droppedTime).json).line
        droppedEvents = 0
        queuedEvents += 1
        write(marker)
    }

    func flush() {
        while outputOffset < output.count && !isClosed {
            let n = output.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + outputOffset, output.count - outputOffset, Int32(BLOCKD_MSG_NOSIGNAL))
            }
            if n > 0 {
                outputOffset += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                waitWritable()
                return
            }
            close()
            return
        }
        if output.capacity > server.limits.keptOutput {
            // A large answer's buffer goes, and after a very large one what malloc kept of its
            // making goes too.
            let trim = output.capacity >= server.limits.trimAfterOutput
            output = []
            if trim { blockd_malloc_trim() }
        } else {
            output.removeAll(keepingCapacity: true)
        }
        outputOffset = 0
        queuedEvents = 0
        if let w = writeSource {
            writeSource = nil
            w.cancel()
        }
        // The watcher has caught up: it learns what it missed before any newer event.
        if droppedEvents > 0 { return reportDrops() }
        resumeReadingIfPossible()
        if state == .closing { finish() }
        closeIfAnswered()
    }
}
