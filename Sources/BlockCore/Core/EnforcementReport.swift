import FoundationEssentials

/// What an `enforce` call achieved.
public struct EnforcementReport: Equatable, Sendable {
    public var failures: [EnforcementFailure] = []
    /// Selections of the requested set that are not (fully) enforced now, with the cause.
    public var notEnforced: [String: String] = [:]
    /// Selections no longer requested whose enforcement could not be taken away yet (a hosts
    /// file on a full disk still holds their lines), with the cause: their unlock is pending
    /// (§7 "Truth": not "Unblocked" until it lands).
    public var lingering: [String: String] = [:]

    public init() {}

    /// A report in which every failure that names a selection leaves it not enforced.
    public init(failures: [EnforcementFailure]) {
        for failure in failures { add(failure) }
    }

    public mutating func add(_ failure: EnforcementFailure) {
        failures.append(failure)
        if let selection = failure.selection { notEnforced(selection, failure.message) }
    }

    public mutating func notEnforced(_ selection: String, _ cause: String) {
        notEnforced[selection] = notEnforced[selection].map { $0 == cause ? $0 : "\($0); \(cause)" } ?? cause
    }

    public mutating func merge(_ other: EnforcementReport) {
        failures += other.failures
        for (selection, cause) in other.notEnforced.sorted(by: { $0.key < $1.key }) { notEnforced(selection, cause) }
        for (selection, cause) in other.lingering { lingering[selection] = lingering[selection].map { "\($0); \(cause)" } ?? cause }
    }
}

/// A denied launch or a repaired tamper (S5): counted per selection per day, logged, and
/// sent to `watch` subscribers. Enforcers report them from any thread through `ShieldHitSink`.
public struct ShieldHit: Equatable, Sendable {
    /// Its word in the journal and in `watch` events (`WatchEvent.Hit.kind`).
    public enum Kind: String, CaseIterable, Sendable { case deniedLaunch = "denied-launch", killed, tamper }
    public var kind: Kind
    public var selection: String
    /// The executable (denied launch, killed process) or the file (tamper).
    public var path: String
    /// A name for people, where known (the app's name from its desktop file, or the executable's).
    public var app: String?
    public var pid: Int32?
    /// U3: whose launch was denied or whose process was stopped (its login uid, else its real
    /// uid: the person at the session); nil when not known, and for a file.
    public var uid: UInt32?

    public init(kind: Kind, selection: String, path: String, app: String? = nil, pid: Int32? = nil, uid: UInt32? = nil) {
        self.kind = kind
        self.selection = selection
        self.path = path
        self.app = app
        self.pid = pid
        self.uid = uid
    }
}

public struct EnforcementFailure: Equatable, Sendable {
    public var selection: String?
    public var message: String
    public init(selection: String?, message: String) {
        self.selection = selection
        self.message = message
    }
}
