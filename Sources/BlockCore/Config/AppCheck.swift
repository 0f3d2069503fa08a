/// §7, E2: an app a configured selection names that this machine does not have. A warning,
/// never an error: the configuration loads all the same, and the app is blocked once it is
/// installed (the app shield watches where it would appear). Pure: the daemon looks each
/// entry up as the app shield would and says what it found; this says what is wrong and what
/// was probably meant.
public enum AppCheck {
    /// One `Apps=` word in force in a selection file, with the line it is written on.
    public struct Entry: Equatable, Sendable {
        public var file: String
        public var line: Int
        public var app: String

        public init(file: String, line: Int, app: String) {
            (self.file, self.line, self.app) = (file, line, app)
        }
    }

    /// What the daemon found for an entry, looked up as the app shield looks it up (E2).
    public enum Finding: Equatable, Sendable {
        case installed
        /// A bare name with no executable of that name in any PATH directory.
        case notOnPath
        /// An absolute path to nothing.
        case noFile
        /// An absolute path to something that is not an executable file: why ("a directory").
        case notExecutable(String)
    }

    /// A desktop application, for "did you mean": its entry's file name, its `Name=`, and the
    /// program it starts, as `Apps=` would name it (a name on PATH or an absolute path).
    public struct DesktopApp: Equatable, Sendable {
        public var file: String
        public var name: String?
        public var program: String

        public init(file: String, name: String?, program: String) {
            (self.file, self.name, self.program) = (file, name, program)
        }
    }

    /// What the machine has, to say what was probably meant.
    public struct Nearby: Equatable, Sendable {
        /// The names of the executables on PATH, in PATH order.
        public var executables: [String]
        /// The desktop applications installed.
        public var desktop: [DesktopApp]
        /// For an absolute path: the names in its directory (none when there is no directory).
        public var siblings: [String]

        public init(executables: [String] = [], desktop: [DesktopApp] = [], siblings: [String] = []) {
            (self.executables, self.desktop, self.siblings) = (executables, desktop, siblings)
        }
    }

    /// Every `Apps=` word in force in `sources` (selection files), once per file, with the line
    /// it is last written on; words the selection reader refuses are left to it.
    public static func entries(_ sources: [ConfigSource]) -> [Entry] {
        sources.flatMap { source in
            let reader = ConfigReader(file: source.path, what: "a selection file")
            var seen: [String: Int] = [:]
            var order: [String] = []
            for (word, line) in ConfigSet.listed("Apps", section: ConfigFiles.selectionSection, in: source) {
                guard (try? reader.app(word, INIEntry(key: "Apps", value: word, line: line))) != nil else { continue }
                if seen[word] == nil { order.append(word) }
                seen[word] = line
            }
            return order.map { Entry(file: source.path, line: seen[$0]!, app: $0) }
        }
    }

    /// The warning for `entry`, or nil when it is installed.
    public static func warning(_ entry: Entry, _ finding: Finding, nearby: Nearby) -> ConfigProblem? {
        let app = entry.app
        let what: String
        switch finding {
        case .installed:
            return nil
        case .notOnPath:
            let lower = app.lowercased()
            if let same = nearby.desktop.first(where: { $0.program != app && (stem($0.file).lowercased() == lower || $0.name?.lowercased() == lower) }) {
                what = "no executable '\(app)' is on PATH, but the desktop entry \(same.file) starts \(same.program); write Apps=\(same.program) to block it"
            } else {
                what = "no app '\(app)' is installed (no desktop entry, no executable on PATH)" + (meant(app, nearby) ?? laterHint)
            }
        case .noFile:
            let dir = parent(app)
            let sibling = Suggestion.nearest(to: leaf(app), among: nearby.siblings).map { "; did you mean '\(dir == "/" ? "" : dir)/\($0)'?" }
            what = "no app is installed at \(app) (no such file)" + (sibling ?? meant(leaf(app), nearby) ?? laterHint)
        case .notExecutable(let why):
            what = "\(app) is \(why), not an executable file; Apps= takes the path of an executable, or its name on PATH"
        }
        return ConfigProblem(.warning, file: entry.file, line: entry.line, what)
    }

    static let laterHint = "; check the name, or keep it if the app is still to be installed: it is blocked once it is"

    /// "; did you mean 'X'?" for an executable on PATH or a desktop application near `word`
    /// (by its file name or `Name=`), naming what `Apps=` would take.
    static func meant(_ word: String, _ nearby: Nearby) -> String? {
        var keys: [String] = []
        var says: [String: String] = [:]
        func add(_ key: String, _ text: String) {
            guard says[key.lowercased()] == nil else { return }
            keys.append(key)
            says[key.lowercased()] = text
        }
        for name in nearby.executables { add(name, "'\(name)'") }
        for app in nearby.desktop {
            let text = app.program.hasPrefix("/") ? "'\(app.program)' (what \(app.file) starts)" : "'\(app.program)'"
            add(stem(app.file), text)
            if let name = app.name { add(name, text) }
        }
        return Suggestion.nearest(to: word, among: keys).map { "; did you mean \(says[$0.lowercased()]!)?" }
    }

    static func stem(_ file: String) -> String {
        file.hasSuffix(".desktop") ? String(file.dropLast(".desktop".count)) : file
    }

    static func leaf(_ path: String) -> String { Path.lastComponent(path) }

    static func parent(_ path: String) -> String {
        let dir = Path.parent(path)
        return dir.isEmpty ? "/" : dir
    }
}
