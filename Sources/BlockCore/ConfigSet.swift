/// One file's path and contents, as the daemon read them.
public struct ConfigSource: Hashable, Sendable {
    public var path: String
    public var text: String
    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}

/// A whole configuration, checked as one: `blockd.conf`, `selections.d/*.conf` and
/// `schedules.d/*.conf` (DESIGN §7). Built all-or-nothing so that a reload that fails keeps
/// the old configuration in full (never half of a new one).
public struct ConfigSet: Sendable {
    public var daemon: DaemonConfig
    public var catalog: Catalog
    /// Declarative schedules, sorted by file; they count toward the cap (T4).
    public var schedules: [Schedule]
    /// Declarative daily limits (§9), sorted by file; they count toward the cap too.
    public var limits: [Limit] = []
    /// The files that were read, for `--check-config` and the journal.
    public var files: [String]

    /// The built-in defaults and catalog, with no file at all (DESIGN §7: blockd runs
    /// without any configuration).
    public static let builtIn = ConfigSet(daemon: .defaults, catalog: .standard, schedules: [], files: [])

    public static func load(daemonFile: ConfigSource?, selectionFiles: [ConfigSource], scheduleFiles: [ConfigSource],
                            limitFiles: [ConfigSource] = [], flags: DaemonConfig.Layer = .init()) throws(CoreError) -> ConfigSet {
        var daemon = DaemonConfig.defaults
        var files: [String] = []
        if let daemonFile {
            daemon = daemon.applying(try DaemonConfig.parseLayer(file: daemonFile.path, text: daemonFile.text))
            files.append(daemonFile.path)
        }
        daemon = daemon.applying(flags)

        var selections: [Selection] = []
        var definedIn: [String: String] = [:]
        for source in selectionFiles.sorted(by: { $0.path < $1.path }) {
            let selection = try ConfigFiles.parseSelection(file: source.path, text: source.text)
            if let other = definedIn[selection.name.lowercased()] {
                throw CoreError(.invalidConfig, "\(source.path): the selection '\(selection.name)' is already defined in \(other); rename one of them")
            }
            definedIn[selection.name.lowercased()] = source.path
            selections.append(selection)
            files.append(source.path)
        }
        // A configured selection of a built-in's name replaces the built-in.
        let catalog = Catalog.standard.merging(selections)

        var schedules: [Schedule] = []
        var scheduleIn: [String: String] = [:]
        for source in scheduleFiles.sorted(by: { $0.path < $1.path }) {
            var schedule = try ConfigFiles.parseSchedule(file: source.path, text: source.text)
            if let other = scheduleIn[schedule.name] {
                throw CoreError(.invalidConfig, "\(source.path): the schedule '\(schedule.name)' is already defined in \(other); rename one of them")
            }
            scheduleIn[schedule.name] = source.path
            schedule.selections = try resolve(schedule.selections, in: catalog, file: source.path)
            schedules.append(schedule)
            files.append(source.path)
        }
        var limits: [Limit] = []
        for source in limitFiles.sorted(by: { $0.path < $1.path }) {
            var limit = try ConfigFiles.parseLimit(file: source.path, text: source.text)
            if let other = scheduleIn[limit.name] {
                throw CoreError(.invalidConfig, "\(source.path): the name '\(limit.name)' is already used in \(other); rename one of them")
            }
            scheduleIn[limit.name] = source.path
            limit.selections = try resolve(limit.selections, in: catalog, file: source.path)
            do throws(CoreError) {
                try Limit.checkCountable(limit.name, limit.selections.compactMap { catalog.selection(named: $0) })
            } catch {
                throw CoreError(.invalidConfig, "\(source.path): \(error.message)")
            }
            limits.append(limit)
            files.append(source.path)
        }
        return ConfigSet(daemon: daemon, catalog: catalog, schedules: schedules, limits: limits, files: files)
    }

    /// A declared activity's `Selections=` as catalog names (unknown ones are an error that
    /// names the file and suggests the closest name).
    static func resolve(_ names: [String], in catalog: Catalog, file: String) throws(CoreError) -> [String] {
        var resolved: [String] = []
        for name in names {
            do throws(CoreError) {
                resolved.append(try catalog.resolve(name).name)
            } catch {
                throw CoreError(.invalidConfig, "\(file): Selections=: \(error.message)")
            }
        }
        return Registry.unique(resolved)
    }
}
