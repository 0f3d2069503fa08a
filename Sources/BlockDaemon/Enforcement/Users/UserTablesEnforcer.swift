import BlockCore
import CLinux
import Dispatch
import FoundationEssentials
import Glibc

/// Websites per user (U3): the domains of selections blocked for some users only go to those
/// users' tables (`UserTables`, in /run/blockd/users or `UserTablesDirectory=`), which
/// libnss_blockd.so.2 reads; the hosts file keeps the machine-wide ones, which also go to the
/// table `all` for the module to cover their subdomains (W1).
///
/// Like the hosts file (E1, S5), the tables are kept as written: a table removed, rewritten,
/// chmodded or given another ACL behind blockd's back is written again within a second
/// (inotify on the directory and its parent, the mount table's own notification for what
/// inotify cannot see, a mount over a table, and a check at every reconcile; nothing periodic
/// while nothing changes), and the repair is
/// journalled as tamper. A table that cannot be written (or put back) leaves its selections
/// not enforced (§7 "Truth"): the block is accepted, the engine is told, and the write
/// is retried, from 1 s to 60 s apart and whenever the directory changes, until it succeeds.
///
/// One blockd per table directory: the enforcer holds an flock(2) on the directory while it
/// keeps tables there, so a second blockd pointed at the same directory (a sandbox started
/// without `--user-tables-dir`) neither removes nor writes the first one's tables; it says
/// why instead. All state lives on `queue`.
public final class UserTablesEnforcer: Enforcer, @unchecked Sendable {
    public let mode = "nss"
    let tables: UserTables
    let log: any LogSink
    /// Where tamper repairs are reported (S5).
    let hits: ShieldHitSink
    /// Called on `queue` when a repair or a retry changed the outcome: the engine enforces
    /// again to learn the truth.
    let onChange: @Sendable () -> Void
    let queue = DispatchQueue(label: "blockd.usertables")
    /// Whether a table was ever written (or may be left from an earlier run): without per-user
    /// blocks and without tables there is nothing to do, not even the directory to create.
    var mayHoldTables: Bool
    /// uid → the bytes its table must hold.
    var expected: [UInt32: [UInt8]] = [:]
    /// What each table must say, kept per blocked selection (U3 at scale).
    var wanted = UserTableSet()
    /// uid → why its table was not as written when last looked at (the tables a selection
    /// rests on alone); a change looks again only at the tables it touched.
    var broken: [UInt32: String] = [:]
    /// Why the directory does not hold `expected` (nil: it does); retried until it does.
    var failure: String?
    /// The last write or check found no POSIX ACLs: every user can read every table.
    var readableByEveryone = false { didSet { notesVersion.bump() } }
    /// Bumped when `notes` changes (it is made of `readableByEveryone` and the directory).
    public let notesVersion = NotesVersion()
    var backoff: TimeInterval = UserTablesEnforcer.firstRetry
    var retry: DispatchWorkItem?
    var audit: DispatchWorkItem?
    var checkPending = false
    /// The flock(2)ed directory and its inode (a directory removed and made again is locked again).
    var lock: (fd: Int32, inode: ino_t)?
    /// Another blockd held the directory: this one never touches it again (a restart of the
    /// other must not find its tables gone).
    var yielded: String?
    var watch: Inotify?
    /// A mount over a table, which inotify cannot see, through the mount table's own news.
    var mounts: MountWatch?
    var watchedInode: ino_t = 0
    static let firstRetry: TimeInterval = 1, lastRetry: TimeInterval = 60, audit: TimeInterval = 10

    /// The name service switch file whose hosts: line must name `blockd`, and the directory
    /// the installed module reads (compiled into it; a test gives its own).
    let nsswitch: String, moduleDirectory: String

    /// Why no program reads the tables (nil: the installed module does), for the mode line.
    /// Read afresh each time: an administrator may put blockd on the hosts: line (or take it
    /// off) while blockd runs.
    public var off: String? { UserTablesEnforcer.unread(directory: tables.directory, module: moduleDirectory, nsswitch: nsswitch)?.why }

    public init(directory: String = UserTable.directory, log: any LogSink = StderrSink(), hits: @escaping ShieldHitSink = { _ in },
                onChange: @escaping @Sendable () -> Void = {}, xattr: ExtendedAttributes = .system,
                nsswitch: String = "/etc/nsswitch.conf", moduleDirectory: String = UserTable.directory) {
        tables = UserTables(directory: directory, xattr: xattr)
        self.log = log
        self.hits = hits
        self.onChange = onChange
        mayHoldTables = FileManager.default.fileExists(atPath: directory)
        self.nsswitch = nsswitch
        self.moduleDirectory = moduleDirectory
    }

    /// Why the NSS module does not read tables in `directory`: another directory than the one
    /// compiled into it (a sandbox, whose tables a test may mount there: `blocksNothing` is
    /// false), or `blockd` missing from the hosts: line (`blocksNothing`: no program on this
    /// machine asks the tables, so a per-user web block is not in force, §7 "Truth").
    static func unread(directory: String, module: String = UserTable.directory, nsswitch: String) -> (why: String, blocksNothing: Bool)? {
        guard directory == module else {
            return ("per-user tables go to \(directory), which the installed NSS module does not read", false)
        }
        let text = FileManager.default.contents(atPath: nsswitch).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let hosts = text.split(separator: "\n").first { $0.trimmed().hasPrefix("hosts:") }
        let sources = hosts.map { $0.split(separator: "#")[0].split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) } ?? []
        guard sources.contains("blockd") else {
            return ("blockd is not on the hosts: line of \(nsswitch), so no program asks blockd's tables: per-user web blocks are not in force, and machine-wide ones cover each name and its www. and m. forms but not the rest of the site (make install or the package puts it there)", true)
        }
        return nil
    }

    deinit {
        retry?.cancel()
        audit?.cancel()
        if let lock { close(lock.fd) }
    }

    public func enforce(blocked: [Selection]) -> EnforcementReport { enforce(blocked: blocked, changed: nil) }

    /// `changed`: the tables of those selections alone are rendered, compared and written;
    /// the others were kept as written by the watch (nil: every table is looked at).
    public func enforce(blocked: [Selection], changed: Set<String>?) -> EnforcementReport {
        queue.sync {
            let unread = UserTablesEnforcer.unread(directory: tables.directory, module: moduleDirectory, nsswitch: nsswitch)
            // The machine-wide table goes where something may read it: not where the module
            // reads this very directory but no program asks the module (a test's blockd on a
            // machine without the NSS line leaves /run/blockd alone).
            let touched = wanted.update(blocked: blocked, changed: changed, machineWide: unread?.blocksNothing != true)
            var report = EnforcementReport()
            // Truth (§7): a selection that rests on the tables is enforced when every one
            // of its tables is exactly as written, and something reads them. The machine-wide
            // table adds only the subdomains of blocks (W1), which the hosts file enforces.
            if let unread, unread.blocksNothing {
                let resting = wanted.allDependents
                for selection in blocked where resting.contains(selection.name) {
                    report.notEnforced(selection.name, selection.isAllowOnly ? "allow-only time is kept by the NSS module: \(unread.why)"
                                                                             : "its sites are not blocked for its users: \(unread.why)")
                }
            }
            guard mayHoldTables || !wanted.isEmpty else { return report }
            mayHoldTables = true
            // A reconcile checks too: a table still wanted as it was, but not as written, was
            // changed behind blockd's back (missed by the watch, or changed while it was down).
            var causes: [UInt32: String] = [:]
            var rewrite = Set<UInt32>()  // new bytes: written without reading the old ones first
            for uid in touched ?? Set(expected.keys).union(wanted.uids) {
                let bytes = wanted.wanted(uid).flatMap { try? UserTable.render(uid: uid, sorted: $0.names, allowOnly: $0.allowOnly, exceptions: $0.exceptions) }
                if let bytes, expected[uid]?.sameBytes(as: bytes) == true, let problem = tables.problem(uid: uid, bytes: bytes) { causes[uid] = problem }
                if let bytes, let old = expected[uid], !old.sameBytes(as: bytes) { rewrite.insert(uid) }
                expected[uid] = bytes
            }
            settle(converge(only: touched, rewrite: rewrite))
            if failure == nil { reportRepairs(causes) }
            if let failure { report.failures.append(EnforcementFailure(selection: nil, message: failure)) }
            if readableByEveryone { report.failures.append(EnforcementFailure(selection: nil, message: everyoneMessage)) }
            if touched == nil { broken = [:] }
            for (uid, names) in wanted.dependents.sorted(by: { $0.key < $1.key }) {
                guard let bytes = expected[uid] else { continue }
                if lock != nil && (touched?.contains(uid) ?? true) { broken[uid] = tables.problem(uid: uid, bytes: bytes) }
                guard let problem = lock == nil ? failure : broken[uid] else { continue }
                for selection in names {
                    report.notEnforced(selection, failure ?? "the table \(tables.path(uid: uid)) is not as blockd wrote it: \(problem)")
                }
            }
            follow()
            return report
        }
    }

    public func release() -> [EnforcementFailure] {
        queue.sync {
            expected = [:]
            wanted = UserTableSet()
            broken = [:]
            failure = nil
            follow()
            guard FileManager.default.fileExists(atPath: tables.directory) else { return [] }
            return converge(doing: "remove").map { [EnforcementFailure(selection: nil, message: $0)] } ?? []
        }
    }

    /// For `status`'s enforcement object: where the tables are, and who can read them.
    public func notes() -> JSONObject {
        queue.sync {
            var o: JSONObject = ["directory": .string(tables.directory), "readableBy": .string(readableByEveryone ? "everyone" : "their user")]
            if readableByEveryone { o["problem"] = .string(everyoneMessage) }
            return ["userTables": .object(o)]
        }
    }

    var everyoneMessage: String {
        "per-user tables readable by every user: the file system of \(tables.directory) has no POSIX ACLs, so anyone can read what is blocked for whom; put the directory on one that has them (tmpfs, ext4, xfs, btrfs) with UserTablesDirectory= or --user-tables-dir"
    }

    // MARK: Converging

    /// Takes the directory and makes it hold exactly `expected`. Returns why it cannot.
    func converge(doing verb: String = "write", only: Set<UInt32>? = nil, rewrite: Set<UInt32> = []) -> String? {
        dispatchPrecondition(condition: .onQueue(queue))
        if let yielded { return yielded }
        // The lock first where the directory exists: nothing of another blockd's is touched.
        var st = stat()
        if lstat(tables.directory, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, let busy = takeDirectory() { return busy }
        do throws(DaemonError) {
            try tables.prepareDirectory()
            if let busy = takeDirectory() { return busy }
            let changes = try tables.apply(rendered: expected, only: only, rewrite: rewrite)
            // Tables not looked at keep what was found of them (ACLs are the file system's).
            readableByEveryone = changes.readableByEveryone || (only != nil && readableByEveryone)
            return nil
        } catch {
            return "cannot \(verb) the per-user tables in \(tables.directory): \(error)" + (verb == "write" ? "; blockd retries until it can" : "")
        }
    }

    /// §7, one daemon per directory: an exclusive flock on the directory, kept. Nil when
    /// it is ours; else what to do (and this blockd leaves the directory alone from then on).
    func takeDirectory() -> String? {
        var st = stat()
        guard lstat(tables.directory, &st) == 0 else { return "cannot read \(tables.directory): \(String(cString: strerror(errno)))" }
        if let lock, lock.inode == st.st_ino { return nil }
        if let lock { close(lock.fd) }
        lock = nil
        let fd = open(tables.directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return "cannot open \(tables.directory): \(String(cString: strerror(errno)))" }
        let locked = flock(fd, LOCK_EX | LOCK_NB) == 0
        let code = errno
        if !locked && code == EWOULDBLOCK {
            close(fd)
            let busy = "another blockd keeps its per-user tables in \(tables.directory) (it holds the directory's lock), so this one leaves them alone and enforces no per-user web block; give it a directory of its own with --user-tables-dir DIR or UserTablesDirectory= and restart it"
            yielded = busy
            return busy
        }
        if !locked {
            // A file system or a sandbox without flock(2): the tables are kept, unguarded.
            log.notice("Cannot lock \(tables.directory) (\(String(cString: strerror(code)))); blockd keeps its per-user tables there without keeping a second blockd out")
        }
        lock = (fd, st.st_ino)
        return nil
    }

    /// Notes the outcome of an attempt; true when it changed (written at last, or a new cause).
    @discardableResult
    func settle(_ outcome: String?) -> Bool {
        guard let outcome else {
            guard failure != nil else { return false }
            failure = nil
            backoff = UserTablesEnforcer.firstRetry
            log.log(JournalEntry("Per-user tables in \(tables.directory) written again; \(expected.count) table\(expected.count == 1 ? "" : "s") in force", priority: .notice))
            return true
        }
        let changed = failure != outcome
        failure = outcome
        return changed
    }

    /// The journal's account of tables put back (S5): one line each with what was wrong, and a
    /// tamper hit for each selection that lost names.
    func reportRepairs(_ causes: [UInt32: String]) {
        var affected = Set<String>()
        for (uid, cause) in causes.sorted(by: { $0.key < $1.key }) {
            let (table, whose) = uid == UserTable.everyone ? ("machine-wide table", "the subdomains of machine-wide blocks are")
                : ("per-user table", "uid \(uid)'s web blocks are")
            log.notice("Repaired the \(table) \(tables.path(uid: uid)): \(cause) behind blockd's back; \(whose) in force again")
            for selection in wanted.owners(of: uid) where affected.insert(selection).inserted {
                hits(ShieldHit(kind: .tamper, selection: selection, path: tables.path(uid: uid)))
            }
        }
    }

    // MARK: Watching (E1's tamper repair, for the tables)

    /// What is not as written now: wanted tables with their problem, and tables of uids that
    /// should have none.
    func drift() -> (wrong: [UInt32: String], extra: [UInt32]) {
        var wrong: [UInt32: String] = [:]
        for (uid, bytes) in expected { if let p = tables.problem(uid: uid, bytes: bytes) { wrong[uid] = p } }
        let extra = ((try? tables.present()) ?? []).filter { expected[$0] == nil }
        return (wrong, extra)
    }

    /// Looks, repairs and reports; called after a burst of events, on the audit timer and on
    /// retries.
    func check() {
        dispatchPrecondition(condition: .onQueue(queue))
        checkPending = false
        guard mayHoldTables, yielded == nil, !expected.isEmpty || failure != nil else { return }
        let (wrong, extra) = lock == nil ? ([:], []) : drift()
        if failure == nil && wrong.isEmpty && extra.isEmpty {
            follow()
            return
        }
        let changed = settle(converge())
        if failure == nil {
            reportRepairs(wrong)
            for uid in extra { log.notice("Removed \(tables.path(uid: uid)), a per-user table blockd did not write") }
        }
        if changed || (failure != nil && !wrong.isEmpty) { onChange() }  // the engine learns the truth (T4)
        follow()
    }

    /// Watches the directory (and its parent, for the directory's own removal) while there is
    /// something to keep or a failure to retry, and arms the next check.
    func follow() {
        dispatchPrecondition(condition: .onQueue(queue))
        audit?.cancel()
        audit = nil
        guard yielded == nil, !expected.isEmpty || failure != nil else {
            retry?.cancel()
            retry = nil
            watch = nil
            mounts = nil
            watchedInode = 0
            return
        }
        var st = stat()
        let inode = lstat(tables.directory, &st) == 0 ? st.st_ino : 0
        if watch == nil || inode != watchedInode {
            watch = makeWatch()
            watchedInode = watch == nil ? 0 : inode
            // What happened between the write and this watch (a table removed in a directory
            // just made again) sent no event to it: look once more.
            if watch != nil { changed() }
        }
        if failure != nil {
            guard retry == nil else { return }  // one retry at a time, 1 s to 60 s apart
            let item = DispatchWorkItem { [weak self] in
                self?.retry = nil
                self?.check()
            }
            retry = item
            queue.asyncAfter(deadline: .now() + backoff, execute: item)
            backoff = min(backoff * 2, UserTablesEnforcer.lastRetry)
            return
        }
        retry?.cancel()
        retry = nil
        // With inotify and the mount table's news nothing wakes blockd while nothing changes (a
        // mount over a table is what inotify cannot see). Without inotify a check every second,
        // as the hosts file (E1); without the mount table's news, an audit every 10 s for it.
        if watch != nil && mounts == nil { mounts = MountWatch(queue: queue) { [weak self] in self?.changed() } }
        guard watch == nil || mounts == nil else { return }
        let item = DispatchWorkItem { [weak self] in self?.check() }
        audit = item
        queue.asyncAfter(deadline: .now() + (watch == nil ? UserTablesEnforcer.firstRetry : UserTablesEnforcer.audit), execute: item)
    }

    func makeWatch() -> Inotify? {
        guard let inotify = Inotify(queue: queue, onEvents: { [weak self] _ in self?.changed() }) else { return nil }
        // inotify(7): IN_MOVED_FROM 0x40, IN_DELETE_SELF 0x400, IN_MOVE_SELF 0x800.
        let entries = blockd_in_create() | blockd_in_moved_to() | blockd_in_delete() | blockd_in_attrib() | 0x40
        guard inotify.add(tables.directory, mask: entries | blockd_in_modify() | blockd_in_close_write() | 0x400 | 0x800) != nil,
              inotify.add(AtomicFile.directory(of: tables.directory), mask: entries) != nil else { return nil }
        return inotify
    }

    /// Coalesces a burst of events (a write, rename, chmod; blockd's own writes too, which
    /// the check finds in order) into one check.
    func changed() {
        guard !checkPending else { return }
        checkPending = true
        queue.asyncAfter(deadline: .now() + .milliseconds(100)) { [weak self] in self?.check() }
    }
}
