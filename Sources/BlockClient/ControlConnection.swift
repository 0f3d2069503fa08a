import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// What `blockc` needs from a connection to the daemon. `BlockcRunner` talks to this rather
/// than to the socket so that its exit-status mapping is testable without a daemon.
public protocol Transport: AnyObject {
    /// Sends one request line and reads the one response line (§8).
    func send(_ request: Request) throws(ClientError) -> Response
    /// The next line of a `watch` stream, without its LF; nil when the daemon closes it.
    func readLine() throws(ClientError) -> String?
    func close()
}

/// The client layer's one error type. Both cases carry a sentence that says
/// what to do next; `BlockcRunner` maps `unreachable` to exit status 3.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No daemon to talk to: ENOENT, ECONNREFUSED, EACCES, a timeout, a path too long.
    case unreachable(path: String, reason: String)
    /// The daemon answered with something this client cannot use.
    case protocolError(String)

    public var description: String {
        switch self {
        case .unreachable(_, let reason): reason
        case .protocolError(let message): message
        }
    }

    /// The sentence for a failed connect(2), naming the fix rather than the errno.
    public static func unreachable(path: String, errno code: Int32) -> ClientError {
        let reason = switch code {
        case ENOENT where path == BlockcInvocation.defaultSocket, ECONNREFUSED where path == BlockcInvocation.defaultSocket,
             ENOTDIR where path == BlockcInvocation.defaultSocket:
            "blockd is not running (no daemon at \(path)); start it with 'sudo systemctl start blockd'. "
                + "To talk to a sandboxed blockd ('make try' prints its socket), give blockc its socket: "
                + "'export BLOCKD_SOCKET=PATH' or 'blockc --socket PATH'"
        case ENOENT, ECONNREFUSED, ENOTDIR:
            "no blockd at \(path) (from --socket or BLOCKD_SOCKET); if it was a sandbox, start it again ('make try' prints the socket to use), "
                + "or unset BLOCKD_SOCKET to talk to the system's blockd at \(BlockcInvocation.defaultSocket)"
        case EACCES, EPERM:
            "permission denied on \(path); join group 'blockd' ('sudo usermod -aG blockd $USER', then log in again)"
        case EAGAIN, EINPROGRESS:
            "blockd at \(path) is not accepting connections (busy or stuck); check 'systemctl status blockd'"
        default:
            "cannot connect to blockd at \(path): \(String(cString: strerror(code)))"
        }
        return .unreachable(path: path, reason: reason)
    }
}

/// A blocking connection to the daemon's Unix stream socket (§8): one request line
/// out, one response line back, many requests per connection; after `watch`, `readLine`
/// yields the `EVENT` lines.
public final class ControlConnection: Transport {
    /// A response longer than this is not something our daemon sends; refusing it keeps a
    /// confused or hostile peer from eating the client's memory.
    public static let maxResponseBytes = 64 << 20

    public let path: String
    private let timeout: TimeInterval
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already searched for LF, so a long line is scanned once.
    private var scanned = 0

    public init(path: String, timeout: TimeInterval = 10) throws(ClientError) {
        self.path = path
        self.timeout = timeout
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        // sun_path must hold the path and its NUL; a longer path would be silently cut.
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw .unreachable(path: path, reason: "the socket path \(path) is too long for a Unix socket (\(bytes.count) bytes, at most \(capacity - 1)); use a shorter --socket or BLOCKD_SOCKET")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }

        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError.unreachable(path: path, errno: errno) }
        // Without timeouts a stuck daemon would hang every script that calls blockc.
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))

        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let socket = fd
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, length) }
        }
        if rc != 0 {
            let code = errno
            Glibc.close(fd)
            fd = -1
            throw ClientError.unreachable(path: path, errno: code)
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    public func send(_ request: Request) throws(ClientError) -> Response {
        try send(line: request.line, command: request.command.rawValue)
    }

    /// One request line (without its LF) and its answer, for a command this build has no
    /// `Request` case for yet; `command` names it in errors.
    public func send(line: String, command: String) throws(ClientError) -> Response {
        if let code = try write(Array((line + "\n").utf8)) {
            // §8: a daemon that refuses a connection (`ERR busy` over the per-user limit)
            // answers at accept and closes without reading, so the request's write fails;
            // what it said is already here, and is the answer to show, not the broken pipe.
            if let line = try? nextLine(waitForever: false), case .error(let error)? = try? Response.parse(line) {
                return .error(error)
            }
            throw .protocolError("blockd closed the connection (\(String(cString: strerror(code)))); see 'journalctl -u blockd'")
        }
        guard let line = try nextLine(waitForever: false) else {
            throw .protocolError("blockd closed the connection without answering '\(command)'; see 'journalctl -u blockd'")
        }
        do {
            return try Response.parse(line)
        } catch {
            throw .protocolError(error.message)
        }
    }

    /// For watch streams, which are quiet for hours: the receive timeout only bounds the
    /// answer to a request, so here it just means "nothing yet".
    public func readLine() throws(ClientError) -> String? {
        try nextLine(waitForever: true)
    }

    /// Sends all of `bytes`; the errno when the daemon had closed the connection (EPIPE,
    /// ECONNRESET), for `send` to look for what it said before it closed.
    @discardableResult
    private func write(_ bytes: [UInt8]) throws(ClientError) -> Int32? {
        guard fd >= 0 else { throw .protocolError("the connection to blockd is closed") }
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a daemon that goes away must give EPIPE, not kill us with SIGPIPE.
            let socket = fd, start = offset
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(socket, raw.baseAddress! + start, raw.count - start, Int32(MSG_NOSIGNAL))
            }
            if n >= 0 {
                offset += n
                continue
            }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN:
                throw .unreachable(path: path, reason: "blockd at \(path) did not take the request within \(Int(timeout))s; check 'systemctl status blockd'")
            case EPIPE, ECONNRESET:
                return code
            default:
                throw .protocolError("blockd closed the connection (\(String(cString: strerror(code)))); see 'journalctl -u blockd'")
            }
        }
        return nil
    }

    private func nextLine(waitForever: Bool) throws(ClientError) -> String? {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let lf = buffer[scanned...].firstIndex(of: 10) {
                let line = String(decoding: buffer[..<lf], as: UTF8.self)
                buffer.removeSubrange(...lf)
                scanned = 0
                return line
            }
            scanned = buffer.count
            guard buffer.count <= ControlConnection.maxResponseBytes else {
                throw .protocolError("blockd sent a line longer than \(ControlConnection.maxResponseBytes >> 20) MiB; this client refuses it")
            }
            guard fd >= 0 else { throw .protocolError("the connection to blockd is closed") }
            let socket = fd
            let n = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: chunk[..<n])
                continue
            }
            if n == 0 {
                guard buffer.isEmpty else { throw .protocolError("blockd closed the connection in the middle of a line") }
                return nil
            }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN:
                if waitForever { continue }
                throw .unreachable(path: path, reason: "blockd at \(path) did not answer within \(Int(timeout))s; check 'systemctl status blockd' and 'journalctl -u blockd'")
            case ECONNRESET:
                guard buffer.isEmpty else { throw .protocolError("blockd reset the connection in the middle of a line") }
                return nil
            default:
                throw .protocolError("reading from blockd failed: \(String(cString: strerror(code)))")
            }
        }
    }
}
