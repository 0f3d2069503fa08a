import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// A connection's way out: the end of the client's input, the last answer before closing, the
/// idle timeout, and closing.
extension Connection {
    // MARK: End of input

    /// The client closed its side (EOF), possibly right after its last requests, as `nc -N`
    /// or a shell pipe do: answer everything already received, then close. A partial last
    /// line is not a request (lines end with LF). A watcher keeps getting events.
    func inputEnded() {
        switch state {
        case .reading: move(to: .inputEnded)
        case .watching(inputEnded: false): move(to: .watching(inputEnded: true))
        default: break  // already on its way out: nothing more is read
        }
        input = []
        pauseReading()  // a socket at EOF stays readable: stop listening
        handleNext()
        closeIfAnswered()
    }

    func closeIfAnswered() {
        guard state == .inputEnded, pending.isEmpty, inFlight == 0, outputOffset >= output.count else { return }
        close()
    }

    // MARK: Closing after a last answer

    /// Closing a socket with unread input makes the kernel reset the connection, and the
    /// client would lose the last answer (the line-too-long or idle error). So: shut down our
    /// side, discard what the client still sends until it closes (at most 2 s or 1 MiB),
    /// then close.
    func finish() {
        guard state == .closing else { return }
        move(to: .draining)
        shutdown(fd, Int32(SHUT_WR))
        cancelIdleTimer()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 2)
        timer.setEventHandler { [weak self] in self?.close() }
        timer.resume()
        lingerTimer = timer
        if readPaused {
            readPaused = false
            server.poller.add(self)
        }
    }

    func discardInput(_ buffer: inout [UInt8]) {
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                drained += n
                if drained > 1 << 20 { return close() }
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            return close()
        }
    }

    func waitWritable() {
        guard writeSource == nil else { return }
        let source = watching(DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue))
        source.setEventHandler { [weak self] in self?.flush() }
        source.resume()
        writeSource = source
    }

    // MARK: Idle timeout (non-watch connections only)

    func armIdleTimer() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: lastActivity + server.limits.idleTimeout)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let deadline = self.lastActivity + self.server.limits.idleTimeout
            if DispatchTime.now() >= deadline && self.inFlight == 0 {
                guard [.reading, .inputEnded, .refusing].contains(self.state) else { return }
                self.write(Response.error(CoreError(.usage, "idle for \(Int(self.server.limits.idleTimeout)) s; closing the connection")).line)
                self.move(to: .closing)
                self.flush()
            } else {
                self.idleTimer?.schedule(deadline: deadline)
            }
        }
        timer.resume()
        idleTimer = timer
    }

    func cancelIdleTimer() {
        idleTimer?.cancel()
        idleTimer = nil
    }

    func close() {
        guard state != .closed else { return }
        move(to: .closed)
        cancelIdleTimer()
        lingerTimer?.cancel()
        lingerTimer = nil
        if let w = writeSource { writeSource = nil; w.cancel() }
        if reportsWeb {  // B2: what the browser said on this connection no longer holds
            let (engine, uid, reporter) = (server.engine, peer.uid, pollID)
            engine.queue.async { engine.webEnded(uid: uid, reporter: reporter) }
        }
        server.poller.remove(self)  // before the descriptor is closed, so its number can be reused
        closeWhenSourcesAreGone()  // after the write source's cancellation, not before
        let server = self.server
        server.queue.async { server.closed(self) }
    }
}
