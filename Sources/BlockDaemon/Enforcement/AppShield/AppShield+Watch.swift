import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// Watches the directories of blocked executables (E2: a package upgrade renames a new file
/// over the old one, and the new inode carries no mark) and of blocked apps that are not
/// installed yet. Any change there triggers a re-resolve; converging is idempotent, so a
/// spurious wake-up costs a few stat calls.
final class DirectoryWatcher: @unchecked Sendable {
    private let queue: DispatchQueue
    private var inotify: Inotify?
    private var watches: [String: Int32] = [:]
    private var pending = false
    private let onChange: @Sendable () -> Void
    /// Coalesces the burst of events one install makes (create, close-write, rename).
    private let debounce: TimeInterval

    init(queue: DispatchQueue, debounce: TimeInterval = 0.05, onChange: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.debounce = debounce
        self.onChange = onChange
        inotify = Inotify(queue: queue) { [weak self] _ in self?.changed() }
    }

    var watched: Set<String> { Set(watches.keys) }

    /// Watches exactly `dirs`. Returns the directories that could not be watched.
    func update(_ dirs: Set<String>) -> [String] {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let inotify else { return dirs.sorted() }
        for (dir, wd) in watches where !dirs.contains(dir) {
            inotify.remove(wd)
            watches[dir] = nil
        }
        var failed: [String] = []
        let mask = blockd_in_moved_to() | blockd_in_create() | blockd_in_close_write()
        for dir in dirs.sorted() where watches[dir] == nil {
            if let wd = inotify.add(dir, mask: mask) { watches[dir] = wd } else { failed.append(dir) }
        }
        return failed
    }

    func stop() {
        dispatchPrecondition(condition: .onQueue(queue))
        inotify?.stop()
        inotify = nil
        watches = [:]
    }

    private func changed() {
        guard !pending else { return }
        pending = true
        queue.asyncAfter(deadline: .now() + debounce) { [weak self] in
            guard let self else { return }
            pending = false
            onChange()
        }
    }
}
