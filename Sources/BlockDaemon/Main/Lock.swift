import CLinux
import Glibc

/// A mutex for the few places a plain lock is clearest (NSLock is not in
/// FoundationEssentials; Synchronization's Mutex holds its value, these guard several).
final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Runs `body` on a new thread of its own (a reader that blocks in the kernel should not hold
/// one of Dispatch's pool threads). `name` shows in `ps -L` and `top -H` (15 bytes at most).
func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String, body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { (self.name, self.body) = (name, body) }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        blockd_name_thread(box.name)
        box.body()
        return nil
    }, box)
    precondition(rc == 0, "pthread_create failed: \(String(cString: strerror(rc)))")
    pthread_detach(thread)
}
