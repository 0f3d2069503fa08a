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

/// A value read by many threads at once and seldom replaced: `status`'s snapshot and what it
/// keeps rendered. Readers share a read lock and so never wait for each other (a mutex here
/// made the connections' threads queue up behind one another on every answer); a writer
/// waits for the readers inside and goes before any reader that comes after it, so the
/// engine's publish is never starved by a stream of answers.
final class ReadMostly<Value>: @unchecked Sendable {
    private let rwlock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
    private var value: Value

    init(_ value: Value) {
        self.value = value
        rwlock.initialize(to: pthread_rwlock_t())
        var attr = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attr)
        pthread_rwlockattr_setkind_np(&attr, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(rwlock, &attr)
        pthread_rwlockattr_destroy(&attr)
    }

    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }

    func read<T>(_ body: (Value) throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return try body(value)
    }

    func write<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(rwlock)
        defer { pthread_rwlock_unlock(rwlock) }
        return try body(&value)
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
