import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// One inotify instance, read on a queue: the one place where inotify's event records are
/// decoded. Watches are added and removed by the owner; each readable burst is handed over as
/// one batch of events. The descriptor is closed by the read source's cancel handler, so no
/// read can race a reused descriptor number.
final class Inotify: @unchecked Sendable {
    struct Event: Equatable {
        let watch: Int32
        /// The entry of a watched directory the event is about; empty for the watched file itself.
        let name: String
    }

    private let fd: Int32
    private let source: DispatchSourceRead

    init?(queue: DispatchQueue, onEvents: @escaping @Sendable ([Event]) -> Void) {
        let fd = blockd_inotify_init()
        guard fd >= 0 else { return nil }
        self.fd = fd
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 4096)
            var events: [Event] = []
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                events += Inotify.decode(buffer[0..<n])
            }
            if !events.isEmpty { onEvents(events) }
        }
        source.setCancelHandler { close(fd) }
        source.resume()
    }

    deinit { source.cancel() }

    /// The watch descriptor, or nil when `path` cannot be watched.
    func add(_ path: String, mask: UInt32) -> Int32? {
        let wd = blockd_inotify_add_watch(fd, path, mask)
        return wd >= 0 ? wd : nil
    }

    func remove(_ watch: Int32) { _ = blockd_inotify_rm_watch(fd, watch) }

    /// Stops reading and closes the descriptor (also done when released).
    func stop() { source.cancel() }

    /// `struct inotify_event` records: wd, mask, cookie, len (native-endian 32-bit each), then
    /// `len` bytes of NUL-padded name. A record cut short by the buffer's end is not read.
    static func decode(_ bytes: ArraySlice<UInt8>) -> [Event] {
        var events: [Event] = []
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 16 <= raw.count {
                let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let len = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                let name = raw[(offset + 16)..<min(offset + 16 + len, raw.count)].prefix { $0 != 0 }
                events.append(Event(watch: wd, name: String(decoding: name, as: UTF8.self)))
                offset += 16 + len
            }
        }
        return events
    }
}

/// Watches files through their directories (so replacement by rename is seen) and the files
/// themselves (so in-place writes are seen). Stops when released.
final class FileWatch: @unchecked Sendable {
    let inotify: Inotify
    /// What is watched, for a caller that must watch again when a symlink's target changes.
    let paths: [String]

    /// `onChange(true)` for an event about one of `paths`, `onChange(false)` for any other
    /// entry of their directories (only when `everyEntry`: a file deleted there frees space).
    init?(paths: [String], queue: DispatchQueue, everyEntry: Bool = false, onChange: @escaping @Sendable (Bool) -> Void) {
        let watches = Watches()
        guard let inotify = Inotify(queue: queue, onEvents: { events in
            let aboutFile = events.contains { watches.isAboutFile($0) }
            if aboutFile { onChange(true) } else if everyEntry { onChange(false) }
        }) else { return nil }
        let dirMask = blockd_in_create() | blockd_in_moved_to() | blockd_in_close_write() | blockd_in_delete() | blockd_in_attrib()
        for path in paths {
            guard let wd = inotify.add(AtomicFile.directory(of: path), mask: dirMask) else { return nil }
            watches.addName(wd, Path.lastComponent(path))
            if let file = inotify.add(path, mask: blockd_in_modify() | blockd_in_close_write()) { watches.addFile(file) }
        }
        self.inotify = inotify
        self.paths = paths
    }

    convenience init?(path: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        self.init(paths: [path], queue: queue) { _ in onChange() }
    }

    /// Which watch stands for what: a directory (with the names watched in it) or a file.
    private final class Watches: @unchecked Sendable {
        private let lock = Lock()
        private var names: [Int32: Set<String>] = [:]
        private var files: Set<Int32> = []
        func addName(_ wd: Int32, _ name: String) { lock.withLock { _ = names[wd, default: []].insert(name) } }
        func addFile(_ wd: Int32) { lock.withLock { _ = files.insert(wd) } }
        func isAboutFile(_ e: Inotify.Event) -> Bool {
            lock.withLock { files.contains(e.watch) || names[e.watch]?.contains(e.name) == true }
        }
    }
}

/// U3: this process's mount table, watched through its own notification (proc(5): a change makes
/// /proc/self/mountinfo signal POLLPRI), so a mount over a file, which inotify cannot see, is
/// news at once and no timer has to look for it. Stops when released.
final class MountWatch: @unchecked Sendable {
    private let source: DispatchSourceRead

    /// `path`: /proc/self/mountinfo (a test watches another process's mount namespace).
    init?(path: String = "/proc/self/mountinfo", queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        var mountinfo: Int32 = -1
        let epfd = blockd_mount_watch_open(path, &mountinfo)
        guard epfd >= 0 else { return nil }
        source = DispatchSource.makeReadSource(fileDescriptor: epfd, queue: queue)
        // Readable only when the table changed; Dispatch's own epoll has taken the change by the
        // time this runs, so being called is the news, and the take only empties the set.
        source.setEventHandler {
            blockd_mount_watch_take(epfd)
            onChange()
        }
        source.setCancelHandler {
            close(epfd)
            close(mountinfo)
        }
        source.resume()
    }

    deinit { source.cancel() }
}
