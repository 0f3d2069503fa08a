import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The open state log, used on the engine's queue only (§7). A change is appended with
/// one write(2), so a full disk or a read-only file system is seen by the change that hits it;
/// one fdatasync then makes every change appended since the last one durable (group commit).
/// Compaction writes the whole state as a new snapshot generation and starts the log again.
final class StateJournal {
    let store: StateStore
    private(set) var fd: Int32 = -1
    /// The generation of the snapshot on disk; records appended now follow it.
    private(set) var generation: Int
    /// The sequence number of the last record appended.
    private(set) var lastSeq: Int
    /// Bytes and records in the log since the snapshot.
    private(set) var length = 0
    private(set) var records = 0
    private(set) var snapshotBytes = 0
    /// Records were appended since the last fdatasync.
    private(set) var unsynced = false
    /// Totals, for tests: bytes appended to the log, and snapshots written.
    private(set) var appendedBytes = 0
    private(set) var snapshots = 0
    /// Writes the records; it keeps the bytes of the targets it wrote last (StateRecordEncoder).
    private var encoder = StateRecordEncoder()

    init(store: StateStore, generation: Int, seq: Int) {
        self.store = store
        self.generation = generation
        self.lastSeq = seq
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Whether the next save must write a snapshot: no log is open (at start, or after a write
    /// to it failed in a way that leaves it untrusted), or the log has grown past its bound, so
    /// that compaction's O(state) cost is paid at most once per O(state) changes.
    func needsCompaction(activities: Int) -> Bool {
        fd < 0 || records > max(1000, activities) * slack || length > max(4 * snapshotBytes, 1 << 20) * slack
    }

    /// A compaction that failed (the log itself still works) is tried again only after the log
    /// has grown as much again, so that a nearly full disk does not make every change O(state).
    func compactionFailed() { slack *= 2 }
    private var slack = 1

    /// Appends `records` in one write. On failure the log is cut back to where it was; if even
    /// that fails it is closed, so that the next save writes a snapshot instead.
    func append(_ records: [StateLog.Record]) throws(DaemonError) {
        guard fd >= 0 else { throw .system("the state log \(store.logPath) is not open", EBADF) }
        var data = Data()
        var seq = lastSeq
        for var record in records {
            seq += 1
            (record.gen, record.seq) = (generation, seq)
            do { data.append(contentsOf: try encoder.line(record)) } catch { throw .system("cannot encode a state-log record", EINVAL) }
        }
        do { try store.io.append(fd, data) } catch {
            if ftruncate(fd, off_t(length)) != 0 { closeLog() }
            throw error
        }
        lastSeq = seq
        length += data.count
        self.records += records.count
        appendedBytes += data.count
        unsynced = true
    }

    /// Makes every appended record durable. After a failed fdatasync the kernel may have
    /// dropped the pages, so the log is not trusted again: the next save writes a snapshot.
    func sync() throws(DaemonError) {
        guard unsynced else { return }
        do { try store.io.sync(fd) } catch {
            closeLog()
            throw error
        }
        unsynced = false
    }

    /// Writes `state` (whole, activities included) as the snapshot of the next generation, then
    /// empties the log. A crash between the two leaves records of the old generation, which
    /// the next load skips. The snapshot is durable when this returns.
    func compact(_ state: DaemonState) throws(DaemonError) {
        var s = state
        (s.generation, s.seq) = (generation + 1, lastSeq)
        let data = try store.encode(s)
        try store.io.replace(data, store.path)
        generation += 1
        (snapshotBytes, records, length, unsynced) = (data.count, 0, 0, false)
        snapshots += 1
        slack = 1
        if fd >= 0 && ftruncate(fd, 0) != 0 { closeLog() }
        if fd < 0 { fd = open(store.logPath, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC | O_CLOEXEC, 0o600) }
    }

    func closeLog() {
        if fd >= 0 { close(fd) }
        fd = -1
        unsynced = false
    }
}
