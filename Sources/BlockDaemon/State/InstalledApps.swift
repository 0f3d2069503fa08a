import BlockCore
import FoundationEssentials
import Glibc

/// §7, E2: the `Apps=` entries of the configured selections looked up as the app shield looks
/// them up (a bare name in each PATH directory, an absolute path as it is), for the warnings
/// `--check-config`, the start and each reload give for an app that is not installed.
/// Where it looks is injectable, so tests use temporary directories, never what this machine
/// has installed.
public struct InstalledApps: Sendable {
    /// PATH, as the app shield has it.
    public var path: String
    /// Where the desktop entries of installed applications are, for "did you mean".
    public var applications: [String]

    public init(path: String, applications: [String]) {
        (self.path, self.applications) = (path, applications)
    }

    /// What the daemon uses: its own PATH, and the applications directories under `PolicyRoot=`
    /// (a sandboxed blockd's own root), as the app shield reads them.
    public static func standard(policyRoot: String) -> InstalledApps {
        InstalledApps(path: AppResolver.environmentPATH, applications: DesktopDirs.standard.under(policyRoot).applications)
    }

    /// A warning for each `Apps=` entry of `selectionFiles` that is not installed, with what
    /// was probably meant. The directories are listed only when some entry is missing.
    public func warnings(_ selectionFiles: [ConfigSource]) -> [ConfigProblem] {
        let entries = AppCheck.entries(selectionFiles)
        guard !entries.isEmpty else { return [] }
        let dirs = AppResolver(path: path).searchDirs
        var nearby: AppCheck.Nearby?
        var out: [ConfigProblem] = []
        for entry in entries {
            let finding = find(entry.app, in: dirs)
            guard finding != .installed else { continue }
            if nearby == nil { nearby = look(dirs) }
            var around = nearby!
            around.siblings = entry.app.hasPrefix("/") ? InstalledApps.names(in: AppResolver.parent(entry.app)) : []
            if let warning = AppCheck.warning(entry, finding, nearby: around) { out.append(warning) }
        }
        return out
    }

    /// Whether the app shield would find `app`: an executable regular file (through links).
    func find(_ app: String, in dirs: [String]) -> AppCheck.Finding {
        guard app.hasPrefix("/") else {
            return dirs.contains { AppResolver.isExecutableFile($0 + "/" + app) } ? .installed : .notOnPath
        }
        var st = stat()
        guard stat(app, &st) == 0 else { return .noFile }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH) != 0 ? .installed : .notExecutable("a file no one may execute")
        case S_IFDIR: return .notExecutable("a directory")
        default: return .notExecutable("not a regular file")
        }
    }

    /// The executables on PATH and the desktop applications whose programs the app shield
    /// would find.
    func look(_ dirs: [String]) -> AppCheck.Nearby {
        var seen = Set<String>()
        var executables: [String] = []
        for dir in dirs {
            for name in InstalledApps.names(in: dir) where !seen.contains(name) && AppResolver.isExecutableFile(dir + "/" + name) {
                seen.insert(name)
                executables.append(name)
            }
        }
        var desktop: [AppCheck.DesktopApp] = []
        for dir in applications {
            for file in InstalledApps.names(in: dir).filter({ $0.hasSuffix(".desktop") }).prefix(DesktopFiles.maxFiles) {
                guard let text = DesktopFiles.readSmall(dir + "/" + file), let entry = DesktopEntry.parse(text), entry.isDesktopApplication,
                      case .program(let program)? = entry.launches.first,
                      program.hasPrefix("/") ? AppResolver.isExecutableFile(program) : seen.contains(program) else { continue }
                desktop.append(AppCheck.DesktopApp(file: file, name: entry.name, program: program))
            }
        }
        return AppCheck.Nearby(executables: executables, desktop: desktop)
    }

    /// The names in `dir`, sorted; none when it cannot be listed.
    static func names(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }
}
