import BlockCore
import Foundation
import Glibc

/// The per-user tables under /run/blockd/users that libnss_blockd.so.2 reads (U3): one file
/// per uid (`UserTable`), each replaced atomically and only when its bytes change, so that a
/// lookup in any process sees the old table or the new one, never half of one. The engine
/// has no per-user scope yet; this is the writer it will call with the desired tables.
///
/// The module trusts a table only when it and the directory are owned by root and writable
/// by no one else: the directory is made 0755 and each table 0644, and a directory someone
/// else owns is refused with what to do, instead of being used.
public struct UserTables {
    public let directory: String

    public init(directory: String = UserTable.directory) {
        self.directory = directory
    }

    /// What an `apply` changed, by uid.
    public struct Changes: Equatable {
        public var written: [UInt32] = []
        public var removed: [UInt32] = []
    }

    /// Makes the directory hold exactly `tables` (uid → the names blocked for that uid): a
    /// table whose bytes differ is replaced, a uid with no names loses its table, and a table
    /// of a uid not in `tables` is removed. Files that are not named by a uid are left alone.
    /// Stops at the first failure, whose message says what to do; applying again retries.
    @discardableResult
    public func apply(_ tables: [UInt32: [String]]) throws(AtomicFile.Failure) -> Changes {
        try prepareDirectory()
        var changes = Changes()
        for uid in tables.keys.sorted() {
            guard let domains = tables[uid], !domains.isEmpty else { continue }
            let bytes: [UInt8]
            do { bytes = try UserTable.render(uid: uid, domains: domains) } catch {
                throw .system("cannot write the table of uid \(uid): \(error.message)", EINVAL)
            }
            let path = "\(directory)/\(UserTable.fileName(uid: uid))"
            if FileManager.default.contents(atPath: path).map(Array.init) == bytes { continue }
            try AtomicFile.write(Data(bytes), to: path, mode: 0o644)
            changes.written.append(uid)
        }
        for uid in try present() where (tables[uid] ?? []).isEmpty {
            let path = "\(directory)/\(UserTable.fileName(uid: uid))"
            guard unlink(path) == 0 || errno == ENOENT else { throw .system("cannot remove \(path)", errno) }
            changes.removed.append(uid)
        }
        if !changes.removed.isEmpty { AtomicFile.syncDirectory(directory) }
        return changes
    }

    /// The uids that have a table now.
    public func present() throws(AtomicFile.Failure) -> [UInt32] {
        guard let dir = opendir(directory) else { throw .system("cannot read \(directory)", errno) }
        defer { closedir(dir) }
        var uids: [UInt32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let uid = UInt32(name), UserTable.fileName(uid: uid) == name { uids.append(uid) }
        }
        return uids.sorted()
    }

    /// The directory, 0755 and ours (its parent is created 0755 too, as /run/blockd is). The
    /// modes are set, not left to the umask: the NSS module reads the tables in every user's
    /// processes, and a strict umask (077) would hide them, lifting every per-user web block.
    func prepareDirectory() throws(AtomicFile.Failure) {
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
    }
}
