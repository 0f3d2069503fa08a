import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// F3: keeps `blockd.prom` in `MetricsDirectory=` for node_exporter's textfile collector.
///
/// The file is rendered by `Metrics.render` from the status the engine published and the
/// events counted here, and replaced atomically (a temp file beside it, fsync, rename): the
/// collector reads only `*.prom`, so it sees the old file or the new one, never half of one.
/// It is written shortly after every change (a burst of changes writes once) and every
/// minute while something is active, so its age tells that blockd is alive; with nothing
/// active nothing wakes blockd up. A write that fails is logged once per reason and tried
/// again at the next change or minute; enforcement never waits for it. All state lives on
/// `queue`.
public final class MetricsWriter: @unchecked Sendable {
    public let path: String
    let log: any LogSink
    let now: @Sendable () -> Date
    let queue = DispatchQueue(label: "blockd.metrics")
    var counters = Metrics.Counters()
    var snapshot: StatusSnapshot?
    var pending = false
    var refresh: DispatchWorkItem?
    var problem: String?
    /// How often the file is written again while something is active.
    static let refreshSeconds: TimeInterval = 60

    public init(directory: String, log: any LogSink, now: @escaping @Sendable () -> Date) {
        path = (directory.hasSuffix("/") ? directory : directory + "/") + Metrics.fileName
        self.log = log
        self.now = now
    }

    /// A snapshot the engine published (on the engine's queue; never waits).
    func published(_ snapshot: StatusSnapshot) {
        queue.async { [self] in
            self.snapshot = snapshot
            scheduleWrite()
        }
    }

    /// One event as streamed to `watch`, counted (never waits).
    public func event(_ event: WatchEvent) {
        queue.async { [self] in
            counters.count(event)
            scheduleWrite()
        }
    }

    /// The file's text now (tests; `write` on the queue).
    func render() -> String? {
        guard let snapshot else { return nil }
        let status = snapshot.document(all: false, now: now()).json
        return Metrics.render(status: status, counters: counters, version: BlockdVersion.version, lastEnforcement: snapshot.lastEnforced)
    }

    func scheduleWrite() {
        guard !pending else { return }
        pending = true
        queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
            pending = false
            write()
        }
    }

    func write() {
        dispatchPrecondition(condition: .onQueue(queue))
        refresh?.cancel()
        refresh = nil
        guard let text = render() else { return }
        do {
            // 0644: node_exporter reads it as its own user. That is safe because the file names
            // no per-user selection and no user (Metrics.render counts them).
            try AtomicFile.write(Data(text.utf8), to: path, mode: 0o644)
            if problem != nil {
                problem = nil
                log.notice("Metrics file \(path) written again")
            }
        } catch {
            let message = "\(error)"
            if problem != message {
                problem = message
                log.warning("Cannot write the metrics file \(path): \(message); blockd tries again at the next change (under the shipped unit, a MetricsDirectory= other than /var/lib/prometheus/node-exporter needs ReadWritePaths= in a drop-in)")
            }
        }
        guard snapshot?.desired.isEmpty == false || (snapshot?.counts.active ?? 0) > 0 else { return }
        let item = DispatchWorkItem { [weak self] in self?.write() }
        refresh = item
        queue.asyncAfter(deadline: .now() + MetricsWriter.refreshSeconds, execute: item)
    }
}
