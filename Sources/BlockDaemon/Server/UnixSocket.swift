import BlockCore
import CLinux
import CSystemd
import Dispatch
import FoundationEssentials
import Glibc

/// The control socket (§5, §7; ntpd's control socket is the model): systemd socket
/// activation when present, else bind the path ourselves — stale socket unlinked, mode set
/// before anyone can connect.
public enum UnixSocket {
    /// A listening socket from systemd (LISTEN_FDS), if we were socket-activated.
    public static func fromSystemd() throws(DaemonError) -> Int32? {
        let n = sd_listen_fds(1)
        guard n > 0 else { return nil }
        let fd = SD_LISTEN_FDS_START
        guard n == 1, sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw .refused("systemd passed \(n) sockets; blockd expects exactly one listening Unix stream socket")
        }
        setNonBlocking(fd)
        return fd
    }

    /// Binds and listens on `path` with `mode`, group `group` when it exists and we may set it.
    public static func listen(path: String, mode: mode_t = 0o660, group: String = "blockd") throws(DaemonError) -> Int32 {
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard path.utf8.count < capacity else {
            throw .refused("the socket path \(path) is longer than \(capacity - 1) bytes; choose a shorter --socket")
        }
        let dir = Path.parent(path)
        if !dir.isEmpty && !FileManager.default.fileExists(atPath: dir) {
            // 0755 whatever the umask: under a strict one (077) nobody else could reach the socket.
            if mkdir(dir, 0o755) == 0 {
                chmod(dir, 0o755)
            } else if errno != EEXIST {
                throw .system("cannot create \(dir)", errno)
            }
        }
        try removeStale(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("cannot create a socket", errno) }
        // The socket file never exists with looser permissions than its owner's alone: Linux
        // creates it with the socket inode's mode (minus the umask), so set that before bind.
        // (Not a umask of 0177 around bind: the umask is the whole process's, and a file another
        // thread created meanwhile would get it.)
        fchmod(fd, 0o600)
        let bound = withAddress(path) { bind(fd, $0, $1) }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .system("cannot bind \(path)", code)
        }
        var gid: UInt32 = 0
        if geteuid() == 0, blockd_group_id(group, &gid) == 0 { _ = chown(path, 0, gid) }
        chmod(path, mode)
        guard Glibc.listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw .system("cannot listen on \(path)", code)
        }
        setNonBlocking(fd)
        return fd
    }

    /// A leftover socket file is removed only if nobody answers on it; a live daemon is an error.
    static func removeStale(_ path: String) throws(DaemonError) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard (st.st_mode & S_IFMT) == S_IFSOCK else {
            throw .refused("\(path) exists and is not a socket; remove it or choose another --socket")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(probe) }
        if withAddress(path, { connect(probe, $0, $1) }) == 0 {
            throw .refused("another blockd is already listening on \(path); stop it first")
        }
        unlink(path)
    }

    /// Calls `body` with a `sockaddr_un` for `path` (whose length the caller has checked).
    static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }
}
