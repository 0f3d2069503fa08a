import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Reads `blockd.conf`, `selections.d/`, `schedules.d/`, `limits.d/` and `users.d/` (§7) from one
/// directory, or layered as systemd layers unit files: vendor files in `/usr/lib/blockd`,
/// runtime ones in `/run/blockd`, the administrator's in `/etc/blockd`. A file of the same name
/// in a later layer replaces the earlier one; files of different names merge, in the order of
/// their names; an empty file or a symlink to `/dev/null` masks the one it replaces (and is
/// itself nothing). A missing file or directory is fine (built-in defaults); an unreadable one
/// is an error that names it.
public struct ConfigDirectory: Sendable {
    /// The directories read, lowest precedence first.
    public let layers: [String]
    /// The administrator's directory, the last layer.
    public var path: String { layers[layers.count - 1] }

    /// Where the `Apps=` entries are looked up for the not-installed warnings (§7); nil: as the
    /// app shield looks, under the configuration's `PolicyRoot=`.
    public var apps: InstalledApps?

    public init(_ path: String, apps: InstalledApps? = nil) {
        layers = [path]
        self.apps = apps
    }
    public init(layers: [String]) {
        precondition(!layers.isEmpty, "a configuration needs a directory")
        self.layers = layers
    }

    /// Vendor, runtime, administrator: what blockd reads without `--config-dir`.
    public static let standardLayers = ["/usr/lib/blockd", "/run/blockd", "/etc/blockd"]

    public static let kinds = ["selections.d", "schedules.d", "limits.d", "users.d"]

    /// The `blockd.conf` in force: the last layer's that exists, else the administrator's path.
    public var daemonFile: String {
        layers.reversed().map { $0 + "/blockd.conf" }.first { exists($0) } ?? path + "/blockd.conf"
    }

    /// The configuration, all or nothing (§7): any error refuses it, naming the first and how
    /// many more there are. What only deserves a warning (an app that is not installed) is in
    /// the set's `warnings`, for the journal.
    public func load(flags: DaemonConfig.Layer = .init()) throws(CoreError) -> ConfigSet {
        var (set, problems) = check(flags: flags)
        if let error = problems.loadError { throw error }
        set.warnings = problems.warnings
        return set
    }

    /// The files in force after layering and masking, and what could not be read.
    struct Files {
        var daemon: ConfigSource?
        var kinds: [String: [ConfigSource]] = [:]
        /// Every file that counts, masks included, with what it does (for `--cat-config`).
        var shown: [(path: String, masked: Bool, overrides: [String])] = []
    }

    func gather(problems: inout [CoreError]) -> Files {
        var files = Files()
        for kind in [""] + ConfigDirectory.kinds {
            var winners: [String: [String]] = [:]  // name -> every path of that name, lowest layer first
            for layer in layers {
                let dir = kind.isEmpty ? layer : layer + "/" + kind
                let names: [String]
                if kind.isEmpty {
                    names = exists(dir + "/blockd.conf") ? ["blockd.conf"] : []
                } else {
                    do throws(CoreError) { names = try confNames(in: dir) } catch {
                        problems.append(error)
                        continue
                    }
                }
                for name in names { winners[name, default: []].append(dir + "/" + name) }
            }
            var sources: [ConfigSource] = []
            for name in winners.keys.sorted() {
                let paths = winners[name]!
                let top = paths[paths.count - 1]
                let masked = ConfigDirectory.isMask(top)
                files.shown.append((top, masked, Array(paths.dropLast())))
                guard !masked else { continue }
                do throws(CoreError) { if let source = try read(top) { sources.append(source) } } catch { problems.append(error) }
            }
            if kind.isEmpty { files.daemon = sources.first } else { files.kinds[kind] = sources }
        }
        return files
    }

    /// An empty file, or a symlink to /dev/null: it masks the file of its name in earlier layers.
    /// A symlink that reaches /dev/null another way (`../../dev/null`, a chain) masks too, as
    /// systemd's masks do; any other device is no mask, and `read` refuses it.
    static func isMask(_ path: String) -> Bool {
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == "/dev/null" { return true }
        var st = stat(), null = stat()
        guard stat(path, &st) == 0 else { return false }
        if (st.st_mode & S_IFMT) == S_IFCHR { return stat("/dev/null", &null) == 0 && (null.st_mode & S_IFMT) == S_IFCHR && st.st_rdev == null.st_rdev }
        return (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0
    }

    /// `blockd --cat-config`: every file in force, in the order blockd reads them, each after a
    /// `# PATH` line, as `systemd-analyze cat-config` shows a unit's; a mask and what a file
    /// replaces are said on that line. Then the `[Daemon]` settings in force, each with its
    /// file and line, flag or default (F1: the merged view).
    public func catConfig(flags: DaemonConfig.Layer = .init()) -> (text: String, problems: [CoreError]) {
        var problems: [CoreError] = []
        let files = gather(problems: &problems)
        var out: [String] = ["# blockd reads, in this order: \(layers.joined(separator: ", ")) (a later file of the same name replaces an earlier one)"]
        for shown in files.shown {
            let replaces = shown.overrides.isEmpty ? "" : " (replaces \(shown.overrides.joined(separator: ", ")))"
            if shown.masked {
                out.append("\n# \(shown.path): masked\(replaces)")
                continue
            }
            out.append("\n# \(shown.path)\(replaces)")
            if let text = (try? read(shown.path))??.text { out.append(text.hasSuffix("\n") ? String(text.dropLast()) : text) }
        }
        if files.shown.isEmpty { out.append("\n# no configuration files: built-in defaults") }
        out.append(contentsOf: daemonInForce(files.daemon, flags: flags))
        return (out.joined(separator: "\n") + "\n", problems)
    }

    /// The merged `[Daemon]` settings, each with where its value comes from: a file and line, a
    /// flag, or the built-in default (systemd-analyze cat-config shows files; this adds the
    /// values they give). A blockd.conf that does not parse says so instead.
    func daemonInForce(_ source: ConfigSource?, flags: DaemonConfig.Layer) -> [String] {
        var config = DaemonConfig.defaults
        var lines: [String: Int] = [:]
        if let source {
            do throws(CoreError) { config = try DaemonConfig.parse(file: source.path, text: source.text) } catch {
                return ["\n# [Daemon] in force: not shown, \(error.message)"]
            }
            lines = DaemonConfig.assignedLines(text: source.text, file: source.path)
        }
        let flagged = config.applying(flags)
        let width = flagged.settings.map { $0.key.count + $0.value.count + 1 }.max() ?? 0
        var out = ["\n# [Daemon] in force, each value with where it comes from"]
        for ((key, value), (_, before)) in zip(flagged.settings, config.settings) {
            let from = value != before ? "a flag" : lines[key].map { "\(source!.path):\($0)" } ?? "default"
            let text = "\(key)=\(value)"
            out.append(text + String(repeating: " ", count: max(1, width + 2 - text.count)) + "# \(from)")
        }
        return out
    }

    /// `blockd --check-config`: every problem in the directory, unreadable files included, each
    /// once with its file and line, in the order the files are read, errors and warnings alike,
    /// and
    /// with `candidate` (a file about to be installed, such as Ansible's `validate: blockd
    /// --check-config %s`) checked as part of it: put in by its section (`[Daemon]`,
    /// `[Selection]`, `[Schedule]`, `[Limit]`) in place of the file that defines the same name,
    /// a `[Users]` file in place of the file of its name.
    public func check(flags: DaemonConfig.Layer = .init(), candidate: ConfigSource? = nil) -> (ConfigSet, [ConfigProblem]) {
        var unreadable: [CoreError] = []
        let files = gather(problems: &unreadable)
        var problems = unreadable.map { ConfigProblem($0) }
        var daemon = files.daemon
        var kinds: [String: [ConfigSource]] = [:]
        for kind in ["selections", "schedules", "limits", "users"] { kinds[kind] = files.kinds[kind + ".d"] ?? [] }
        if let candidate {
            switch ConfigDirectory.section(of: candidate.text) {
            case "Daemon": daemon = candidate
            case "Selection":
                kinds["selections"] = ConfigDirectory.replacing(kinds["selections"] ?? [], with: candidate) {
                    (try? ConfigFiles.parseSelection(file: $0.path, text: $0.text))?.name.lowercased()
                }
            case "Schedule":
                kinds["schedules"] = ConfigDirectory.replacing(kinds["schedules"] ?? [], with: candidate) {
                    (try? ConfigFiles.parseSchedule(file: $0.path, text: $0.text))?.name
                }
            case "Limit":
                kinds["limits"] = ConfigDirectory.replacing(kinds["limits"] ?? [], with: candidate) {
                    (try? ConfigFiles.parseLimit(file: $0.path, text: $0.text))?.name
                }
            case ConfigFiles.usersSection:
                kinds["users"] = ConfigDirectory.replacing(kinds["users"] ?? [], with: candidate) { Path.lastComponent($0.path) }
            default:
                problems.append(ConfigProblem(file: candidate.path, line: nil, "has no [Daemon], [Selection], [Schedule], [Limit] or [Users] section, so it is none of blockd's files"))
            }
        }
        let (set, more) = ConfigSet.assemble(daemonFile: daemon, selectionFiles: kinds["selections"] ?? [],
                                             scheduleFiles: kinds["schedules"] ?? [], limitFiles: kinds["limits"] ?? [],
                                             userFiles: kinds["users"] ?? [], flags: flags)
        let apps = self.apps ?? .standard(policyRoot: set.daemon.policyRoot)
        let order = ConfigSet.order(daemonFile: daemon, selectionFiles: kinds["selections"] ?? [], scheduleFiles: kinds["schedules"] ?? [],
                                    limitFiles: kinds["limits"] ?? [], userFiles: kinds["users"] ?? [])
        return (set, problems + (more + apps.warnings(kinds["selections"] ?? [])).inFileOrder(order))
    }

    /// The first `[Section]` of an INI text.
    static func section(of text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) {
            let t = line.trimmed()
            if t.hasPrefix("[") && t.hasSuffix("]") { return String(t.dropFirst().dropLast()).trimmed() }
        }
        return nil
    }

    /// `sources` with `candidate` added, and any that defines the name it defines left out.
    static func replacing(_ sources: [ConfigSource], with candidate: ConfigSource, name: (ConfigSource) -> String?) -> [ConfigSource] {
        let replaced = name(candidate)
        return sources.filter { $0.path != candidate.path && (replaced == nil || name($0) != replaced) } + [candidate]
    }

    /// A file given on the command line, read as the directory's files are.
    public static func source(_ file: String) throws(CoreError) -> ConfigSource {
        guard let source = try ConfigDirectory("/").read(file) else {
            throw CoreError(.invalidConfig, "\(file): does not exist")
        }
        return source
    }

    /// A file of the directory, or nil when there is none by that name. A name that is there
    /// but cannot be read (a symlink loop, a symlink to nothing, a directory, a FIFO, no
    /// permission) is an error naming it, never "no file": a file of that name replaces or
    /// masks the one of earlier layers, so reading it as absent would drop what it was meant to
    /// hold, and a reload would lift that file's schedule (§7). A FIFO is
    /// refused by its type, never opened for reading, so a check cannot hang on it.
    private func read(_ file: String) throws(CoreError) -> ConfigSource? {
        var st = stat()
        guard lstat(file, &st) == 0 else {
            let code = errno
            if code == ENOENT { return nil }  // gone since the directory was listed
            throw ConfigDirectory.unreadable(file, errno: code)
        }
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw ConfigDirectory.unreadable(file, errno: errno) }
        defer { close(fd) }
        guard fstat(fd, &st) == 0 else { throw ConfigDirectory.unreadable(file, errno: errno) }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw ConfigDirectory.unreadable(file, errno: EISDIR)
        case S_IFIFO: throw ConfigDirectory.unreadable(file, why: "it is a FIFO, not a regular file")
        default: throw ConfigDirectory.unreadable(file, why: "it is not a regular file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes += chunk[..<n]
            } else if n == 0 {
                break
            } else if errno != EINTR {
                throw ConfigDirectory.unreadable(file, errno: errno)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CoreError(.invalidConfig, "\(file): is not UTF-8 text")
        }
        return ConfigSource(path: file, text: text)
    }

    /// "PATH: cannot be read: WHY; what to do", for a file or directory that is there but
    /// cannot be read: the errno's text, where a symlink points, and the fix.
    static func unreadable(_ path: String, errno code: Int32, directory: Bool = false) -> CoreError {
        var why = String(cString: strerror(code))
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
            why += code == ELOOP ? " (a symlink loop: it points to \(target))" : " (it is a symlink to \(target))"
        }
        return unreadable(path, why: why, permissions: code == EACCES || code == EPERM, directory: directory)
    }

    static func unreadable(_ path: String, why: String, permissions: Bool = false, directory: Bool = false) -> CoreError {
        let fix = permissions ? "check its permissions (blockd reads it as root)"
            : directory ? "make it a directory or a symlink to one, or remove it"
            : "make it a regular file, a symlink to one, or a symlink to /dev/null to mask the file of its name, or remove it"
        return CoreError(.invalidConfig, "\(path): cannot be read: \(why); \(fix)")
    }

    /// The `*.conf` names in `dir` (other files, such as editor backups and `.dpkg-old`, are
    /// skipped); none when it does not exist. A directory that is there but cannot be listed
    /// (a dangling symlink, no permission) is an error, as an unreadable file is.
    private func confNames(in dir: String) throws(CoreError) -> [String] {
        var st = stat()
        guard lstat(dir, &st) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return [] }
            throw ConfigDirectory.unreadable(dir, errno: code, directory: true)
        }
        guard stat(dir, &st) == 0 else { throw ConfigDirectory.unreadable(dir, errno: errno, directory: true) }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw CoreError(.invalidConfig, "\(dir): is not a directory") }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".conf") && !$0.hasPrefix(".") }
        } catch {
            throw CoreError(.invalidConfig, "\(dir): cannot be listed; check its permissions")
        }
    }

    private func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }
}
