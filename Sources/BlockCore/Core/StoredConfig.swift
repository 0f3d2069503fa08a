import FoundationEssentials

/// The parts of a configuration that keep blocks and schedules in effect (§7), kept in
/// the state file each time a configuration loads. When the files are broken at start, blockd
/// runs on this instead of the built-in defaults, so a bad file never lifts a block.
public struct StoredConfig: Codable, Equatable, Sendable {
    public var maxActivities: Int
    public var hostsFile: String
    public var killGraceSeconds: Int
    /// Every [Daemon] setting, the E5 and E7 ones included. Optional so that a state file from
    /// before it was kept decodes (the three above and the defaults apply then).
    public var settings: DaemonConfig.Layer?
    /// Selections that differ from the built-in catalog (configured, or replacing a built-in).
    public var selections: [Selection]
    public var schedules: [Schedule]
    public var limits: [Limit]
    /// The files it was read from, for the journal and status.
    public var files: [String]
    public var savedAt: Date

    public init(_ config: ConfigSet, at now: Date) {
        maxActivities = config.daemon.maxActivities
        hostsFile = config.daemon.hostsFile
        killGraceSeconds = config.daemon.killGraceSeconds
        settings = config.daemon.layer
        let standard = Catalog.standard
        selections = config.catalog.selections.filter { standard.selection(named: $0.name) != $0 }
        schedules = config.schedules
        limits = config.limits
        files = config.files
        savedAt = now
    }

    /// The configuration again, with the command line's flags on top (they always win).
    public func configSet(flags: DaemonConfig.Layer) -> ConfigSet {
        var config = ConfigSet.builtIn
        config.daemon = DaemonConfig(maxActivities: maxActivities, hostsFile: hostsFile, killGraceSeconds: killGraceSeconds)
            .applying(settings ?? DaemonConfig.Layer()).applying(flags)
        config.catalog = Catalog.standard.merging(selections)
        config.schedules = schedules
        config.limits = limits
        config.files = files
        return config
    }
}

/// Where the configuration in force came from, for `status` and the journal (§7).
public struct ConfigProvenance: Sendable, Equatable {
    public enum Kind: String, Sendable { case files, lastGood = "last-good", builtIn = "built-in" }
    public var kind: Kind
    /// Why it is not the files (nil when it is).
    public var problem: String?

    public init(kind: Kind, problem: String?) {
        (self.kind, self.problem) = (kind, problem)
    }

    public static let files = ConfigProvenance(kind: .files, problem: nil)
}
