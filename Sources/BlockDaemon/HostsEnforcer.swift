import BlockCore
import CLinux
import Dispatch
import Foundation
import Glibc

/// E1: blocks domains through one managed section of the hosts file.
///
/// The file is re-read before every write (a user's concurrent edit is never lost), written
/// only when the section changes, replaced atomically (temp file in the same directory with
/// the original's owner and mode, fsync, rename, fsync the directory), and written in place
/// where rename is impossible (a bind-mounted /etc/hosts in a container). A watch on the
/// file restores the section within a second if it is removed or altered while blocks are
/// active, and reports the repair as tamper (S5). All state lives on `queue`.
public final class HostsEnforcer: Enforcer, @unchecked Sendable {
    public let mode = "hosts"
    public let path: String
    let log: any LogSink
    /// Where tamper repairs are reported (S5); set before the first apply.
    public var hits: ShieldHitSink? {
        get { queue.sync { _hits } }
        set { queue.sync { _hits = newValue } }
    }
    var _hits: ShieldHitSink?
    let flush: @Sendable () -> Void
    let queue = DispatchQueue(label: "blockd.hosts")
    /// The section that must be in the file (nil: none).
    var expected: [UInt8]?
    var owners: [String: String] = [:]  // domain → selection, for tamper reports
    var watch: FileWatch?
    var repairPending = false
    var warnedInPlace = false

    /// E5: where blocked names point (the refusing sink when blockd's nftables table is usable).
    public let sink: HostsFile.Sink

    public init(path: String, log: any LogSink, hits: ShieldHitSink? = nil, sink: HostsFile.Sink = .unspecified,
                flushResolvers: @escaping @Sendable () -> Void = ResolverCache.flush) {
        self.sink = sink
        self.path = path
        self.log = log
        self._hits = hits
        self.flush = flushResolvers
    }

    public func apply(blocked: [Selection]) -> [EnforcementFailure] {
        queue.sync {
            var failures: [EnforcementFailure] = []
            var domains: [String] = []
            var owners: [String: String] = [:]
            for selection in blocked {
                for raw in selection.domains {
                    // E1: only validated names reach the file, whatever a config says.
                    do throws(CoreError) {
                        let d = try Domain.normalize(raw)
                        if owners[d] == nil {
                            owners[d] = selection.name
                            domains.append(d)
                        }
                    } catch {
                        failures.append(EnforcementFailure(selection: selection.name, message: error.message))
                    }
                }
            }
            self.owners = owners
            expected = HostsFile.section(for: domains, sink: sink)
            if let failure = converge() { failures.append(failure) }
            if expected != nil && watch == nil { startWatching() }
            return failures
        }
    }

    public func release() -> [EnforcementFailure] {
        queue.sync {
            expected = nil
            owners = [:]
            watch = nil
            return converge().map { [$0] } ?? []
        }
    }

    /// Makes the file hold exactly `expected`; returns a failure to record if it cannot.
    /// Returns whether it wrote, through `wrote`.
    @discardableResult
    func converge(wrote: UnsafeMutablePointer<Bool>? = nil) -> EnforcementFailure? {
        dispatchPrecondition(condition: .onQueue(queue))
        let current: [UInt8]
        switch HostsEnforcer.read(path) {
        case .success(let bytes): current = bytes
        case .failure(let message):
            if expected == nil { return nil }  // nothing to remove from a file we cannot read
            return EnforcementFailure(selection: nil, message: message)
        }
        let updated = HostsFile.splice(current, section: expected)
        guard updated != current else { return nil }
        if let message = write(updated) { return EnforcementFailure(selection: nil, message: message) }
        wrote?.pointee = true
        flush()
        return nil
    }

    // MARK: Tamper (E1, S5)

    func startWatching() {
        watch = FileWatch(path: path, queue: queue) { [weak self] in self?.fileChanged() }
        if watch == nil {
            log.warning("Cannot watch \(path) for edits; a removed blockd section is restored only at the next change")
        }
    }

    /// Coalesces a burst of events (an editor's write, rename, chmod) into one check.
    func fileChanged() {
        guard expected != nil, !repairPending else { return }
        repairPending = true
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in self?.repair() }
    }

    func repair() {
        repairPending = false
        guard let expected, case .success(let current) = HostsEnforcer.read(path) else { return }
        guard HostsFile.splice(current, section: expected) != current else { return }
        let present = Set(HostsFile.blockedDomains(in: current))
        var affected = Set(owners.filter { !present.contains($0.key) }.map(\.value))
        if affected.isEmpty { affected = Set(owners.values) }
        var wrote = false
        if let failure = converge(wrote: &wrote) {
            log.log(LogEntry("Cannot restore the blockd section of \(path): \(failure.message)", priority: .error, event: .failure))
            return
        }
        guard wrote else { return }
        for selection in affected.sorted() { _hits?(ShieldHit(kind: .tamper, selection: selection, path: path)) }
    }

    // MARK: File I/O

    enum ReadResult { case success([UInt8]), failure(String) }

    static func read(_ path: String) -> ReadResult {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return .success([]) }
            return .failure("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { out += chunk[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .failure("cannot read \(path): \(String(cString: strerror(errno)))") }
            return .success(out)
        }
    }

    /// Replaces the file's contents; nil on success, else what went wrong.
    func write(_ bytes: [UInt8]) -> String? {
        var st = stat()
        let exists = stat(path, &st) == 0
        let mode = exists ? st.st_mode & 0o7777 : 0o644
        let dir = (path as NSString).deletingLastPathComponent
        let temp = "\(dir.isEmpty ? "." : dir)/.\((path as NSString).lastPathComponent).blockd-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd >= 0 {
            var ok = fchmod(fd, mode) == 0
            if exists && (st.st_uid != geteuid() || st.st_gid != getegid()) { ok = ok && fchown(fd, st.st_uid, st.st_gid) == 0 }
            do { try AtomicFile.writeAll(fd, Data(bytes), path: temp) } catch { ok = false }
            ok = ok && fsync(fd) == 0
            close(fd)
            if ok && rename(temp, path) == 0 {
                AtomicFile.syncDirectory(dir.isEmpty ? "." : dir)
                return nil
            }
            let reason = errno
            unlink(temp)
            errno = reason
        }
        // Rename is impossible (EBUSY on a bind-mounted file, a read-only directory): write in
        // place. Not atomic, so it is logged.
        if !warnedInPlace {
            warnedInPlace = true
            log.notice("Cannot replace \(path) atomically (\(String(cString: strerror(errno)))); writing it in place")
        }
        let inPlace = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode)
        guard inPlace >= 0 else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
        defer { close(inPlace) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(inPlace, $0.baseAddress! + written, $0.count - written, off_t(written)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return "cannot write \(path): \(String(cString: strerror(errno)))" }
            written += n
        }
        guard ftruncate(inPlace, off_t(bytes.count)) == 0, fsync(inPlace) == 0 else {
            return "cannot write \(path): \(String(cString: strerror(errno)))"
        }
        return nil
    }
}

/// Watches one file through its directory (so replacement by rename is seen) and the file
/// itself (so in-place writes are seen). Stops when released.
final class FileWatch: @unchecked Sendable {
    let fd: Int32
    let source: DispatchSourceRead

    init?(path: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        fd = blockd_inotify_init()
        guard fd >= 0 else { return nil }
        let dir = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let dirMask = blockd_in_create() | blockd_in_moved_to() | blockd_in_close_write() | blockd_in_delete() | blockd_in_attrib()
        guard blockd_inotify_add_watch(fd, dir.isEmpty ? "." : dir, dirMask) >= 0 else {
            close(fd)
            return nil
        }
        let fileWatch = blockd_inotify_add_watch(fd, path, blockd_in_modify() | blockd_in_close_write())
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [fd] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var relevant = false
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                var offset = 0
                while offset + 16 <= n {
                    let wd = Int32(bitPattern: UInt32(buffer[offset]) | UInt32(buffer[offset + 1]) << 8 | UInt32(buffer[offset + 2]) << 16 | UInt32(buffer[offset + 3]) << 24)
                    let len = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8 | Int(buffer[offset + 14]) << 16 | Int(buffer[offset + 15]) << 24
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + len, n)].prefix { $0 != 0 }
                    if wd == fileWatch || String(decoding: nameBytes, as: UTF8.self) == name { relevant = true }
                    offset += 16 + len
                }
            }
            if relevant { onChange() }
        }
        source.setCancelHandler { [fd] in close(fd) }
        source.resume()
    }

    deinit { source.cancel() }
}
