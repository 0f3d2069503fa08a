/// One file's path and contents, as the daemon read them.
public struct ConfigSource: Hashable, Sendable {
    public var path: String
    public var text: String
    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }

    /// Files are read in the order of their names, whatever layer each comes from (§7),
    /// then of their paths.
    public static func byName(_ a: ConfigSource, _ b: ConfigSource) -> Bool {
        let (x, y) = (Path.lastComponent(a.path), Path.lastComponent(b.path))
        return x != y ? x < y : a.path < b.path
    }
}

/// A whole configuration, checked as one: `blockd.conf`, `selections.d/*.conf` and
/// `schedules.d/*.conf` (§7). Built all-or-nothing so that a reload that fails keeps
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
    /// W2: `AlwaysAllowed=` resolved against the catalog.
    public var alwaysAllowed = AlwaysAllowed([])
    /// W2: each `users.d/` file's `AlwaysAllowed=`, resolved, in file order.
    public var userAlwaysAllowed: [UserAlwaysAllowed] = []

    /// The built-in defaults and catalog, with no file at all (§7: blockd runs
    /// without any configuration).
    public static let builtIn = ConfigSet(daemon: .defaults, catalog: .standard, schedules: [], files: [])

    public static func load(daemonFile: ConfigSource?, selectionFiles: [ConfigSource], scheduleFiles: [ConfigSource],
                            limitFiles: [ConfigSource] = [], userFiles: [ConfigSource] = [],
                            flags: DaemonConfig.Layer = .init()) throws(CoreError) -> ConfigSet {
        let (set, problems) = assemble(daemonFile: daemonFile, selectionFiles: selectionFiles, scheduleFiles: scheduleFiles,
                                       limitFiles: limitFiles, userFiles: userFiles, flags: flags)
        if let first = problems.first { throw first }
        return set
    }

    /// Every file read and checked, and every problem found, in file order: a file with a
    /// problem is left out and the others still checked (`blockd --check-config` prints them
    /// all; the daemon's load and reload refuse at the first, keeping what they had).
    public static func assemble(daemonFile: ConfigSource?, selectionFiles: [ConfigSource], scheduleFiles: [ConfigSource],
                                limitFiles: [ConfigSource] = [], userFiles: [ConfigSource] = [],
                                flags: DaemonConfig.Layer = .init()) -> (ConfigSet, [CoreError]) {
        var problems: [CoreError] = []
        var daemon = DaemonConfig.defaults
        var files: [String] = []
        if let daemonFile {
            do throws(CoreError) {
                daemon = daemon.applying(try DaemonConfig.parseLayer(file: daemonFile.path, text: daemonFile.text))
                files.append(daemonFile.path)
            } catch { problems.append(error) }
        }
        daemon = daemon.applying(flags)

        var selections: [Selection] = []
        var definedIn: [String: String] = [:]
        for source in selectionFiles.sorted(by: ConfigSource.byName) {
            do throws(CoreError) {
                let selection = try ConfigFiles.parseSelection(file: source.path, text: source.text)
                if let other = definedIn[selection.name.lowercased()] {
                    throw CoreError(.invalidConfig, "\(source.path): the selection '\(selection.name)' is already defined in \(other); rename one of them")
                }
                definedIn[selection.name.lowercased()] = source.path
                selections.append(selection)
                files.append(source.path)
            } catch { problems.append(error) }
        }
        // A configured selection of a built-in's name replaces the built-in.
        let catalog = Catalog.standard.merging(selections)
        let always = alwaysAllowed(daemon.alwaysAllowed, in: catalog, source: daemonFile, problems: &problems)
        var perUser: [UserAlwaysAllowed] = []
        for source in userFiles.sorted(by: ConfigSource.byName) {
            do throws(CoreError) {
                let settings = try ConfigFiles.parseUsers(file: source.path, text: source.text)
                let before = problems.count
                let selections = alwaysAllowed(settings.alwaysAllowed, in: catalog, source: source, problems: &problems)
                guard problems.count == before else { continue }
                perUser.append(UserAlwaysAllowed(users: settings.users, selections: selections))
                files.append(source.path)
            } catch { problems.append(error) }
        }

        var schedules: [Schedule] = []
        var scheduleIn: [String: String] = [:]
        for source in scheduleFiles.sorted(by: ConfigSource.byName) {
            do throws(CoreError) {
                var schedule = try ConfigFiles.parseSchedule(file: source.path, text: source.text)
                if let other = scheduleIn[schedule.name] {
                    throw CoreError(.invalidConfig, "\(source.path): the schedule '\(schedule.name)' is already defined in \(other); rename one of them")
                }
                schedule.selections = try resolve(schedule.selections, in: catalog, source: source)
                scheduleIn[schedule.name] = source.path
                schedules.append(schedule)
                files.append(source.path)
            } catch { problems.append(error) }
        }
        var limits: [Limit] = []
        for source in limitFiles.sorted(by: ConfigSource.byName) {
            do throws(CoreError) {
                var limit = try ConfigFiles.parseLimit(file: source.path, text: source.text)
                if let other = scheduleIn[limit.name] {
                    throw CoreError(.invalidConfig, "\(source.path): the name '\(limit.name)' is already used in \(other); rename one of them")
                }
                limit.selections = try resolve(limit.selections, in: catalog, source: source)
                do throws(CoreError) {
                    try Limit.checkCountable(limit.name, limit.selections.compactMap { catalog.selection(named: $0) })
                } catch {
                    throw CoreError(.invalidConfig, "\(source.path): \(error.message)")
                }
                scheduleIn[limit.name] = source.path
                limits.append(limit)
                files.append(source.path)
            } catch { problems.append(error) }
        }
        var set = ConfigSet(daemon: daemon, catalog: catalog, schedules: schedules, limits: limits, files: files)
        set.alwaysAllowed = AlwaysAllowed(always)
        set.userAlwaysAllowed = perUser
        return (set, problems)
    }

    /// W2: `AlwaysAllowed=` names resolved against `catalog`; an unknown name or an allow-only
    /// expression is a problem with the file and line, and left out.
    static func alwaysAllowed(_ names: [String], in catalog: Catalog, source: ConfigSource?, problems: inout [CoreError]) -> [Selection] {
        var out: [Selection] = []
        for name in names {
            do throws(CoreError) {
                let selection = try catalog.resolve(name)
                guard !selection.isAllowOnly else {
                    throw CoreError(.usage, "'\(name)' is an allow-only expression; name what is always allowed itself")
                }
                out.append(selection)
            } catch {
                let at = source.flatMap { line(of: "AlwaysAllowed", in: $0.text) }.map { ":\($0)" } ?? ""
                problems.append(CoreError(.invalidConfig, "\(source?.path ?? "blockd.conf")\(at): AlwaysAllowed=: \(error.message)"))
            }
        }
        return out
    }

    /// A declared activity's `Selections=` as catalog names (unknown ones are an error that
    /// names the file and suggests the closest name).
    static func resolve(_ names: [String], in catalog: Catalog, source: ConfigSource) throws(CoreError) -> [String] {
        var resolved: [String] = []
        for name in names {
            do throws(CoreError) {
                resolved.append(try catalog.resolve(name).name)
            } catch {
                let at = line(of: "Selections", in: source.text).map { ":\($0)" } ?? ""
                throw CoreError(.invalidConfig, "\(source.path)\(at): Selections=: \(error.message)")
            }
        }
        return Registry.unique(resolved)
    }

    /// The line number of the last `KEY=` line (the one in force), for messages.
    static func line(of key: String, in text: String) -> Int? {
        var found: Int?
        for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let t = line.trimmed()
            if t.hasPrefix(key), t.dropFirst(key.count).trimmed().hasPrefix("=") { found = i + 1 }
        }
        return found
    }
}
