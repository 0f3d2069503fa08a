import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The commands that are more than one request and one answer: `version` (which prints
/// something even without a daemon), `watch` and `status --watch`.
extension BlockcRunner {
    /// The client's version first, so that it is printed even when the daemon is down
    /// (then the exit status is still 3: the daemon's half of the answer is missing).
    /// `--version` (no `path`): the client's version, with no daemon needed (exit 0).
    /// `version`: the daemon's too, from hello; a daemon that cannot be reached is said, exit 3.
    func version(path: String?) -> Int32 {
        say("blockc \(BlockdVersion.version)")
        guard let path else { return BlockcRunner.ok }
        switch exchange(.hello, path: path) {
        case .answer(let o):
            let hello = HelloReply(o)
            let version = Output.clean(hello.version ?? "unknown")
            let proto = hello.protocolVersion.map { " (protocol \($0))" } ?? ""
            say("\(Output.clean(hello.daemon ?? "blockd")) \(version)\(proto)")
            return BlockcRunner.ok
        case .failed(let status):
            return status
        }
    }

    /// `watch [--json]`: one line per `EVENT` until the daemon closes the stream, stdout is
    /// closed, or SIGINT ends the process.
    func watch(path: String, json: Bool) -> Int32 {
        let transport: any Transport
        do {
            transport = try connect(path)
        } catch {
            return report(error)
        }
        defer { transport.close() }
        do {
            // The daemon answers `watch` like any request; an event may already follow.
            switch try transport.send(.watch) {
            case .ok:
                // On a terminal, a word that it follows: nothing else may come for hours.
                if isTerminal && !json { stderr("Following blockd's events as they happen (Ctrl-C stops).\n") }
            case .error(let e): return refused(e, json: json)
            case .event(let e): if !show(e, json: json) { return BlockcRunner.ok }
            }
            while let line = try transport.readLine() {
                let response: Response
                do {
                    response = try Response.parse(line)
                } catch {
                    stderr("blockc: skipped a line from blockd: \(Output.clean(error.message))\n")
                    continue
                }
                guard case .event(let e) = response else { continue }
                if !show(e, json: json) { return BlockcRunner.ok }
            }
        } catch {
            return report(error)
        }
        return report(.unreachable(path: path, reason: "blockd closed the event stream (stopped or restarted?); check 'systemctl status blockd'"))
    }

    /// `watch --notify`: hands off to the agent (BlockAgent, S1), which runs until SIGTERM.
    func watchNotify(path: String) -> Int32 {
        guard let notifyAgent else {
            return usageError(CoreError(.usage, "this blockc was built without the notification agent; use blockc watch"))
        }
        return notifyAgent(path)
    }

    /// Prints one event; false when stdout has gone away.
    private func show(_ event: JSONObject, json: Bool) -> Bool {
        // --json: one compact object per line, exactly as the daemon sent it, for scripts.
        say(json ? JSON.object(event).serialized() : output.event(WatchEvent(event)))
    }

    /// `status --watch`: the status again every second (the same request, with its `--all` and
    /// whose view), redrawn in place on a terminal and as a new block (or, with --json, a new
    /// line) otherwise. The daemon going away mid-watch
    /// is shown and retried; being unreachable at the start is exit 3 like any command.
    func statusWatch(_ request: Request, path: String, json: Bool) -> Int32 {
        var transport: (any Transport)?
        do {
            transport = try connect(path)
        } catch {
            return report(error)
        }
        defer { transport?.close() }
        var started = now()
        repeat {
            started = now()
            var frame: String
            do {
                if transport == nil { transport = try connect(path) }
                switch try transport!.send(request) {
                case .ok(let o): frame = json ? JSON.object(o).serialized() : output.status(StatusReply(o))
                case .error(let e): frame = "blockc: \(Output.clean(e.message))"
                case .event: frame = "blockc: blockd sent an event instead of the status"
                }
            } catch {
                transport?.close()
                transport = nil
                frame = "blockc: \(Output.clean(error.description)) (retrying every second)"
            }
            let text: String
            if json {
                text = frame
            } else if isTerminal {
                // Home and clear, then the frame: a redraw rather than a scroll.
                let banner = output.paint("blockc status --watch: \(clockTime(started)); Ctrl-C to stop", .dim)
                text = "\u{1B}[H\u{1B}[2J\(banner)\n\n\(frame)"
            } else {
                text = "\(frame)\n"
            }
            if !say(text) { return BlockcRunner.ok }
            // Sleep to the next whole second of work, not a second after it, so that the
            // countdown does not drift.
        } while sleep(max(0.05, 1 - now().timeIntervalSince(started)))
        return BlockcRunner.ok
    }

    private func clockTime(_ date: Date) -> String {
        let s = clock.civil(of: date).secondsOfDay
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(s / 3600)):\(two(s / 60 % 60)):\(two(s % 60))"
    }
}
