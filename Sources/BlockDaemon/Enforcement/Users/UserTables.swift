import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// The per-user tables that libnss_blockd.so.2 reads (U3): one file per uid (`UserTable`)
/// in `directory` (/run/blockd/users, or `UserTablesDirectory=`), each replaced atomically,
/// so that a lookup in any process sees the old table or the new one, never half of one.
///
/// Who may read a table: root, which owns it, and its user, through a POSIX ACL entry
/// `user:UID:r--` (mode 0640, the group bits showing the ACL's mask); nobody else. The file
/// stays root's, so its user can neither chmod nor rewrite it. Where the file system has no
/// POSIX ACLs the tables fall back to 0644 and `Changes.readableByEveryone` says so.
///
/// The module trusts a table only when it and the directory are owned by root and writable
/// by no one else: the directory is made 0755 (any user lists it, to open their own table)
/// and a directory someone else owns is refused with what to do, instead of being used.
public struct UserTables: Sendable {
    public let directory: String
    let xattr: ExtendedAttributes

    public init(directory: String = UserTable.directory, xattr: ExtendedAttributes = .system) {
        self.directory = directory
        self.xattr = xattr
    }

    /// What an `apply` changed, by uid.
    public struct Changes: Equatable {
        public var written: [UInt32] = []
        public var removed: [UInt32] = []
        /// Some table was written readable by every user: the file system refused POSIX ACLs.
        public var readableByEveryone = false
    }

    public func path(uid: UInt32) -> String { "\(directory)/\(UserTable.fileName(uid: uid))" }

    /// Makes the directory hold exactly `tables` (uid → the names blocked for that uid): a
    /// table whose bytes, owner, mode or ACL are not as blockd writes them is replaced, a uid
    /// with no names loses its table, and a table of a uid not in `tables` is removed. Files
    /// that are not named by a uid are left alone. Stops at the first failure, whose message
    /// says what to do; applying again retries.
    @discardableResult
    public func apply(_ tables: [UInt32: [String]]) throws(DaemonError) -> Changes {
        var rendered: [UInt32: [UInt8]] = [:]
        for (uid, domains) in tables where !domains.isEmpty {
            do { rendered[uid] = try UserTable.render(uid: uid, domains: domains) } catch {
                throw .system("cannot write the table of uid \(uid): \(error.message)", EINVAL)
            }
        }
        try prepareDirectory()
        return try apply(rendered: rendered)
    }

    /// `apply` with the tables' bytes already rendered. `only`: the uids whose tables may have
    /// changed; the others are left unlooked at (nil: every table is compared, and any table
    /// of a uid not in `tables` is removed). `rewrite`: tables known to need their new bytes,
    /// written without comparing the old ones first. The directory is prepared already
    /// (`prepareDirectory`: the enforcer does it before taking its lock, once per change).
    @discardableResult
    public func apply(rendered tables: [UInt32: [UInt8]], only: Set<UInt32>? = nil, rewrite: Set<UInt32> = []) throws(DaemonError) -> Changes {
        var changes = Changes()
        for uid in (only.map(Array.init) ?? Array(tables.keys)).sorted() {
            guard let bytes = tables[uid] else { continue }
            if !rewrite.contains(uid), problem(uid: uid, bytes: bytes) == nil {
                if everyoneReads(uid: uid) { changes.readableByEveryone = true }
                continue
            }
            if try write(uid: uid, bytes: bytes) { changes.readableByEveryone = true }
            if let left = problem(uid: uid, bytes: bytes) {
                throw .system("\(path(uid: uid)) is not as blockd wrote it (\(left)); check what else writes \(directory)", EIO)
            }
            changes.written.append(uid)
        }
        let others: [UInt32]
        if let only { others = only.sorted() } else { others = try present() }
        for uid in others where tables[uid] == nil {
            guard unlink(path(uid: uid)) == 0 else {
                if errno == ENOENT { continue }
                throw .system("cannot remove \(path(uid: uid))", errno)
            }
            changes.removed.append(uid)
        }
        if !changes.removed.isEmpty { AtomicFile.syncDirectory(directory) }
        return changes
    }

    /// The uids that have a table now.
    public func present() throws(DaemonError) -> [UInt32] {
        guard let dir = opendir(directory) else { throw .system("cannot read \(directory)", errno) }
        defer { closedir(dir) }
        var uids: [UInt32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let uid = UserTable.uid(fileName: name) { uids.append(uid) }
        }
        return uids.sorted()
    }

    // MARK: What a table must be (U3)

    /// What is wrong with `uid`'s table, in words for the journal; nil when it is a regular
    /// file of root's holding exactly `bytes` with the access `UserTable.access` gives it.
    public func problem(uid: UInt32, bytes: [UInt8]) -> String? {
        let file = path(uid: uid)
        var st = stat()
        guard lstat(file, &st) == 0 else {
            return errno == ENOENT ? "it was missing" : "it cannot be read: \(String(cString: strerror(errno)))"
        }
        guard st.st_mode & S_IFMT == S_IFREG else { return "it is not a regular file" }
        guard st.st_uid == geteuid() else { return "it belongs to uid \(st.st_uid), not root" }
        let acl = xattr.get(file, ExtendedAttributes.accessACL)
        let want = UserTable.access(uid: uid, owner: geteuid(), everyone: acl.failed(with: EOPNOTSUPP))
        let mode = UInt32(st.st_mode & 0o7777)
        guard mode == want.mode else { return "its mode was \(String(mode, radix: 8)), not \(String(want.mode, radix: 8))" }
        switch (acl, want.acl) {
        case (.success(let have), let wanted?) where have == wanted: break
        case (.failure(let e), nil) where e.errno == ENODATA || e.errno == EOPNOTSUPP: break
        case (.failure(let e), _) where e.errno != ENODATA && e.errno != EOPNOTSUPP:
            return "its ACL cannot be read: \(String(cString: strerror(e.errno ?? EIO)))"
        default: return "its ACL was changed"
        }
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return "it cannot be read: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        guard let current = try? AtomicFile.readAll(fd, path: file) else { return "it cannot be read" }
        return current.sameBytes(as: bytes) ? nil : "its contents were changed"
    }

    /// Whether `uid`'s table is, by necessity, readable by every user (no POSIX ACLs there).
    func everyoneReads(uid: UInt32) -> Bool {
        uid != geteuid() && uid != UserTable.everyone && xattr.get(path(uid: uid), ExtendedAttributes.accessACL).failed(with: EOPNOTSUPP)
    }

    /// Replaces `uid`'s table: a temp file of root's (0600 from the start, so that no one can
    /// open it before its ACL is set), the ACL (or 0644 where the file system has none), the
    /// bytes, fsync, rename, fsync of the directory. True when it fell back to 0644.
    func write(uid: UInt32, bytes: [UInt8]) throws(DaemonError) -> Bool {
        let file = path(uid: uid)
        let temp = "\(directory)/.\(UserTable.fileName(uid: uid)).blockd-\(getpid())"
        unlink(temp)  // left by a crash: O_EXCL below must not fail on it
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .system("cannot create \(temp)", errno) }
        var failure: DaemonError?
        var everyone = false
        let access = UserTable.access(uid: uid, owner: geteuid())
        if fchmod(fd, mode_t(access.mode)) != 0 { failure = .system("cannot set the mode of \(temp)", errno) }
        if failure == nil, let acl = access.acl {
            let code = xattr.set(fd, ExtendedAttributes.accessACL, acl)
            if code == EOPNOTSUPP {
                everyone = true
                if fchmod(fd, mode_t(UserTable.access(uid: uid, owner: geteuid(), everyone: true).mode)) != 0 {
                    failure = .system("cannot set the mode of \(temp)", errno)
                }
            } else if code != 0 {
                failure = .system("cannot give uid \(uid) read access to \(temp) (POSIX ACL)", code)
            }
        }
        if failure == nil { do { try AtomicFile.writeAll(fd, bytes, path: temp) } catch { failure = error } }
        if failure == nil && fsync(fd) != 0 { failure = .system("cannot sync \(temp)", errno) }
        close(fd)
        if failure == nil && rename(temp, file) != 0 { failure = .system("cannot rename \(temp) to \(file)", errno) }
        if let failure {
            unlink(temp)
            throw failure
        }
        AtomicFile.syncDirectory(directory)
        return everyone
    }

    /// The directory, 0755 and ours, without a default ACL (its parent is created 0755 too, as
    /// /run/blockd is). The modes are set, not left to the umask: the NSS module reads the
    /// tables in every user's processes, and a strict umask (077) would hide them, lifting
    /// every per-user web block. A default ACL would give every new table entries of its own.
    func prepareDirectory() throws(DaemonError) {
        let parent = AtomicFile.directory(of: directory)
        for dir in [parent, directory] {
            if mkdir(dir, 0o755) == 0 {
                chmod(dir, 0o755)
            } else if errno != EEXIST {
                throw .system("cannot create \(dir)", errno)
            }
        }
        var st = stat()
        guard lstat(directory, &st) == 0 else { throw .system("cannot read \(directory)", errno) }
        guard st.st_mode & S_IFMT == S_IFDIR else {
            throw .system("\(directory) is not a directory; remove it and blockd creates the directory of per-user tables", ENOTDIR)
        }
        guard st.st_uid == geteuid() else {
            throw .system("\(directory) belongs to uid \(st.st_uid), and the NSS module trusts only root's; remove it and blockd creates it again", EPERM)
        }
        if st.st_mode & 0o7777 != 0o755, chmod(directory, 0o755) != 0 {
            throw .system("cannot make \(directory) mode 0755", errno)
        }
        let code = xattr.remove(directory, ExtendedAttributes.defaultACL)
        if code != 0 && code != ENODATA && code != EOPNOTSUPP {
            throw .system("cannot remove the default ACL of \(directory)", code)
        }
    }
}

/// The three xattr calls the tables need (the Swift Glibc module does not import
/// <sys/xattr.h>; the symbols are glibc's own, looked up once). Each returns 0 or an errno.
/// Tests replace them with `unsupported`, a file system without POSIX ACLs.
public struct ExtendedAttributes: Sendable {
    public var set: @Sendable (_ fd: Int32, _ name: String, _ value: [UInt8]) -> Int32
    public var get: @Sendable (_ path: String, _ name: String) -> Result<[UInt8], DaemonError>
    public var remove: @Sendable (_ path: String, _ name: String) -> Int32

    static let accessACL = "system.posix_acl_access"
    static let defaultACL = "system.posix_acl_default"

    public static let system: ExtendedAttributes = {
        typealias FSet = @convention(c) (Int32, UnsafePointer<CChar>, UnsafeRawPointer?, Int, Int32) -> Int32
        typealias LGet = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeMutableRawPointer?, Int) -> Int
        typealias LRemove = @convention(c) (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
        let libc = dlopen(nil, RTLD_NOW)
        let fset = dlsym(libc, "fsetxattr").map { unsafeBitCast($0, to: FSet.self) }
        let lget = dlsym(libc, "lgetxattr").map { unsafeBitCast($0, to: LGet.self) }
        let lremove = dlsym(libc, "lremovexattr").map { unsafeBitCast($0, to: LRemove.self) }
        return ExtendedAttributes(
            set: { fd, name, value in
                guard let fset else { return EOPNOTSUPP }
                return value.withUnsafeBytes { fset(fd, name, $0.baseAddress, $0.count, 0) } == 0 ? 0 : errno
            },
            get: { path, name in
                guard let lget else { return .failure(EOPNOTSUPP) }
                var buffer = [UInt8](repeating: 0, count: 256)
                let n = buffer.withUnsafeMutableBytes { lget(path, name, $0.baseAddress, $0.count) }
                return n >= 0 ? .success(Array(buffer.prefix(n))) : .failure(errno)
            },
            remove: { path, name in
                guard let lremove else { return EOPNOTSUPP }
                return lremove(path, name) == 0 ? 0 : errno
            })
    }()

    /// A file system without POSIX ACLs (ramfs, some FUSE and network file systems).
    public static let unsupported = ExtendedAttributes(set: { _, _, _ in EOPNOTSUPP },
                                                       get: { _, _ in .failure(EOPNOTSUPP) },
                                                       remove: { _, _ in EOPNOTSUPP })
}

extension Result where Success == [UInt8], Failure == DaemonError {
    /// An extended attribute's read that failed with `code` (ENODATA: none is set).
    static func failure(_ code: Int32) -> Self { .failure(.system("cannot read an extended attribute", code)) }

    /// Whether the read failed with `code`.
    func failed(with code: Int32) -> Bool {
        if case .failure(let e) = self { e.errno == code } else { false }
    }
}
