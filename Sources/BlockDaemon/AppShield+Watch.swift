import CLinux
import Foundation
import Glibc

/// Watches the directories of blocked executables (E2: a package upgrade renames a new file
/// over the old one, and the new inode carries no mark) and of blocked apps that are not
/// installed yet. Any change there triggers a re-resolve; converging is idempotent, so a
/// spurious wake-up costs a few stat calls.
final class DirectoryWatcher: @unchecked Sendable {
    private let queue: DispatchQueue
    private let fd: Int32
    private var source: DispatchSourceRead?
    private var watches: [String: Int32] = [:]
    private var pending = false
    private let onChange: @Sendable () -> Void
    /// Coalesces the burst of events one install makes (create, close-write, rename).
    private let debounce: TimeInterval

    init(queue: DispatchQueue, debounce: TimeInterval = 0.05, onChange: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.debounce = debounce
        self.onChange = onChange
        fd = blockd_inotify_init()
        guard fd >= 0 else { return }
        let s = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        s.setEventHandler { [weak self] in self?.readable() }
        s.resume()
        source = s
    }

    var watched: Set<String> { Set(watches.keys) }

    /// Watches exactly `dirs`. Returns the directories that could not be watched.
    func update(_ dirs: Set<String>) -> [String] {
        dispatchPrecondition(condition: .onQueue(queue))
        guard fd >= 0 else { return dirs.sorted() }
        for (dir, wd) in watches where !dirs.contains(dir) {
            _ = blockd_inotify_rm_watch(fd, wd)
            watches[dir] = nil
        }
        var failed: [String] = []
        let mask = blockd_in_moved_to() | blockd_in_create() | blockd_in_close_write()
        for dir in dirs.sorted() where watches[dir] == nil {
            let wd = blockd_inotify_add_watch(fd, dir, mask)
            if wd >= 0 { watches[dir] = wd } else { failed.append(dir) }
        }
        return failed
    }

    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        if let s = source {
            // The source's cancel handler owns closing the fd, so no read races a reused number.
            let fd = self.fd
            s.setCancelHandler { close(fd) }
            s.cancel()
            source = nil
        } else if fd >= 0 {
            close(fd)
        }
        watches = [:]
    }

    private func readable() {
        guard blockd_inotify_drain(fd) > 0, !pending else { return }
        pending = true
        queue.asyncAfter(deadline: .now() + debounce) { [weak self] in
            guard let self else { return }
            pending = false
            onChange()
        }
    }
}
