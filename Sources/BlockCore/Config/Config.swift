/// Settings of `blockd.conf` `[Daemon]` (§7), fully resolved.
///
/// Defaults, then files, then flags: the file only ever yields a `Layer` of optional values; `defaults` is the one
/// place defaults live, and `applying(_:)` is the one place layers are merged, so the daemon
/// builds `defaults.applying(file).applying(flags)` (defaults → files → flags).
public struct DaemonConfig: Equatable, Sendable {
    /// T4: the cap on activities, blocks and schedules together.
    public var maxActivities: Int
    /// A1: a member's own activities, grants and requests (`MaxActivitiesPerUser=`).
    public var maxActivitiesPerUser = Registry.defaultMaxPerMember
    /// E1: the hosts file whose managed section blocks domains.
    public var hostsFile: String
    /// E2: seconds between SIGTERM and SIGKILL for a blocked app's running processes.
    public var killGraceSeconds: Int
    /// E5: the settings of cutting what is open (see `FeltSettings`).
    public var felt: FeltSettings
    /// E2: whether the app shield runs at all (`AppShield=no`: a sandbox that must not put
    /// fanotify marks on the machine's executables).
    public var appShield = true
    /// Screen time: whether blockd follows logind's login sessions on the system bus
    /// (`ScreenTime=no`: a sandbox, or a machine without logind).
    public var screenTime = true
    /// Screen time: how long a session may be idle (as its desktop says) and still count as a
    /// person at the screen (`IdleSeconds=`).
    public var idleSeconds = Int(ScreenTime.idleSeconds)
    /// A second to a day.
    public static let idleSecondsRange = 1...86_400
    /// E7: whether blockd writes the browsers' managed policies at all.
    public var browserPolicies = true
    /// E7: prepended to every default browser policy path (`/` on a real system), so that a
    /// sandboxed blockd writes under a directory of its own.
    public var policyRoot = "/"
    /// E7: Firefox's policies.json; nil means `etc/firefox/policies/policies.json` under `policyRoot`.
    public var firefoxPolicies: String?
    /// B1: where blockd's browser extension is (`BrowserExtension=`): `auto` (the default) for
    /// `share/blockd/browser` beside the installed blockd's `bin`, `no` to install it in no
    /// browser, or a directory.
    public var browserExtension = "auto"
    /// U3: where the per-user tables go. The installed NSS module reads only its compiled-in
    /// /run/blockd/users; another directory keeps a sandboxed blockd off the live daemon's.
    public var userTablesDirectory = UserTable.directory
    /// F3: where `blockd.prom` goes for node_exporter's textfile collector; nil: no metrics.
    public var metricsDirectory: String?
    /// R1: how many local days of the usage ledger are kept (today included).
    public var reportDays = UsageHistory.defaultDays
    /// W2: the selections no block ever covers (`AlwaysAllowed=`), as named; the configuration
    /// resolves them against the catalog.
    public var alwaysAllowed: [String] = []

    public init(maxActivities: Int, hostsFile: String, killGraceSeconds: Int, felt: FeltSettings = .defaults) {
        self.maxActivities = maxActivities
        self.hostsFile = hostsFile
        self.killGraceSeconds = killGraceSeconds
        self.felt = felt
    }

    /// E5 "felt at once": each system-wide effect can be turned off or pointed elsewhere.
    public struct FeltSettings: Equatable, Sendable {
        /// Seconds new connections to a newly blocked domain's old addresses are rejected:
        /// longer than browsers keep addresses cached (about a minute).
        public var connectGraceSeconds: Int
        /// Whether blockd may keep its nftables table (`inet blockd`): the grace rejects and
        /// the sink that refuses at once. Without it the sink is 0.0.0.0 and ::.
        public var firewall: Bool
        /// Whether established sockets to a newly blocked domain's addresses are destroyed.
        public var cutSockets: Bool
        /// Where the nameservers asked for a blocked domain's current addresses are listed.
        public var resolvConf: String

        public init(connectGraceSeconds: Int, firewall: Bool, cutSockets: Bool, resolvConf: String) {
            self.connectGraceSeconds = connectGraceSeconds
            self.firewall = firewall
            self.cutSockets = cutSockets
            self.resolvConf = resolvConf
        }

        public static let defaults = FeltSettings(connectGraceSeconds: 120, firewall: true, cutSockets: true, resolvConf: "/etc/resolv.conf")
    }

    public static let defaults = DaemonConfig(
        maxActivities: Registry.defaultMaxActivities, hostsFile: "/etc/hosts", killGraceSeconds: 3)

    public static let maxActivitiesRange = 1...1_000_000
    public static let maxActivitiesPerUserRange = 1...100_000
    /// A longer grace would let a blocked app keep running well into its block; 60 s is
    /// already generous for an app to save its state.
    public static let killGraceRange = 1...60
    /// A day is far past any browser's DNS cache; `Firewall=no` turns the rejects off.
    public static let connectGraceRange = 1...86_400
    /// At least two weeks, so a week is always compared with a whole one before it; a year at most.
    public static let reportDaysRange = 14...366

    public static let section = "Daemon"
    public static let keys = ["MaxActivities", "MaxActivitiesPerUser", "HostsFile", "KillGrace", "ConnectGrace", "Firewall", "CutSockets", "ResolvConf",
                              "BrowserPolicies", "PolicyRoot", "FirefoxPolicies", "BrowserExtension", "UserTablesDirectory", "AppShield", "ScreenTime", "IdleSeconds", "MetricsDirectory", "AlwaysAllowed", "ReportDays"]

    /// One layer of settings; nil means "not set here, keep what the layer below says".
    public struct Layer: Equatable, Sendable, Codable {
        public var maxActivities: Int?
        public var maxActivitiesPerUser: Int?
        public var appShield: Bool?
        public var screenTime: Bool?
        public var idleSeconds: Int?
        public var hostsFile: String?
        public var killGraceSeconds: Int?
        public var connectGraceSeconds: Int?
        public var firewall: Bool?
        public var cutSockets: Bool?
        public var resolvConf: String?
        public var browserPolicies: Bool?
        public var policyRoot: String?
        public var firefoxPolicies: String?
        public var browserExtension: String?
        public var userTablesDirectory: String?
        public var metricsDirectory: String?
        public var alwaysAllowed: [String]?
        public var reportDays: Int?

        public init(maxActivities: Int? = nil, hostsFile: String? = nil, killGraceSeconds: Int? = nil,
                    connectGraceSeconds: Int? = nil, firewall: Bool? = nil, cutSockets: Bool? = nil, resolvConf: String? = nil) {
            self.maxActivities = maxActivities
            self.hostsFile = hostsFile
            self.killGraceSeconds = killGraceSeconds
            self.connectGraceSeconds = connectGraceSeconds
            self.firewall = firewall
            self.cutSockets = cutSockets
            self.resolvConf = resolvConf
        }
    }

    /// Every setting of this configuration as a layer (for the last good configuration, §7).
    public var layer: Layer {
        var l = Layer(maxActivities: maxActivities, hostsFile: hostsFile, killGraceSeconds: killGraceSeconds,
                      connectGraceSeconds: felt.connectGraceSeconds, firewall: felt.firewall, cutSockets: felt.cutSockets,
                      resolvConf: felt.resolvConf)
        (l.browserPolicies, l.policyRoot, l.firefoxPolicies) = (browserPolicies, policyRoot, firefoxPolicies)
        l.userTablesDirectory = userTablesDirectory
        l.browserExtension = browserExtension
        l.metricsDirectory = metricsDirectory
        l.reportDays = reportDays
        l.alwaysAllowed = alwaysAllowed
        l.maxActivitiesPerUser = maxActivitiesPerUser
        l.appShield = appShield
        l.screenTime = screenTime
        l.idleSeconds = idleSeconds
        return l
    }

    public func applying(_ layer: Layer) -> DaemonConfig {
        let f = FeltSettings(connectGraceSeconds: layer.connectGraceSeconds ?? felt.connectGraceSeconds,
                             firewall: layer.firewall ?? felt.firewall, cutSockets: layer.cutSockets ?? felt.cutSockets,
                             resolvConf: layer.resolvConf ?? felt.resolvConf)
        var c = DaemonConfig(maxActivities: layer.maxActivities ?? maxActivities,
                            hostsFile: layer.hostsFile ?? hostsFile,
                            killGraceSeconds: layer.killGraceSeconds ?? killGraceSeconds, felt: f)
        c.maxActivitiesPerUser = layer.maxActivitiesPerUser ?? maxActivitiesPerUser
        c.appShield = layer.appShield ?? appShield
        c.screenTime = layer.screenTime ?? screenTime
        c.idleSeconds = layer.idleSeconds ?? idleSeconds
        c.browserPolicies = layer.browserPolicies ?? browserPolicies
        c.policyRoot = layer.policyRoot ?? policyRoot
        c.firefoxPolicies = layer.firefoxPolicies ?? firefoxPolicies
        c.userTablesDirectory = layer.userTablesDirectory ?? userTablesDirectory
        c.browserExtension = layer.browserExtension ?? browserExtension
        c.metricsDirectory = layer.metricsDirectory ?? metricsDirectory
        c.reportDays = layer.reportDays ?? reportDays
        c.alwaysAllowed = layer.alwaysAllowed ?? alwaysAllowed
        return c
    }

    /// `defaults` with the settings of one `blockd.conf`; empty text gives `defaults`.
    public static func parse(file: String, text: String) throws(CoreError) -> DaemonConfig {
        defaults.applying(try parseLayer(file: file, text: text))
    }

    /// What one `blockd.conf` sets. A later assignment wins; an empty one (`KillGrace=`)
    /// forgets earlier ones in the file, as systemd does, so the default applies again.
    public static func parseLayer(file: String, text: String) throws(CoreError) -> Layer {
        let (layer, problems) = readLayer(file: file, text: text)
        if let first = problems.first { throw first.error }
        return layer
    }

    /// What one `blockd.conf` sets, and every problem it has, by line (§7: `--check-config`
    /// says them all in one run). A key whose value is refused is left unset.
    public static func readLayer(file: String, text: String) -> (Layer, [ConfigProblem]) {
        let reader = ConfigReader(file: file, what: "blockd.conf")
        var list = ProblemList()
        let (doc, malformed) = INIDocument.read(file: file, text: text)
        list.errors = malformed
        let entries = reader.entries(of: doc, section: section, problems: &list.errors).entries
        var layer = Layer()
        for e in entries {
            list.check(e) { () throws(CoreError) in try Self.read(e, into: &layer, reader: reader) }
        }
        return (layer, list.problems(file: file))
    }

    static func read(_ e: INIEntry, into layer: inout Layer, reader: ConfigReader) throws(CoreError) {
        switch e.key {
        case "MaxActivities":
            layer.maxActivities = try e.value.isEmpty ? nil : reader.integer(e, in: maxActivitiesRange)
        case "MaxActivitiesPerUser":
            layer.maxActivitiesPerUser = try e.value.isEmpty ? nil : reader.integer(e, in: maxActivitiesPerUserRange)
        case "HostsFile":
            layer.hostsFile = try e.value.isEmpty ? nil : reader.absolutePath(e)
        case "KillGrace":
            layer.killGraceSeconds = try e.value.isEmpty ? nil : reader.duration(e, in: killGraceRange)
        case "ConnectGrace":
            layer.connectGraceSeconds = try e.value.isEmpty ? nil : reader.duration(e, in: connectGraceRange)
        case "Firewall":
            layer.firewall = try e.value.isEmpty ? nil : reader.boolean(e)
        case "CutSockets":
            layer.cutSockets = try e.value.isEmpty ? nil : reader.boolean(e)
        case "ResolvConf":
            layer.resolvConf = try e.value.isEmpty ? nil : reader.absolutePath(e)
        case "AppShield":
            layer.appShield = try e.value.isEmpty ? nil : reader.boolean(e)
        case "ScreenTime":
            layer.screenTime = try e.value.isEmpty ? nil : reader.boolean(e)
        case "IdleSeconds":
            layer.idleSeconds = try e.value.isEmpty ? nil : reader.duration(e, in: idleSecondsRange)
        case "BrowserPolicies":
            layer.browserPolicies = try e.value.isEmpty ? nil : reader.boolean(e)
        case "PolicyRoot":
            layer.policyRoot = try e.value.isEmpty ? nil : reader.directory(e)
        case "FirefoxPolicies":
            layer.firefoxPolicies = try e.value.isEmpty ? nil : reader.absolutePath(e)
        case "BrowserExtension":
            switch e.value.lowercased() {
            case "": layer.browserExtension = nil
            case "auto": layer.browserExtension = "auto"
            case "no": layer.browserExtension = "no"
            default:
                guard e.value.first == "/", e.value.count > 1, !e.value.hasControlCharacters else {
                    let hint = ConfigReader.didYouMean(e.value, among: ["auto", "no"])
                    throw reader.fail(e, "BrowserExtension= is auto, no or the absolute directory of blockd's browser files (such as /usr/share/blockd/browser), not '\(e.value)'\(hint)")
                }
                layer.browserExtension = e.value.hasSuffix("/") ? String(e.value.dropLast()) : e.value
            }
        case "UserTablesDirectory":
            layer.userTablesDirectory = try e.value.isEmpty ? nil : reader.ownDirectory(e)
        case "MetricsDirectory":
            layer.metricsDirectory = try e.value.isEmpty ? nil : reader.directory(e)
        case "AlwaysAllowed":
            layer.alwaysAllowed = try e.value.isEmpty ? nil : reader.selections(e, adding: layer.alwaysAllowed ?? [])
        case "ReportDays":
            layer.reportDays = try e.value.isEmpty ? nil : reader.integer(e, in: reportDaysRange)
        default:
            throw reader.unknownKey(e, section: section, valid: keys)
        }
    }
}

extension DaemonConfig {
    /// Every `[Daemon]` key with the value in force, spelled as `blockd.conf` takes it (empty:
    /// unset, the default applies); in the order of `keys`. For `blockd --cat-config`.
    public var settings: [(key: String, value: String)] {
        let yes = { (b: Bool) in b ? "yes" : "no" }
        let values: [String: String] = [
            "MaxActivities": String(maxActivities), "MaxActivitiesPerUser": String(maxActivitiesPerUser), "HostsFile": hostsFile,
            "KillGrace": "\(killGraceSeconds)s", "ConnectGrace": "\(felt.connectGraceSeconds)s", "Firewall": yes(felt.firewall),
            "CutSockets": yes(felt.cutSockets), "ResolvConf": felt.resolvConf, "BrowserPolicies": yes(browserPolicies),
            "PolicyRoot": policyRoot, "FirefoxPolicies": firefoxPolicies ?? "", "BrowserExtension": browserExtension, "UserTablesDirectory": userTablesDirectory,
            "AppShield": yes(appShield), "ScreenTime": yes(screenTime), "IdleSeconds": "\(idleSeconds)s", "MetricsDirectory": metricsDirectory ?? "", "AlwaysAllowed": alwaysAllowed.joined(separator: " "),
            "ReportDays": String(reportDays),
        ]
        return DaemonConfig.keys.map { ($0, values[$0] ?? "") }
    }

    /// Where each key set in `text` (one `blockd.conf`) gets its value: the line of its last
    /// assignment; a key whose last assignment is empty (`KillGrace=`) is not set there.
    public static func assignedLines(text: String, file: String) -> [String: Int] {
        guard let doc = try? INIDocument.parse(file: file, text: text) else { return [:] }
        var lines: [String: Int] = [:]
        for section in doc.sections where section.name == DaemonConfig.section {
            for e in section.entries { lines[e.key] = e.value.isEmpty ? nil : e.line }
        }
        return lines
    }
}
