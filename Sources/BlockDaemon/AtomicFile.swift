import Foundation
import Glibc

/// Crash-safe file replacement (DESIGN §7, E1): write a temp file in the same directory,
/// fsync it, rename it over the target, fsync the directory.
public enum AtomicFile {
    public enum Failure: Error, CustomStringConvertible {
        case system(String, Int32)
        public var description: String {
            switch self {
            case .system(let what, let code): "\(what): \(String(cString: strerror(code)))"
            }
        }
    }

    public static func write(_ data: Data, to path: String, mode: mode_t = 0o644) throws(Failure) {
        let dir = (path as NSString).deletingLastPathComponent
        let temp = "\(dir.isEmpty ? "." : dir)/.\((path as NSString).lastPathComponent).tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .system("cannot create \(temp)", errno) }
        var ok = false
        defer {
            if !ok { unlink(temp) }
        }
        do {
            defer { close(fd) }
            try writeAll(fd, data, path: temp)
            guard fsync(fd) == 0 else { throw Failure.system("cannot sync \(temp)", errno) }
        }
        guard rename(temp, path) == 0 else { throw .system("cannot rename \(temp) to \(path)", errno) }
        ok = true
        syncDirectory(dir.isEmpty ? "." : dir)
    }

    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(Failure) {
        var failure: Failure?
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = .system("cannot write \(path)", errno)
                    return
                }
                offset += n
            }
        }
        if let failure { throw failure }
    }

    public static func syncDirectory(_ dir: String) {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
