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
    /// What loads but deserves a word (§7): an app a selection names that is not installed.
    /// The daemon, which can look, fills it in; said by `--check-config` and in the journal.
    public var warnings: [ConfigProblem] = []

    /// The built-in defaults and catalog, with no file at all (§7: blockd runs
    /// without any configuration).
    public static let builtIn = ConfigSet(daemon: .defaults, catalog: .standard, schedules: [], files: [])

    /// U1, W2: the user and `@group` names the files give (`Users=`), which the edge looks up
    /// in the user database before the core resolves them.
    public var userNames: [String] {
        schedules.flatMap { $0.users?.names ?? [] } + limits.flatMap { $0.users?.names ?? [] } + userAlwaysAllowed.flatMap(\.users)
    }

    public static func load(daemonFile: ConfigSource?, selectionFiles: [ConfigSource], scheduleFiles: [ConfigSource],
                            limitFiles: [ConfigSource] = [], userFiles: [ConfigSource] = [],
                            flags: DaemonConfig.Layer = .init()) throws(CoreError) -> ConfigSet {
        let (set, problems) = assemble(daemonFile: daemonFile, selectionFiles: selectionFiles, scheduleFiles: scheduleFiles,
                                       limitFiles: limitFiles, userFiles: userFiles, flags: flags)
        if let error = problems.loadError { throw error }
        return set
    }

    /// Every file read and checked, and every problem found, in file and line order (§7): a
    /// file with a problem is left out and the others still checked, and within a file every
    /// entry is checked, so `blockd --check-config` says them all in one run. The daemon's
    /// load and reload refuse when there is any error, keeping what they had.
    public static func assemble(daemonFile: ConfigSource?, selectionFiles: [ConfigSource], scheduleFiles: [ConfigSource],
                                limitFiles: [ConfigSource] = [], userFiles: [ConfigSource] = [],
                                flags: DaemonConfig.Layer = .init()) -> (ConfigSet, [ConfigProblem]) {
        var problems: [ConfigProblem] = []
        var daemon = DaemonConfig.defaults
        var files: [String] = []
        let selectionFiles = selectionFiles.sorted(by: ConfigSource.byName), userFiles = userFiles.sorted(by: ConfigSource.byName)
        let scheduleFiles = scheduleFiles.sorted(by: ConfigSource.byName), limitFiles = limitFiles.sorted(by: ConfigSource.byName)
        var daemonFileGood = false
        if let daemonFile {
            let (layer, found) = DaemonConfig.readLayer(file: daemonFile.path, text: daemonFile.text)
            problems += found
            if found.isEmpty {
                daemon = daemon.applying(layer)
                files.append(daemonFile.path)
                daemonFileGood = true
            }
        }
        daemon = daemon.applying(flags)

        var selections: [Selection] = []
        var definedIn: [String: String] = [:]
        // The names of selections whose files have problems: what names them is left out with
        // no word of its own, the file's problems being the ones to fix.
        var broken = Set<String>()
        for source in selectionFiles {
            let (read, found) = ConfigFiles.readSelection(file: source.path, text: source.text)
            problems += found
            guard let selection = read else {
                let name = listed("Name", section: ConfigFiles.selectionSection, in: source)
                if let last = name.last, name.filter({ $0.line == last.line }).count == 1 { broken.insert(last.word.lowercased()) }
                continue
            }
            if let other = definedIn[selection.name.lowercased()] {
                problems.append(ConfigProblem(file: source.path, line: line(of: "Name", in: source.text),
                                              "the selection '\(selection.name)' is already defined in \(other); rename one of them"))
                continue
            }
            definedIn[selection.name.lowercased()] = source.path
            selections.append(selection)
            files.append(source.path)
        }
        // A configured selection of a built-in's name replaces the built-in.
        let catalog = Catalog.standard.merging(selections)
        var always: [Selection] = []
        if let daemonFile {
            // Checked even when blockd.conf has other problems, so one run says them all.
            let named = alwaysAllowed(in: daemonFile, section: DaemonConfig.section, catalog: catalog, broken: broken, problems: &problems)
            if daemonFileGood { always = named }
        }
        var perUser: [UserAlwaysAllowed] = []
        for source in userFiles {
            let (settings, found) = ConfigFiles.readUsers(file: source.path, text: source.text)
            problems += found
            let before = problems.count
            let selections = alwaysAllowed(in: source, section: ConfigFiles.usersSection, catalog: catalog, broken: broken, problems: &problems)
            guard let settings, problems.count == before, !names(settings.alwaysAllowed, in: broken) else { continue }
            perUser.append(UserAlwaysAllowed(users: settings.users, selections: selections))
            files.append(source.path)
        }

        var schedules: [Schedule] = []
        var scheduleIn: [String: String] = [:]
        for source in scheduleFiles {
            let (read, found) = ConfigFiles.readSchedule(file: source.path, text: source.text)
            problems += found
            let before = problems.count
            let written = named("Selections", section: ConfigFiles.scheduleSection, in: source, catalog: catalog, broken: broken, problems: &problems)
            guard var schedule = read, problems.count == before, !names(written.names, in: broken) else { continue }
            do throws(CoreError) {
                if let other = scheduleIn[schedule.name] {
                    throw CoreError(.invalidConfig, "\(source.path)\(at(line(of: "Name", in: source.text))): the schedule '\(schedule.name)' is already defined in \(other); rename one of them")
                }
                schedule.selections = try resolve(schedule.selections, in: catalog, source: source)
                scheduleIn[schedule.name] = source.path
                schedules.append(schedule)
                files.append(source.path)
            } catch { problems.append(ConfigProblem(error, file: source.path)) }
        }
        var limits: [Limit] = []
        for source in limitFiles {
            let (read, found) = ConfigFiles.readLimit(file: source.path, text: source.text)
            problems += found
            let before = problems.count
            let written = named("Selections", section: ConfigFiles.limitSection, in: source, catalog: catalog, broken: broken, problems: &problems)
            guard var limit = read, problems.count == before, !names(written.names, in: broken) else { continue }
            do throws(CoreError) {
                if let other = scheduleIn[limit.name] {
                    throw CoreError(.invalidConfig, "\(source.path)\(at(line(of: "Name", in: source.text))): the name '\(limit.name)' is already used in \(other); rename one of them")
                }
                limit.selections = try resolve(limit.selections, in: catalog, source: source)
                do throws(CoreError) {
                    try Limit.checkCountable(limit.name, limit.selections.compactMap { catalog.selection(named: $0) })
                } catch {
                    throw CoreError(.invalidConfig, "\(source.path)\(at(line(of: "Selections", in: source.text))): \(error.message)")
                }
                scheduleIn[limit.name] = source.path
                limits.append(limit)
                files.append(source.path)
            } catch { problems.append(ConfigProblem(error, file: source.path)) }
        }
        var set = ConfigSet(daemon: daemon, catalog: catalog, schedules: schedules, limits: limits, files: files)
        set.alwaysAllowed = AlwaysAllowed(always)
        set.userAlwaysAllowed = perUser
        let order = order(daemonFile: daemonFile, selectionFiles: selectionFiles, scheduleFiles: scheduleFiles,
                          limitFiles: limitFiles, userFiles: userFiles)
        return (set, problems.inFileOrder(order))
    }

    /// The paths in the order `assemble` reads them, which is the order their problems are said
    /// in: blockd.conf, then selections, users, schedules and limits, each kind by name.
    public static func order(daemonFile: ConfigSource?, selectionFiles: [ConfigSource], scheduleFiles: [ConfigSource],
                             limitFiles: [ConfigSource], userFiles: [ConfigSource]) -> [String] {
        let kinds = [selectionFiles, userFiles, scheduleFiles, limitFiles].flatMap { $0.sorted(by: ConfigSource.byName) }
        return ((daemonFile.map { [$0] } ?? []) + kinds).map(\.path)
    }

    /// W2: a file's `AlwaysAllowed=` resolved against `catalog`; an unknown name or an
    /// allow-only expression is a problem with the file and the line it is written on, and left
    /// out.
    static func alwaysAllowed(in source: ConfigSource, section: String, catalog: Catalog, broken: Set<String> = [],
                              problems: inout [ConfigProblem]) -> [Selection] {
        named("AlwaysAllowed", section: section, in: source, catalog: catalog, broken: broken, problems: &problems) { name, selection throws(CoreError) in
            guard !selection.isAllowOnly else {
                throw CoreError(.usage, "'\(name)' is an allow-only expression; name what is always allowed itself")
            }
        }.selections
    }

    /// Whether any of `names` is a selection whose file has problems.
    static func names(_ names: [String], in broken: Set<String>) -> Bool {
        names.contains { broken.contains($0.lowercased()) }
    }

    /// The selections a list key (`Selections=`, `AlwaysAllowed=`) names in `source`, each
    /// resolved against `catalog`: a name that is none is a problem on the line that names it,
    /// with the nearest name (§7); a name the file's reader refused already is not said again,
    /// nor one a selection file with problems defines (`broken`). `names` are the names written.
    static func named(_ key: String, section: String, in source: ConfigSource, catalog: Catalog, broken: Set<String> = [],
                      problems: inout [ConfigProblem],
                      also check: (String, Selection) throws(CoreError) -> Void = { _, _ in }) -> (selections: [Selection], names: [String]) {
        var out: [Selection] = []
        let written = listed(key, section: section, in: source)
        for (name, line) in written {
            guard (try? Names.validate(name, what: "selection name")) != nil, !broken.contains(name.lowercased()) else { continue }
            do throws(CoreError) {
                let selection = try catalog.resolve(name)
                try check(name, selection)
                out.append(selection)
            } catch {
                problems.append(ConfigProblem(file: source.path, line: line, "\(key)=: \(error.message)"))
            }
        }
        return (out, written.map(\.word))
    }

    /// The words of list key `key` in force in `section` (or a near miss of its name, read as
    /// it), each with the line it is written on: an empty assignment empties the list, as the
    /// readers do.
    static func listed(_ key: String, section: String, in source: ConfigSource) -> [(word: String, line: Int)] {
        var out: [(word: String, line: Int)] = []
        for s in INIDocument.read(file: source.path, text: source.text).0.sections
        where Suggestion.nearest(to: s.name, among: [section]) != nil {
            for e in s.entries where e.key == key {
                if e.value.isEmpty { out = []; continue }
                guard let words = try? INI.words(e.value) else { continue }
                out += words.map { ($0, e.line) }
            }
        }
        return out
    }

    static func at(_ line: Int?) -> String { line.map { ":\($0)" } ?? "" }

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
