import BlockCore
import Glibc

/// Where the app shield finds desktop applications for allow-only windows (W2). Injectable,
/// so tests never read the machine's own files.
public struct DesktopDirs: Sendable {
    /// For everyone: `.desktop` files of installed applications.
    public var applications: [String]
    /// Session components started at login: what they name is never denied.
    public var autostart: [String]
    /// System-wide flatpak apps (`ID/current/active/…`).
    public var flatpakApps: String
    /// Relative to a user's home, for that user's processes only.
    public var userApplications: [String]
    public var userAutostart: [String]
    public var userFlatpakApps: String
    /// A user's home directory (their passwd entry).
    public var home: @Sendable (UInt32) -> String?

    public init(applications: [String], autostart: [String], flatpakApps: String, userApplications: [String],
                userAutostart: [String], userFlatpakApps: String, home: @escaping @Sendable (UInt32) -> String?) {
        (self.applications, self.autostart, self.flatpakApps) = (applications, autostart, flatpakApps)
        (self.userApplications, self.userAutostart, self.userFlatpakApps) = (userApplications, userAutostart, userFlatpakApps)
        self.home = home
    }

    public static let standard = DesktopDirs(
        applications: ["/usr/share/applications", "/usr/local/share/applications", "/var/lib/flatpak/exports/share/applications"],
        autostart: ["/etc/xdg/autostart"], flatpakApps: "/var/lib/flatpak/app",
        userApplications: [".local/share/applications", ".local/share/flatpak/exports/share/applications"],
        userAutostart: [".config/autostart"], userFlatpakApps: ".local/share/flatpak/app",
        home: DesktopDirs.passwdHome)

    /// The same under `root` (`PolicyRoot=`, a sandboxed blockd's own root): the system
    /// directories and the users' homes alike, so a sandbox never reads the machine's.
    public func under(_ root: String) -> DesktopDirs {
        let prefix = root.hasSuffix("/") ? String(root.dropLast()) : root
        guard !prefix.isEmpty else { return self }
        var d = self
        d.applications = applications.map { prefix + $0 }
        d.autostart = autostart.map { prefix + $0 }
        d.flatpakApps = prefix + flatpakApps
        d.home = { [home] uid in home(uid).map { prefix + $0 } }
        return d
    }

    static func passwdHome(_ uid: UInt32) -> String? {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(uid, &pw, &buf, buf.count, &result) == 0, result != nil, let dir = pw.pw_dir else { return nil }
        let home = String(cString: dir)
        return home.hasPrefix("/") && home != "/" ? home : nil
    }
}

/// W2: the desktop applications an allow-only selection denies, resolved to open executables.
/// Everything is read again at each apply (and when an applications directory changes).
///
/// A user's own files (under their home, read as root) only ever add targets for that user's
/// processes: no symlink is followed out of the directory, files are capped at
/// `DesktopEntry.maxBytes` and 2,000 per directory, and what does not parse is skipped. A user's
/// autostart entries spare only programs of that user's own desktop files: one copied there
/// cannot spare a system application.
struct DesktopApps {
    let dirs: DesktopDirs
    /// PATH as the daemon has it, plus the games directories desktop files rely on.
    let resolver: AppResolver

    init(dirs: DesktopDirs, path: String) {
        self.dirs = dirs
        resolver = AppResolver(path: path + ":/usr/local/games:/usr/games")
    }

    /// The targets of `selection` (an allow-only one): desktop applications but the allowed
    /// apps (`allowed`, by inode) and the never-targets, for its users (login users for a
    /// window for everyone). Each returned app holds an open descriptor for the caller.
    func targets(for selection: Selection, allowed: Set<FileID>) -> (apps: [ResolvedApp], dirs: Set<String>) {
        var watch = Set<String>()
        var spared = allowed.union(ids(DesktopLaunch.neverTargets.map(DesktopLaunch.program), flatpak: nil))
        spared.formUnion(ids(launches(in: dirs.autostart, home: nil, watch: &watch, autostart: true), flatpak: nil))
        var out: [ResolvedApp] = []
        func add(_ entries: [(DesktopEntry, DesktopLaunch)], scope: ShieldScope, spared: Set<FileID>, seen: inout Set<FileID>, userFlatpak: String?) {
            for (name, found) in resolved(entries, userFlatpak: userFlatpak, spared: spared, seen: &seen, watch: &watch) {
                var app = found
                app.target = ShieldTarget(selection: selection.name, path: app.target.path, app: name, users: scope)
                out.append(app)
            }
        }
        var system = Set<FileID>()
        let installed = launches(in: dirs.applications, home: nil, watch: &watch)
        guard let users = selection.users.map(Set.init) else {
            // A window for everyone: the system's applications, for login users. Users' own
            // directories are not read: every home would be opened at every apply, and homes on
            // network or automounted file systems would make an apply wait on them.
            add(installed, scope: .loginUsers, spared: spared, seen: &system, userFlatpak: nil)
            return (out, watch)
        }
        add(installed, scope: .users(users), spared: spared, seen: &system, userFlatpak: nil)
        for uid in users.sorted() {
            guard let home = dirs.home(uid) else { continue }
            let own = launches(in: dirs.userApplications, home: home, watch: &watch)
            let session = ids(launches(in: dirs.userAutostart, home: home, watch: &watch, autostart: true), flatpak: home)
            var seen = system
            add(own, scope: .users([uid]), spared: spared.union(session), seen: &seen, userFlatpak: home)
        }
        return (out, watch)
    }

    /// R1: every installed desktop application for everyone (the system's directories and
    /// system flatpaks; users' homes are not read, as for a window for everyone), each once by
    /// file, as its entry's name; session components and launchers (`neverTargets`) are no
    /// apps of anyone's. Each returned app holds an open descriptor for the caller. `dirs`: what
    /// to watch for installs and removals.
    func installed() -> (apps: [(name: String, app: ResolvedApp)], dirs: Set<String>) {
        var (watch, seen) = (Set<String>(), Set<FileID>())
        let apps = resolved(launches(in: dirs.applications, home: nil, watch: &watch), userFlatpak: nil, seen: &seen, watch: &watch)
        return (apps, watch)
    }

    /// Each of `entries` as an open executable with the name it goes by (its entry's `Name=`,
    /// else the file's), once by file (`seen`), none of `spared` and no never-target by name;
    /// the directories whose changes can change them go into `watch`.
    private func resolved(_ entries: [(DesktopEntry, DesktopLaunch)], userFlatpak: String?, spared: Set<FileID> = [],
                          seen: inout Set<FileID>, watch: inout Set<String>) -> [(name: String, app: ResolvedApp)] {
        var out: [(name: String, app: ResolvedApp)] = []
        for (entry, launch) in entries {
            guard let app = resolve(launch, userFlatpak: userFlatpak) else { continue }
            let base = Path.lastComponent(app.target.path)
            guard !spared.contains(app.id), !DesktopLaunch.neverTargets.contains(base), seen.insert(app.id).inserted else {
                close(app.fd)
                continue
            }
            watch.formUnion(app.watchDirs)
            out.append((entry.name ?? base, app))
        }
        return out
    }

    // MARK: - Reading

    /// The launches of the desktop applications (every `Type=Application` entry for autostart)
    /// in `paths` (under `home` when given, confined to it), with their entries.
    private func launches(in paths: [String], home: String?, watch: inout Set<String>, autostart: Bool = false) -> [(DesktopEntry, DesktopLaunch)] {
        var out: [(DesktopEntry, DesktopLaunch)] = []
        for path in paths {
            let fd = home.map { DesktopFiles.openConfined($0, path) } ?? open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            watch.insert(home.map { $0 + "/" + path } ?? path)
            for text in DesktopFiles.read(fd, depth: 2) {
                guard let entry = DesktopEntry.parse(text) else { continue }
                guard autostart ? entry.type == "Application" : entry.isDesktopApplication else { continue }
                out += entry.launches.map { (entry, $0) }
            }
        }
        return out
    }

    /// The inodes of `launches`, for sparing them.
    private func ids(_ launches: [DesktopLaunch], flatpak home: String?) -> Set<FileID> {
        Set(launches.compactMap { launch in
            resolve(launch, userFlatpak: home).map { app in
                close(app.fd)
                return app.id
            }
        })
    }

    private func ids(_ entries: [(DesktopEntry, DesktopLaunch)], flatpak home: String?) -> Set<FileID> {
        ids(entries.map(\.1), flatpak: home)
    }

    /// A launch as an open executable; nil when it is not installed or not acceptable.
    private func resolve(_ launch: DesktopLaunch, userFlatpak home: String?) -> ResolvedApp? {
        switch launch {
        case .program(let program):
            if case .found(let app) = resolver.resolve(program, selection: "") { return app }
            return nil
        case .flatpak(let id, let command):
            // The user's own installation first, reached without a link and confined to its app
            // directory; then the system's.
            if let home, DesktopFiles.isConfined(home, dirs.userFlatpakApps + "/" + id),
               let app = flatpak(id, command, root: home + "/" + dirs.userFlatpakApps, confined: true) { return app }
            return flatpak(id, command, root: dirs.flatpakApps, confined: false)
        }
    }

    /// `ROOT/ID/current/active/files/CMD`, the command from `--command=` or the app's metadata.
    private func flatpak(_ id: String, _ command: String?, root: String, confined: Bool) -> ResolvedApp? {
        let appDir = root + "/" + id
        guard let realApp = AppResolver.realpath(appDir) else { return nil }
        let active = appDir + "/current/active"
        func inside(_ path: String) -> String? {
            guard let real = AppResolver.realpath(path) else { return nil }
            return !confined || real.hasPrefix(realApp + "/") ? real : nil
        }
        guard let cmd = command ?? inside(active + "/metadata").flatMap(DesktopFiles.readSmall).flatMap({ DesktopLaunch.flatpakCommand(metadata: $0) }),
              let file = DesktopLaunch.flatpakFile(command: cmd), let real = inside(active + "/files/" + file),
              case .found(let app) = resolver.resolve(real, selection: "") else { return nil }
        return app
    }
}

extension AppShield {
    /// Raises the soft limit on open descriptors to the hard one: each blocked file holds one
    /// (its mark), and an allow-only window for everyone blocks every desktop application, more
    /// than systemd's default soft limit of 1,024 leaves room for on a large desktop. A file
    /// that cannot be opened would otherwise count as not installed.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// Reading desktop files without trusting the directory they are in.
enum DesktopFiles {
    static let maxFiles = 2_000

    /// `relative` under `base`, each component opened without following a symlink; -1 when
    /// any is missing, not a directory, or a link.
    static func openConfined(_ base: String, _ relative: String) -> Int32 {
        var fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        for part in relative.split(separator: "/") where fd >= 0 {
            let next = openat(fd, String(part), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            close(fd)
            fd = next
        }
        return fd
    }

    /// Whether `relative` under `base` is a directory reached without a link.
    static func isConfined(_ base: String, _ relative: String) -> Bool {
        let fd = openConfined(base, relative)
        if fd >= 0 { close(fd) }
        return fd >= 0
    }

    /// The texts of the `.desktop` files in the directory `fd` (closed here) and its
    /// subdirectories down to `depth`: regular files only, none through a link, none larger
    /// than `DesktopEntry.maxBytes`, at most `maxFiles`.
    static func read(_ fd: Int32, depth: Int) -> [String] {
        var texts: [String] = []
        var pending = [(fd, depth)]
        var budget = maxFiles
        while let (dirfd, level) = pending.popLast() {
            defer { close(dirfd) }
            let copy = dup(dirfd)
            guard copy >= 0, let dir = fdopendir(copy) else {
                if copy >= 0 { close(copy) }
                continue
            }
            var names: [(String, UInt8)] = []
            while let entry = readdir(dir), names.count < budget {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { names.append((name, entry.pointee.d_type)) }
            }
            closedir(dir)
            for (name, type) in names.sorted(by: { $0.0 < $1.0 }) where budget > 0 {
                if type == UInt8(DT_DIR), level > 1 {
                    let sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    if sub >= 0 { pending.append((sub, level - 1)) }
                } else if name.hasSuffix(".desktop") {
                    budget -= 1
                    let file = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                    if file >= 0, let text = readSmall(fd: file) { texts.append(text) }
                }
            }
        }
        return texts
    }

    /// A small regular file's text, not through a final link; nil when larger than the cap.
    static func readSmall(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        return fd >= 0 ? readSmall(fd: fd) : nil
    }

    /// Reads and closes `fd`.
    static func readSmall(fd: Int32) -> String? {
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size <= DesktopEntry.maxBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: DesktopEntry.maxBytes + 1)
        var total = 0
        while total < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            total += n
        }
        guard total <= DesktopEntry.maxBytes else { return nil }
        return String(decoding: bytes[0..<total], as: UTF8.self)
    }
}
