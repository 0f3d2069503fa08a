import Testing
@testable import BlockCore

private let conf = "/etc/blockd/blockd.conf"
private let sel = "/etc/blockd/selections.d/chat.conf"
private let sched = "/etc/blockd/schedules.d/bedtime.conf"
private let lim = "/etc/blockd/limits.d/games.conf"

/// §7, F2: `blockd --check-config` says every problem of every file in one run, each once
/// with its file and line, in file and line order, with what was probably meant.
@Suite("§7: every problem in one run, with did you mean")
struct ConfigProblemsTests {
    /// Every problem `text` has, read as the kind of file `path` is (by its directory).
    static func problems(_ path: String, _ text: String) -> [String] {
        let found: [ConfigProblem] = switch path {
        case conf: DaemonConfig.readLayer(file: path, text: text).1
        case sel: ConfigFiles.readSelection(file: path, text: text).1
        case sched: ConfigFiles.readSchedule(file: path, text: text).1
        case lim: ConfigFiles.readLimit(file: path, text: text).1
        default: ConfigFiles.readUsers(file: path, text: text).1
        }
        return found.map(\.text)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let file: String
        let text: String
        let expected: [String]
        var testDescription: String { name }
    }

    @Test("§7: several problems in one file are each said once, with its line, in line order", arguments: [
        Case(name: "an unknown key and a bad value of a known key, in one run", file: conf,
             text: "[Daemon]\nFirewal=no\nKillGrace=2m\n",
             expected: ["\(conf):2: unknown key Firewal= in [Daemon]; did you mean Firewall=?",
                        "\(conf):3: KillGrace= must be a duration from 1s to 1m, e.g. 3s, not '2m'"]),
        Case(name: "a malformed line does not stop the rest from being read", file: conf,
             text: "[Daemon]\nMaxActivities 5\nCutSockets=maybe\nReportDays=7\n",
             expected: ["\(conf):2: 'MaxActivities 5' is not a Key=Value assignment, a [Section] header or a comment; add '=' or start the line with '#' to comment it out",
                        "\(conf):3: CutSockets= must be yes or no (also true/false, on/off, 1/0), not 'maybe'",
                        "\(conf):4: ReportDays= must be a whole number from 14 to 366, not '7'"]),
        Case(name: "a selection: a key in the wrong case, a bad domain, an unknown key", file: sel,
             text: "[Selection]\nName=chat\napps=discord\nDomains=discord.com bad_domain!\nApss=slack\n",
             expected: ["\(sel):3: unknown key apps= in [Selection]; keys are case-sensitive: write Apps=",
                        "\(sel):4: Domains=: 'bad_domain!' is not a domain: it contains '_', which host names may not contain; write a host name such as example.com",
                        "\(sel):5: unknown key Apss= in [Selection]; did you mean Apps=?"]),
        Case(name: "a refused value is not also a missing key; what is missing is said at the header", file: sched,
             text: "[Schedule]\nName=bedtime\nWindow=25:00-07:00\nMode=allowonly\n",
             expected: ["\(sched):1: [Schedule] 'bedtime' has no Selections=; add the selections it blocks, e.g. Selections=social video, or Session=yes for allowed hours",
                        "\(sched):3: Window=: '25:00' is not a time of day; write HH:MM from 00:00 to 23:59, e.g. 22:00",
                        "\(sched):4: Mode= must be block (the default: the selections are blocked) or allow-only (only the selections are allowed), not 'allowonly'; did you mean allow-only?"]),
        Case(name: "a limit: two bad values and a key of a schedule file", file: lim,
             text: "[Limit]\nName=games\nDaily=1 hourz\nSelections=steam\nMoreTime=aproval\nWindow=22:00-07:00\n",
             expected: ["\(lim):3: Daily= must be a duration from 1s to 1d, e.g. 3s: '1 hourz' is not a duration: 'hourz' is not a unit (s, m, h or d, or a word such as minutes); did you mean '1 hour'?",
                        "\(lim):5: MoreTime=: must be no, self or approval, not 'aproval'; did you mean approval?",
                        "\(lim):6: Window= belongs in a schedule file (schedules.d/*.conf, [Schedule]), not in [Limit]; move it there"]),
    ])
    func manyInOneFile(_ c: Case) {
        #expect(Self.problems(c.file, c.text) == c.expected)
    }

    @Test("§7: did you mean, for keys: a near key, the same key in another case, a key of another kind of file and where it belongs", arguments: [
        (sel, "Apss=discord", "unknown key Apss= in [Selection]; did you mean Apps=?"),
        (sel, "Domain=x.com", "unknown key Domain= in [Selection]; did you mean Domains=?"),
        (sel, "ShieldBdy[ja]=休憩", "unknown key ShieldBdy[ja]= in [Selection]; did you mean ShieldBody[ja]=?"),
        (conf, "firewall=no", "unknown key firewall= in [Daemon]; keys are case-sensitive: write Firewall="),
        (sel, "Window=22:00-07:00", "Window= belongs in a schedule file (schedules.d/*.conf, [Schedule]), not in [Selection]; move it there"),
        (sched, "Daily=1h", "Daily= belongs in a limit file (limits.d/*.conf, [Limit]), not in [Schedule]; move it there"),
        (sched, "KillGrace=3s", "KillGrace= belongs in blockd.conf ([Daemon]), not in [Schedule]; move it there"),
        (conf, "Users=kid", "Users= belongs in a schedule file (schedules.d/*.conf, [Schedule]), a limit file (limits.d/*.conf, [Limit]) or a users file (users.d/*.conf, [Users]), not in [Daemon]; move it there"),
        (sched, "Dailly=1h", "unknown key Dailly= in [Schedule]; did you mean Daily=? It belongs in a limit file (limits.d/*.conf, [Limit]), not here"),
        (conf, "Socket=/run/x.sock", "unknown key Socket= in [Daemon]; valid keys are MaxActivities=, MaxActivitiesPerUser=, HostsFile=, KillGrace=, ConnectGrace=, Firewall=, CutSockets=, ResolvConf=, BrowserPolicies=, PolicyRoot=, FirefoxPolicies=, BrowserExtension=, UserTablesDirectory=, AppShield=, ScreenTime=, IdleSeconds=, MetricsDirectory=, AlwaysAllowed=, ReportDays="),
    ])
    func keys(file: String, line: String, expected: String) {
        let section = file == conf ? "[Daemon]" : file == sel ? "[Selection]\nName=x" : "[Schedule]\nName=x\nWindow=22:00-07:00\nSelections=social"
        let text = section + "\n" + line + "\n"
        let at = text.split(separator: "\n").count
        #expect(Self.problems(file, text) == ["\(file):\(at): \(expected)"])
    }

    @Test("§7: did you mean, for values of a fixed set: booleans, modes, more-time policies, weekday names", arguments: [
        (conf, "Firewall=yess", "Firewall= must be yes or no (also true/false, on/off, 1/0), not 'yess'; did you mean yes?"),
        (conf, "AppShield=flase", "AppShield= must be yes or no (also true/false, on/off, 1/0), not 'flase'; did you mean false?"),
        (conf, "BrowserExtension=atuo", "BrowserExtension= is auto, no or the absolute directory of blockd's browser files (such as /usr/share/blockd/browser), not 'atuo'; did you mean auto?"),
        (sel, "Firewall=noo", "Firewall= must be yes or no (also true/false, on/off, 1/0), not 'noo'; did you mean no?"),
        (sched, "Mode=blok", "Mode= must be block (the default: the selections are blocked) or allow-only (only the selections are allowed), not 'blok'; did you mean block?"),
        (sched, "MoreTime=Self", "MoreTime=: must be no, self or approval, not 'Self'; did you mean self?"),
        (sched, "Days=mon-fir", "Days=: 'mon-fir' is not a set of days: 'fir' is not a day; write e.g. mon,wed or mon-fri; did you mean Days=mon-fri?"),
        (sched, "Days=wekends", "Days=: 'wekends' is not a set of days: 'wekends' is not a day; write e.g. mon,wed or mon-fri; did you mean Days=weekends?"),
        (sched, "Days=mnday,wendesday", "Days=: 'mnday,wendesday' is not a set of days: 'mnday' is not a day; write e.g. mon,wed or mon-fri; did you mean Days=monday,wednesday?"),
        (sched, "Days=mon,xyz", "Days=: 'mon,xyz' is not a set of days: 'xyz' is not a day; write e.g. mon,wed or mon-fri"),
        (conf, "Firewall=perhaps", "Firewall= must be yes or no (also true/false, on/off, 1/0), not 'perhaps'"),
    ])
    func values(file: String, line: String, expected: String) {
        let section = file == conf ? "[Daemon]" : file == sel ? "[Selection]\nName=x" : "[Schedule]\nName=x\nWindow=22:00-07:00\nSelections=social"
        let text = section + "\n" + line + "\n"
        let at = text.split(separator: "\n").count
        #expect(Self.problems(file, text) == ["\(file):\(at): \(expected)"])
    }

    @Test("§7: a section in the wrong kind of file says where it belongs; a near miss of the right one is read as it, so its keys are checked too", arguments: [
        Case(name: "a schedule in selections.d", file: sel, text: "[Schedule]\nName=bedtime\nWindow=22:00-07:00\n",
             expected: ["\(sel):1: [Schedule] belongs in a schedule file (schedules.d/*.conf, [Schedule]); a selection file may contain only [Selection]: move it to a file of its own there"]),
        Case(name: "a misspelt section, and a bad key in it", file: sel, text: "[Selections]\nName=chat\nApss=discord\n",
             expected: ["\(sel):1: unknown section [Selections]; did you mean [Selection]?",
                        "\(sel):3: unknown key Apss= in [Selection]; did you mean Apps=?"]),
        Case(name: "a section in the wrong case", file: sched, text: "[schedule]\nName=bedtime\nWindow=22:00-07:00\nSelections=social\n",
             expected: ["\(sched):1: unknown section [schedule]; section names are case-sensitive: write [Schedule]"]),
        Case(name: "a near miss of another kind's section", file: conf, text: "[Daemon]\nKillGrace=3s\n[Limits]\nDaily=1h\n",
             expected: ["\(conf):3: unknown section [Limits]; did you mean [Limit]? That section belongs in a limit file (limits.d/*.conf, [Limit]); blockd.conf may contain only [Daemon]: move it to a file of its own there"]),
    ])
    func sections(_ c: Case) {
        #expect(Self.problems(c.file, c.text) == c.expected)
    }

    @Test("§7: a whole configuration: every problem of every file in one run, in file and line order, the good files still loaded")
    func wholeSet() {
        let daemon = ConfigSource(path: conf, text: "[Daemon]\nFirewal=no\nKillGrace=2m\nAlwaysAllowed=schol\n")
        let chat = ConfigSource(path: sel, text: "[Selection]\nName=chat\nDomains=discord.com\nApss=slack\n")
        let school = ConfigSource(path: "/etc/blockd/selections.d/school.conf", text: "[Selection]\nName=school\nDomains=school.example\n")
        let bedtime = ConfigSource(path: sched, text: "[Schedule]\nName=bedtime\nSelections=instagarm\nSelections=school redit\nWindow=22:00-07:00\nDays=mon-fir\n")
        let (set, problems) = ConfigSet.assemble(daemonFile: daemon, selectionFiles: [school, chat], scheduleFiles: [bedtime])
        #expect(problems.map(\.text) == [
            "\(conf):2: unknown key Firewal= in [Daemon]; did you mean Firewall=?",
            "\(conf):3: KillGrace= must be a duration from 1s to 1m, e.g. 3s, not '2m'",
            "\(conf):4: AlwaysAllowed=: no selection named 'schol'; did you mean 'school'? 'blockc selections' lists them",
            "\(sel):4: unknown key Apss= in [Selection]; did you mean Apps=?",
            "\(sched):3: Selections=: no selection named 'instagarm'; did you mean 'instagram'? 'blockc selections' lists them",
            "\(sched):4: Selections=: no selection named 'redit'; did you mean 'reddit'? 'blockc selections' lists them",
            "\(sched):6: Days=: 'mon-fir' is not a set of days: 'fir' is not a day; write e.g. mon,wed or mon-fri; did you mean Days=mon-fri?",
        ], "\(problems.map(\.text))")
        #expect(problems.summary == "7 problems in 3 files")
        #expect(set.catalog.selection(named: "school") != nil && set.catalog.selection(named: "chat") == nil, "a good file is loaded all the same")
        #expect(problems.loadError?.message == "\(conf):2: unknown key Firewal= in [Daemon]; did you mean Firewall=? (and 6 more errors; 'blockd --check-config' lists every one)")
        #expect(throws: CoreError.self) { try ConfigSet.load(daemonFile: daemon, selectionFiles: [school, chat], scheduleFiles: [bedtime]) }
    }

    @Test("§7: a schedule naming a selection whose file has problems is not also told that no such selection exists")
    func noCascade() {
        let chat = ConfigSource(path: sel, text: "[Selection]\nName=chat\nApss=slack\n")
        let bedtime = ConfigSource(path: sched, text: "[Schedule]\nName=bedtime\nWindow=22:00-07:00\nSelections=chat\n")
        let (set, problems) = ConfigSet.assemble(daemonFile: nil, selectionFiles: [chat], scheduleFiles: [bedtime])
        #expect(problems.map(\.text) == ["\(sel):3: unknown key Apss= in [Selection]; did you mean Apps=?"])
        #expect(set.schedules.isEmpty, "the schedule is left out with the selection it needs")
    }

    @Test("§7: the summary counts problems and files, and says how many are warnings")
    func summary() {
        let e = ConfigProblem(file: "/a.conf", line: 2, "bad")
        let w = ConfigProblem(.warning, file: "/b.conf", line: 3, "no app")
        #expect([e].summary == "1 problem in 1 file")
        #expect([e, e, w].summary == "3 problems in 2 files (2 errors, 1 warning)")
        #expect([w, w].summary == "2 warnings in 1 file")
        #expect(w.text == "/b.conf:3: warning: no app" && e.text == "/a.conf:2: bad")
        #expect([w].loadError == nil, "warnings alone load")
        #expect([w, e].loadError?.message == "/a.conf:2: bad")
    }

    @Test("§7: did you mean: the nearest word, case aside, within a few edits; nothing for what is far from every word", arguments: [
        ("Apss", ["Name", "Domains", "Apps"], "Apps"),
        ("firewall", ["Firewall", "CutSockets"], "Firewall"),
        ("discrod", ["discord", "slack"], "discord"),
        ("yess", ["yes", "no"], "yes"),
        ("allowonly", ["block", "allow-only"], "allow-only"),
        ("x", ["no", "on"], nil),
        ("telegram", ["discord", "slack"], nil),
        ("", ["yes"], nil),
    ] as [(String, [String], String?)])
    func nearest(word: String, candidates: [String], expected: String?) {
        #expect(Suggestion.nearest(to: word, among: candidates) == expected)
    }

    @Test("§7: edit distance counts a swap of neighbours as one edit")
    func distance() {
        #expect(Suggestion.distance("discrod", "discord") == 1)
        #expect(Suggestion.distance("kitten", "sitting") == 3)
        #expect(Suggestion.distance("kitten", "sitting", atMost: 2) == nil)
        #expect(Suggestion.distance("", "abc") == 3)
    }
}

/// §7, E2: an app a selection names that is not installed is a warning, not an error: the
/// configuration loads, and the app is blocked once it is installed.
@Suite("§7: an app that is not installed is a warning")
struct AppCheckTests {
    @Test("§7: the Apps= words in force, each once, with the line it is last written on; an emptied list and refused words are left out")
    func entries() {
        let source = ConfigSource(path: sel, text: "[Selection]\nName=chat\nApps=skype\nApps=\nApps=discrod /opt/x/app\nApps=discrod bin/rel\n")
        #expect(AppCheck.entries([source]) == [AppCheck.Entry(file: sel, line: 6, app: "discrod"), AppCheck.Entry(file: sel, line: 5, app: "/opt/x/app")])
    }

    static let nearby = AppCheck.Nearby(
        executables: ["discord", "firefox", "slack"],
        desktop: [AppCheck.DesktopApp(file: "org.telegram.desktop.desktop", name: "Telegram Desktop", program: "/opt/telegram/Telegram"),
                  AppCheck.DesktopApp(file: "steam.desktop", name: "Steam", program: "/usr/games/steam")],
        siblings: ["Telegram", "Updater"])

    @Test("§7: what the warning says, with what was probably meant", arguments: [
        ("discrod", AppCheck.Finding.notOnPath,
         "no app 'discrod' is installed (no desktop entry, no executable on PATH); did you mean 'discord'?"),
        ("telegram-desktop", .notOnPath,
         "no app 'telegram-desktop' is installed (no desktop entry, no executable on PATH); did you mean '/opt/telegram/Telegram' (what org.telegram.desktop.desktop starts)?"),
        ("signal-desktop", .notOnPath,
         "no app 'signal-desktop' is installed (no desktop entry, no executable on PATH); check the name, or keep it if the app is still to be installed: it is blocked once it is"),
        ("Telegram Desktop", .notOnPath,
         "no executable 'Telegram Desktop' is on PATH, but the desktop entry org.telegram.desktop.desktop starts /opt/telegram/Telegram; write Apps=/opt/telegram/Telegram to block it"),
        ("steam", .notOnPath,
         "no executable 'steam' is on PATH, but the desktop entry steam.desktop starts /usr/games/steam; write Apps=/usr/games/steam to block it"),
        ("stem", .notOnPath,
         "no app 'stem' is installed (no desktop entry, no executable on PATH); did you mean '/usr/games/steam' (what steam.desktop starts)?"),
        ("/opt/telegram/Telegarm", .noFile,
         "no app is installed at /opt/telegram/Telegarm (no such file); did you mean '/opt/telegram/Telegram'?"),
        ("/usr/local/bin/firefx", .noFile,
         "no app is installed at /usr/local/bin/firefx (no such file); did you mean 'firefox'?"),
        ("/opt/telegram", .notExecutable("a directory"),
         "/opt/telegram is a directory, not an executable file; Apps= takes the path of an executable, or its name on PATH"),
    ] as [(String, AppCheck.Finding, String)])
    func warning(app: String, finding: AppCheck.Finding, expected: String) {
        var nearby = Self.nearby
        if !app.hasPrefix("/opt/telegram/") { nearby.siblings = [] }
        let w = AppCheck.warning(AppCheck.Entry(file: sel, line: 3, app: app), finding, nearby: nearby)
        #expect(w == ConfigProblem(.warning, file: sel, line: 3, expected))
        #expect(w?.text == "\(sel):3: warning: \(expected)")
        #expect(AppCheck.warning(AppCheck.Entry(file: sel, line: 3, app: app), .installed, nearby: nearby) == nil)
    }

    @Test("§7: a warning is said once per reload, at warning priority, and the configuration is in force all the same")
    func reloadJournal() throws {
        var d = FakeEdge()
        var set = try ConfigSet.load(daemonFile: nil, selectionFiles: [ConfigSource(path: sel, text: "[Selection]\nName=chat\nApps=discrod\n")], scheduleFiles: [])
        let warning = ConfigProblem(.warning, file: sel, line: 3, "no app 'discrod' is installed (no desktop entry, no executable on PATH); did you mean 'discord'?")
        set.warnings = [warning]
        d.files = .success(set)
        #expect({ if case .error = d.run("reload") { false } else { true } }())
        #expect(d.core.config.catalog.selection(named: "chat") != nil)
        let said = { d.journal.filter { $0.message == warning.text } }
        #expect(said().count == 1 && said().first?.priority == .warning)
        d.run("reload")
        #expect(said().count == 2, "once more for the second reload, never in between")
    }
}
