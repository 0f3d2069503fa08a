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
    /// §7 "Truth" in parts: the parts of a selection that the configuration leaves off here
    /// (`AppShield=no`, no browser to hold URL prefixes), with the cause. Not a failure, and not
    /// retried: a selection with another part enforced is blocked, and says what it is not; one
    /// with every part off is not enforced at all (`settle`).
    public var partsOff: [String: [Part: String]] = [:]

    /// What a selection blocks, as a person names it.
    public enum Part: String, CaseIterable, Comparable, Sendable {
        case websites, apps, pages
        public static func < (a: Part, b: Part) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }

        /// The parts `selection` has: its domains (websites), its apps (an allow-only window
        /// denies every desktop application), its URL prefixes (pages).
        public static func of(_ selection: Selection) -> Set<Part> {
            var parts: Set<Part> = []
            if !selection.domains.isEmpty || selection.isAllowOnly { parts.insert(.websites) }
            if !selection.apps.isEmpty || selection.isAllowOnly { parts.insert(.apps) }
            if !selection.paths.isEmpty { parts.insert(.pages) }
            return parts
        }
    }

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

    /// A part of `selection` the configuration leaves off, and why.
    public mutating func partOff(_ selection: String, _ part: Part, _ cause: String) {
        partsOff[selection, default: [:]][part] = cause
    }

    /// §7 "Truth": a selection whose every part is off is not enforced, with their causes; one
    /// that fails anyway keeps only its failure. What stays in `partsOff` is blocked in part.
    /// `targets` are the selections enforced (a per-user selection may come as several).
    public mutating func settle(targets: [Selection]) {
        var parts: [String: Set<Part>] = [:]
        for t in targets where partsOff[t.name] != nil { parts[t.name, default: []].formUnion(Part.of(t)) }
        for (name, off) in partsOff.sorted(by: { $0.key < $1.key }) {
            if notEnforced[name] != nil || parts[name].map({ $0.isSubset(of: off.keys) }) ?? true {
                if notEnforced[name] == nil { notEnforced(name, off.sorted { $0.key < $1.key }.map(\.value).joined(separator: "; ")) }
                partsOff[name] = nil
            }
        }
    }

    public mutating func merge(_ other: EnforcementReport) {
        failures += other.failures
        for (selection, parts) in other.partsOff { for (part, cause) in parts { partOff(selection, part, cause) } }
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
