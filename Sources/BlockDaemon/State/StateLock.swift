import Dispatch
import FoundationEssentials
import Glibc

/// §7: one daemon per state directory. An exclusive `flock` on `lock` in the state
/// directory, taken before anything there is read or written and held for the life of the
/// process (the kernel drops it when the process dies, even on SIGKILL). The holder's pid is
/// written into the file so that the refusal can name it.
public final class StateLock {
    public let path: String
    private let fd: Int32

    public init(directory: String) throws(DaemonError) {
        path = directory + "/lock"
        // A read-only state directory still has to be locked: fall back to opening an existing
        // lock file read-only, then to the directory itself (flock works on both).
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        let writable = fd >= 0
        if fd < 0 { fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        if fd < 0 { fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw .refused("cannot open the state directory \(directory): \(String(cString: strerror(errno))); run blockd as root or give --state-dir DIR")
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let code = errno
            let holder = StateLock.readPid(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .held(directory: directory, pid: holder) }
            throw .system("cannot lock \(path)", code)
        }
        self.fd = fd
        if writable {
            let text = "\(getpid())\n"
            _ = ftruncate(fd, 0)
            _ = text.withCString { pwrite(fd, $0, strlen($0), 0) }
        }
    }

    deinit { close(fd) }

    private static func readPid(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 31, 0) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self).trimmed()
        return Int32(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
