import BlockCore

/// `blockd`'s command line (§7).
public struct BlockdOptions: Equatable, Sendable {
    public enum LogTarget: String, Equatable, Sendable, CaseIterable { case auto, journal, console }
    public enum Mode: Equatable, Sendable { case run, checkConfig, catConfig, release, version, help, mergeFirefoxPolicies }

    public var mode: Mode = .run
    public var configDir = "/etc/blockd"
    /// `--config-dir` was given: that directory alone is read, not the standard layers.
    public var configDirGiven = false
    /// `--check-config PATH`: a configuration directory, or one file to check with the
    /// configuration of `configDir` (nil: `configDir` itself).
    public var checkPath: String?
    public var stateDir = "/var/lib/blockd"
    public var socketPath = "/run/blockd/blockd.sock"
    /// nil: `HostsFile=` from blockd.conf, else /etc/hosts. The flag wins over the file.
    public var hostsFile: String?
    public var logTarget: LogTarget = .auto
    /// E5: nil keeps what blockd.conf says (`CutSockets=`, `Firewall=`, `ResolvConf=`).
    public var cutSockets: Bool?
    public var firewall: Bool?
    /// E2: `--app-shield`; nil keeps `AppShield=`.
    public var appShield: Bool?
    /// Screen time: `--screen-time`; nil keeps `ScreenTime=`.
    public var screenTime: Bool?
    public var resolvConf: String?
    /// E7: `--browser-policies`, `--policy-root`, `--firefox-policies`; nil: blockd.conf or the default.
    public var browserPolicies: Bool?
    public var policyRoot: String?
    public var firefoxPolicies: String?
    /// U3: `--user-tables-dir`; nil: `UserTablesDirectory=` or /run/blockd/users.
    public var userTablesDirectory: String?
    /// F3: `--metrics-dir`; nil: `MetricsDirectory=` or no metrics.
    public var metricsDirectory: String?
    /// E4: `--release --force-members` releases despite members' `--lock`s (not an
    /// administrator's or root's).
    public var forceMembers = false

    public init() {}

    /// What is read: `--config-dir` alone, or the standard layers with `configDir` as the
    /// administrator's (see `ConfigDirectory`).
    public var configDirectory: ConfigDirectory {
        configDirGiven ? ConfigDirectory(configDir) : ConfigDirectory(layers: Array(ConfigDirectory.standardLayers.dropLast()) + [configDir])
    }

    public static func parse(_ arguments: [String]) throws(CoreError) -> BlockdOptions {
        var o = BlockdOptions()
        var scanner = ArgumentScanner(arguments, program: "blockd")
        while let token = scanner.next() {
            switch token {
            case .positional(let p):
                guard o.mode == .checkConfig, o.checkPath == nil else { throw scanner.usage("unexpected argument '\(p)'") }
                o.checkPath = p
            case .option(let name, let inline):
                switch name {
                case "--config-dir":
                    o.configDir = try scanner.value(for: name, inline: inline)
                    o.configDirGiven = true
                case "--state-dir": o.stateDir = try scanner.value(for: name, inline: inline)
                case "--socket": o.socketPath = try scanner.value(for: name, inline: inline)
                case "--hosts-file": o.hostsFile = try scanner.value(for: name, inline: inline)
                case "--resolv-conf": o.resolvConf = try scanner.value(for: name, inline: inline)
                case "--cut-sockets", "--firewall", "--app-shield", "--screen-time":
                    let v = try scanner.value(for: name, inline: inline)
                    guard let b = ConfigReader.boolean(v) else { throw scanner.usage("\(name) must be yes or no, not '\(v)'") }
                    switch name {
                    case "--firewall": o.firewall = b
                    case "--app-shield": o.appShield = b
                    case "--screen-time": o.screenTime = b
                    default: o.cutSockets = b
                    }
                case "--browser-policies":
                    let v = try scanner.value(for: name, inline: inline)
                    guard let b = ConfigReader.boolean(v) else { throw scanner.usage("--browser-policies must be yes or no, not '\(v)'") }
                    o.browserPolicies = b
                case "--policy-root": o.policyRoot = try scanner.value(for: name, inline: inline)
                case "--firefox-policies": o.firefoxPolicies = try scanner.value(for: name, inline: inline)
                case "--user-tables-dir": o.userTablesDirectory = try scanner.value(for: name, inline: inline)
                case "--metrics-dir": o.metricsDirectory = try scanner.value(for: name, inline: inline)
                case "--log-target":
                    let v = try scanner.value(for: name, inline: inline)
                    guard let t = LogTarget(rawValue: v) else {
                        throw scanner.usage("--log-target must be auto, journal or console, not '\(v)'")
                    }
                    o.logTarget = t
                case "--check-config", "-n", "--cat-config", "--release", "--version", "--merge-firefox-policies":
                    guard inline == nil else { throw scanner.usage("\(name) takes no value") }
                    let mode: Mode = name == "--release" ? .release : name == "--version" ? .version
                        : name == "--merge-firefox-policies" ? .mergeFirefoxPolicies : name == "--cat-config" ? .catConfig : .checkConfig
                    guard o.mode == .run || o.mode == mode else {
                        throw scanner.usage("--check-config, --cat-config, --release, --merge-firefox-policies and --version cannot be combined")
                    }
                    o.mode = mode
                case "--force-members":
                    guard inline == nil else { throw scanner.usage("--force-members takes no value") }
                    o.forceMembers = true
                case "--help", "-h":
                    var help = BlockdOptions()
                    help.mode = .help
                    return help
                default:
                    throw scanner.usage("unknown option '\(name)'")
                }
            }
        }
        if o.forceMembers && o.mode != .release {
            throw scanner.usage("--force-members goes with --release: blockd --release --force-members")
        }
        for (flag, path) in [("--config-dir", o.configDir), ("--state-dir", o.stateDir), ("--socket", o.socketPath),
                             ("--resolv-conf", o.resolvConf ?? "/")]
        where path.isEmpty {
            throw scanner.usage("\(flag) needs a non-empty path")
        }
        for (flag, path) in [("--policy-root", o.policyRoot), ("--firefox-policies", o.firefoxPolicies), ("--metrics-dir", o.metricsDirectory)]
        where path.map({ $0.first != "/" }) ?? false {
            throw scanner.usage("\(flag) needs an absolute path")
        }
        if let dir = o.userTablesDirectory {
            // U3: blockd empties this directory of tables it does not want; never /.
            var trimmed = dir
            while trimmed.count > 1 && trimmed.last == "/" { trimmed.removeLast() }
            guard trimmed.first == "/", trimmed != "/" else {
                throw scanner.usage("--user-tables-dir needs an absolute directory other than /, such as /tmp/blockd-users")
            }
            o.userTablesDirectory = trimmed
        }
        return o
    }

    public static let help = """
    Usage: blockd [OPTIONS]

    The blockd daemon: keeps timed blocks and schedules, enforces what must be blocked now,
    and answers blockc over a Unix socket. Runs in the foreground (systemd style).

    Options:
      --config-dir DIR       configuration directory (default /etc/blockd)
      --state-dir DIR        state directory (default /var/lib/blockd); one blockd per directory
      --socket PATH          control socket (default /run/blockd/blockd.sock)
      --hosts-file PATH      hosts file to manage (default HostsFile= or /etc/hosts)
      --cut-sockets yes|no   destroy open connections to a newly blocked site's addresses
                             (default CutSockets= or yes)
      --firewall yes|no      keep the nftables table inet blockd: refuse new connections to
                             those addresses for ConnectGrace=, and point blocked names at a
                             sink that refuses at once (default Firewall= or yes)
      --app-shield yes|no    deny launches of blocked apps and stop running ones with fanotify
                             marks (default AppShield= or yes); no for a sandbox
      --screen-time yes|no   follow logind's login sessions on the system bus and count each
                             person's time at the screen (default ScreenTime= or yes)
      --resolv-conf PATH     where the nameservers asked for those addresses are listed
                             (default ResolvConf= or /etc/resolv.conf)
      --log-target TARGET    auto, journal or console (default auto)
      --browser-policies yes|no
                             write browser policies: Chromium-family URLBlocklist and
                             DoH off, Firefox DoH locked off (default BrowserPolicies= or yes)
      --policy-root DIR      prefix for every browser policy path (default PolicyRoot= or /)
      --firefox-policies PATH
                             Firefox's policies.json (default FirefoxPolicies= or
                             /etc/firefox/policies/policies.json under the policy root)
      --user-tables-dir DIR  where the per-user tables go (default UserTablesDirectory= or
                             /run/blockd/users, the directory the NSS module reads); a
                             sandboxed blockd gets one of its own
      --metrics-dir DIR      write blockd.prom there for node_exporter's textfile collector
                             (default MetricsDirectory=, or no metrics); world-readable, so
                             per-user blocks are counted there, never named
      --cat-config           print the configuration files in force, in the order read,
                             each after a # PATH line, then every [Daemon] setting in
                             force with its file and line, flag or default, and exit
      -n, --check-config [DIR | FILE]
                             check the configuration (or DIR; or FILE with it, in place of
                             the file that defines its name) and print every problem of
                             every file as FILE:LINE, with did-you-mean, or a summary;
                             an app that is not installed is only a warning; exit 1 on
                             any error, else 0; nothing is changed
      --release              remove all enforcement (for uninstalling) and exit; refused
                             while a block started with --lock runs
      --force-members        with --release: release despite members' --lock blocks (not
                             an administrator's or root's; the blocks stay registered)
      --merge-firefox-policies
                             lock DNS over HTTPS off in Firefox's policies.json and exit
                             (make install runs it; --release takes it out again)
      --version              print the version and exit
      -h, --help             print this help and exit

    Exit status: 0 success (--check-config: no errors, warnings alone included), 1 failure
    (configuration error found by --check-config, another blockd running on the state
    directory, refused release, libsystemd missing), 2 usage error.
    A broken configuration at start does not stop blockd: it runs on the last good one.
    blockd, blockc and blockc-agent are one executable, run as the name it is started by
    (blockc and blockc-agent are symbolic links to blockd).
    See blockd(8) and blockd.conf(5).
    """
}
