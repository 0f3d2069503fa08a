import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// E1: reading and writing the hosts file. A symlinked file is followed: its final target is
/// replaced in the target's directory and the link stays a link. The target is replaced
/// atomically by AtomicFile.replace (temp file with the original's owner and mode, fsync,
/// rename, fsync of the directory); only where rename is impossible by nature (EBUSY, EXDEV: a
/// bind-mounted file) is it written in place, in a way that cannot lose a byte
/// (AtomicFile.replaceInPlace).
extension HostsEnforcer {
    enum ReadResult { case success([UInt8]), failure(String) }

    static func read(_ path: String) -> ReadResult {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return .success([]) }
            return .failure("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        do { return .success(try AtomicFile.readAll(fd, path: path)) } catch { return .failure(error.description) }
    }

    /// The file to replace: `path`, or the final target of a symlink at `path`.
    func target() -> Result<String, DaemonError> {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK else { return .success(path) }
        guard let resolved = realpath(path, nil) else {
            return .failure(.refused("cannot follow the symlink \(path): \(String(cString: strerror(errno))); point it at an existing file"))
        }
        defer { free(resolved) }
        let target = String(cString: resolved)
        if loggedTarget != target {
            loggedTarget = target
            log.notice("\(path) is a symlink; blockd writes its target \(target) and leaves the link as it is")
        }
        return .success(target)
    }

    /// Replaces the file's contents; nil on success, else what went wrong and what to do.
    func write(_ bytes: [UInt8]) -> String? {
        let file: String
        switch target() {
        case .success(let t): file = t
        case .failure(let f): return f.description
        }
        var st = stat()
        let exists = stat(file, &st) == 0
        guard let error = AtomicFile.replace(file, with: bytes, mode: exists ? st.st_mode & 0o7777 : 0o644,
                                             owner: exists ? (st.st_uid, st.st_gid) : nil) else { return nil }
        switch error.step {
        case .create: return unchanged("cannot create a temporary file in \(AtomicFile.directory(of: file))", error.code)
        case .mode: return unchanged("cannot set the mode of \(error.temp)", error.code)
        case .owner: return unchanged("cannot set the owner of \(error.temp)", error.code)
        case .write: return unchanged("cannot write \(error.temp)", error.code)
        case .sync: return unchanged("cannot sync \(error.temp)", error.code)
        case .rename:
            guard AtomicFile.renameImpossibleByNature(error.code) else { return unchanged("cannot replace \(file)", error.code) }
            return writeInPlace(file, bytes, because: error.code)
        }
    }

    /// A bind-mounted file (E1): written in place, which is not atomic, so it is logged (once).
    func writeInPlace(_ file: String, _ bytes: [UInt8], because code: Int32) -> String? {
        if !warnedInPlace {
            warnedInPlace = true
            log.notice("Cannot replace \(file) atomically (\(String(cString: strerror(code)))); writing it in place, with the space allocated first and the original restored on any failure")
        }
        do throws(DaemonError) {
            try AtomicFile.replaceInPlace(file, with: bytes)
            return nil
        } catch {
            return "\(error.description); blockd retries until the write succeeds"
        }
    }

    /// A failure that left the file as it was, with what the user can do about it.
    func unchanged(_ what: String, _ code: Int32) -> String {
        let hint = switch code {
        case ENOSPC, EDQUOT: "free some space on its file system"
        case EROFS: "its file system is mounted read-only"
        case EACCES, EPERM: "blockd needs write access to it and its directory"
        default: "check the file and its directory"
        }
        return "\(what): \(String(cString: strerror(code))); \(path) is unchanged and blockd retries until the write succeeds (\(hint))"
    }

    /// The paths to watch: the file, and a symlink's target where it has one.
    func watchedPaths() -> [String] {
        guard case .success(let file) = target(), file != path else { return [path] }
        return [path, file]
    }

    /// Identity, size and times of the watched files and their directories: equal before and
    /// after an event means the event was the last attempt's own doing.
    func fingerprint() -> [Int] {
        var out: [Int] = []
        for p in watchedPaths() {
            for q in [p, Path.parent(p)] {
                var st = stat()
                guard lstat(q.isEmpty ? "." : q, &st) == 0 else { out.append(-1); continue }
                out += [Int(st.st_ino), Int(st.st_size), Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec), Int(st.st_ctim.tv_nsec)]
            }
        }
        return out
    }
}
