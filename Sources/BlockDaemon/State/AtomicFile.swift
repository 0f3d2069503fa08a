import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Crash-safe file replacement (§7, E1): write a temp file in the same directory,
/// fsync it, rename it over the target, fsync the directory.
public enum AtomicFile {
    /// Replaces `path` with `data`, the new file having exactly `mode`.
    public static func write(_ data: Data, to path: String, mode: mode_t = 0o644) throws(DaemonError) {
        if let error = replace(path, with: data, mode: mode, owner: nil) {
            let what = switch error.step {
            case .create: "cannot create \(error.temp)"
            case .mode, .owner: "cannot set the mode of \(error.temp)"
            case .write: "cannot write \(error.temp)"
            case .sync: "cannot sync \(error.temp)"
            case .rename: "cannot rename \(error.temp) to \(path)"
            }
            throw .system(what, error.code)
        }
    }

    /// Which step of a replacement failed, on which temp file, with which errno (a value the
    /// caller words, not an error of its own).
    struct StepFailure {
        enum Step { case create, mode, owner, write, sync, rename }
        let step: Step
        let temp: String
        let code: Int32
    }

    /// The one crash-safe replacement: a temp file beside `path` (never following a link there)
    /// with `mode` and, when given, `owner`; the contents; fsync; rename over `path`; fsync of
    /// the directory. The temp file is removed on any failure; `path` is then untouched.
    /// Returns the step that failed (nil: replaced).
    /// `Data` or `[UInt8]` as they are (a 16 MB hosts file is not copied into a `Data` first).
    static func replace(_ path: String, with data: some ContiguousBytes, mode: mode_t, owner: (uid: uid_t, gid: gid_t)?) -> StepFailure? {
        data.withUnsafeBytes { replace(path, bytes: $0, mode: mode, owner: owner) }
    }

    private static func replace(_ path: String, bytes: UnsafeRawBufferPointer, mode: mode_t, owner: (uid: uid_t, gid: gid_t)?) -> StepFailure? {
        let dir = directory(of: path)
        let temp = "\(dir)/.\(Path.lastComponent(path)).blockd-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return StepFailure(step: .create, temp: temp, code: errno) }
        var failed: StepFailure.Step?
        if fchmod(fd, mode) != 0 { failed = .mode }
        if failed == nil, let owner, owner.uid != geteuid() || owner.gid != getegid(), fchown(fd, owner.uid, owner.gid) != 0 {
            failed = .owner
        }
        if failed == nil { do { try writeAll(fd, bytes, path: temp) } catch { failed = .write } }
        if failed == nil && fsync(fd) != 0 { failed = .sync }
        var code = errno
        close(fd)
        if failed == nil && rename(temp, path) != 0 { (failed, code) = (.rename, errno) }
        guard let failed else {
            syncDirectory(dir)
            return nil
        }
        unlink(temp)
        return StepFailure(step: failed, temp: temp, code: code)
    }

    /// The directory `path` is in ("." for a bare name).
    static func directory(of path: String) -> String {
        let dir = Path.parent(path)
        return dir.isEmpty ? "." : dir
    }

    static func writeAll(_ fd: Int32, _ data: some ContiguousBytes, path: String) throws(DaemonError) {
        var failure: DaemonError?
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            do throws(DaemonError) { try writeAll(fd, buffer, path: path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws(DaemonError) {
        var offset = 0
        while offset < buffer.count {
            let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .system("cannot write \(path)", errno)
            }
            offset += n
        }
    }

    public static func syncDirectory(_ dir: String) {
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

// MARK: E1: writing in place where rename is impossible

extension AtomicFile {
    /// Whether a failed rename means the file cannot be replaced by nature, so that writing it
    /// in place is right: EBUSY (the file is a mount point, a bind-mounted /etc/hosts in a
    /// container) or EXDEV (it sits on another mount). Every other failure (ENOSPC, EIO, EROFS,
    /// EACCES, ...) would hit an in-place write as well, after it had cut the file: it is
    /// reported and retried instead.
    public static func renameImpossibleByNature(_ code: Int32) -> Bool { code == EBUSY || code == EXDEV }

    /// The calls an in-place write makes, injectable so that tests can fail any one of them.
    /// Each returns 0 or an errno value (`write` returns the bytes written, or -errno).
    struct InPlaceIO {
        var allocate: (_ fd: Int32, _ length: Int) -> Int32 = { fd, length in posix_fallocate(fd, 0, off_t(length)) }
        var write: (_ fd: Int32, _ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int = { fd, bytes, offset in
            let n = pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset))
            return n < 0 ? -Int(errno) : n
        }
        var truncate: (_ fd: Int32, _ length: Int) -> Int32 = { fd, length in ftruncate(fd, off_t(length)) == 0 ? 0 : errno }
        var sync: (_ fd: Int32) -> Int32 = { fd in fsync(fd) == 0 ? 0 : errno }
    }

    /// Replaces the contents of the existing file `path` in place so that no byte can be lost
    /// (E1): the space for the new contents is allocated before the old are touched, and any
    /// failure after that writes the original bytes back and restores the original length.
    static func replaceInPlace(_ path: String, with bytes: [UInt8], io: InPlaceIO = InPlaceIO()) throws(DaemonError) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw .system("cannot open \(path) to write it in place", errno) }
        defer { close(fd) }
        let original = try readAll(fd, path: path)
        if bytes.count > original.count {
            let code = io.allocate(fd, bytes.count)
            if code != 0 {
                _ = io.truncate(fd, original.count)  // an allocation that failed half way must not leave zeros
                throw .system("cannot make room for \(bytes.count) bytes in \(path) (it is unchanged)", code)
            }
        }
        var code = overwrite(fd, with: bytes, io: io)
        if code == 0 { code = io.sync(fd) }
        guard code != 0 else { return }
        let restored = overwrite(fd, with: original, io: io)
        let synced = restored == 0 ? io.sync(fd) : restored
        if synced != 0 {
            throw .system("cannot write \(path) in place (\(String(cString: strerror(code)))), and writing its original \(original.count) bytes back failed too", synced)
        }
        throw .system("cannot write \(path) in place (its original bytes were written back)", code)
    }

    /// Writes `bytes` from offset 0 and sets the length to theirs; 0 or an errno value.
    private static func overwrite(_ fd: Int32, with bytes: [UInt8], io: InPlaceIO) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { io.write(fd, UnsafeRawBufferPointer(rebasing: $0[offset...]), offset) }
            if n == -Int(EINTR) { continue }
            if n < 0 { return Int32(-n) }
            if n == 0 { return EIO }
            offset += n
        }
        return io.truncate(fd, bytes.count)
    }

    /// The whole file from offset 0, read straight into an array of its size (a 16 MB hosts
    /// file read in 64 KB pieces onto a growing array was copied about twice over, each copy
    /// into fresh pages). A file that grew meanwhile is read again into a larger one.
    static func readAll(_ fd: Int32, path: String) throws(DaemonError) -> [UInt8] {
        var st = stat()
        var size = (fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFREG ? Int(st.st_size) : 0) + 4096
        while true {
            var failure: Int32 = 0
            var full = false
            let out = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
                var got = 0
                while got < buffer.count {
                    let n = pread(fd, buffer.baseAddress! + got, buffer.count - got, off_t(got))
                    if n > 0 { got += n; continue }
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { failure = errno }
                    break
                }
                full = got == buffer.count
                count = got
            }
            if failure != 0 { throw .system("cannot read \(path)", failure) }
            if !full { return out }
            size *= 2
        }
    }
}

extension Array where Element == UInt8 {
    /// Whether `other` holds the same bytes, with memcmp: the generic `==` compares element by
    /// element, and a 758 KB hosts file compared twice per change was a tenth of a `start`.
    func sameBytes(as other: [UInt8]) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return withUnsafeBufferPointer { a in other.withUnsafeBufferPointer { b in memcmp(a.baseAddress!, b.baseAddress!, count) == 0 } }
    }
}
