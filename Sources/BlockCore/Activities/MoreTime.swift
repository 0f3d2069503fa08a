import FoundationEssentials

/// How an activity answers `blockc more` (M1). Ordered from the most permissive to the
/// strictest, so that the strictest of several is their maximum.
public enum MoreTimeMode: String, Codable, Hashable, Sendable, CaseIterable, Comparable {
    /// `self`: granted to the asker after `Delay=`, within `MoreTimePerDay=`.
    case selfService = "self"
    /// Pending until root or a member of group `blockd-admin` approves it.
    case approval
    /// Refused (always the case for a `--lock` block).
    case no

    private var rank: Int { MoreTimeMode.allCases.firstIndex(of: self)! }
    public static func < (a: MoreTimeMode, b: MoreTimeMode) -> Bool { a.rank < b.rank }
}

/// An activity's more-time keys (`MoreTime=`, `Delay=`, `MoreTimePerDay=`, `RequestTimeout=`).
public struct MoreTimePolicy: Codable, Hashable, Sendable {
    public var mode: MoreTimeMode
    /// M2: how long every loosening of the activity waits (stop, remove, a grant).
    public var delay: Int
    /// M1: the more time one activity gives per local day (T7), in seconds.
    public var perDay: Int
    /// How long a request waits for an answer before it expires.
    public var requestTimeout: Int

    public static let defaultPerDay = 30 * 60
    public static let defaultRequestTimeout = 3600
    public static let standard = MoreTimePolicy()
    /// A `--lock` block: nobody shortens it, not even by asking.
    public static let never = MoreTimePolicy(mode: .no)

    public init(mode: MoreTimeMode = .selfService, delay: Int = 0, perDay: Int = MoreTimePolicy.defaultPerDay,
                requestTimeout: Int = MoreTimePolicy.defaultRequestTimeout) {
        (self.mode, self.delay, self.perDay, self.requestTimeout) = (mode, delay, perDay, requestTimeout)
    }

    /// T5, M1: of several policies the strictest wins, key by key.
    public static func strictest(_ policies: [MoreTimePolicy]) -> MoreTimePolicy {
        guard var out = policies.first else { return .standard }
        for p in policies.dropFirst() {
            out.mode = max(out.mode, p.mode)
            out.delay = max(out.delay, p.delay)
            out.perDay = min(out.perDay, p.perDay)
            out.requestTimeout = min(out.requestTimeout, p.requestTimeout)
        }
        return out
    }

    /// A1, M1: the policy an activity gets when none is given. One that an administrator (or
    /// the configuration, `setBy` nil) scopes to other people asks: the child asks, the parent
    /// answers. One's own blocks, and blocks for the whole machine, keep `self`.
    public static func familyDefault(scope: Scope?, setBy uid: UInt32?) -> MoreTimePolicy? {
        guard let scope, scope.uids.contains(where: { $0 != uid }) else { return nil }
        return MoreTimePolicy(mode: .approval)
    }

    /// The config keys, in the order blockd.conf(5) documents them.
    public static let keys = ["MoreTime", "Delay", "MoreTimePerDay", "RequestTimeout"]

    /// Sets one key from a config file's value; false when `key` is not one of `keys`.
    public mutating func set(_ key: String, _ value: String) throws(CoreError) -> Bool {
        switch key {
        case "MoreTime":
            guard let m = MoreTimeMode(rawValue: value) else {
                throw CoreError(.invalidConfig, "must be no, self or approval, not '\(value)'")
            }
            mode = m
        case "Delay": delay = try MoreTimePolicy.seconds(value, in: 0...86_400)
        case "MoreTimePerDay": perDay = try MoreTimePolicy.seconds(value, in: 0...86_400)
        case "RequestTimeout": requestTimeout = try MoreTimePolicy.seconds(value, in: 1...86_400)
        default: return false
        }
        return true
    }

    static func seconds(_ value: String, in range: ClosedRange<Int>) throws(CoreError) -> Int {
        if value == "0" && range.contains(0) { return 0 }
        let n: Int
        do throws(CoreError) { n = try DurationText.parse(value) } catch {
            throw CoreError(.invalidConfig, "must be a duration such as 2m or 1h30m: \(error.message)")
        }
        guard range.contains(n) else {
            throw CoreError(.invalidConfig, "must be at most \(DurationText.format(range.upperBound)), not '\(value)'")
        }
        return n
    }
}

extension Activity {
    /// M1: the activity's policy; a `--lock` block never gives more time.
    public var moreTime: MoreTimePolicy {
        switch self {
        case .block(let b): b.locked ? .never : (b.moreTime ?? .standard)
        case .schedule(let s): s.moreTime ?? .standard
        case .limit(let l): l.moreTime ?? .standard
        }
    }

    /// The same activity with `policy` where it has none of its own (A1's family default).
    public func defaultingMoreTime(_ policy: MoreTimePolicy?) -> Activity {
        guard let policy else { return self }
        switch self {
        case .block(var b): b.moreTime = b.moreTime ?? policy; return .block(b)
        case .schedule(var s): s.moreTime = s.moreTime ?? policy; return .schedule(s)
        case .limit(var l): l.moreTime = l.moreTime ?? policy; return .limit(l)
        }
    }
}

/// M3: an exception for one selection from `start` to `end`, given over the activities that
/// blocked it when it was granted. A reason that began later is not covered by it.
public struct Grant: Codable, Hashable, Sendable {
    public var id: String
    public var selection: String
    public var start: Date
    public var end: Date
    /// The activities the grant was given over.
    public var activities: [String]
    /// Who asked, and who granted it (nil: granted by policy, with no one asked).
    public var uid: UInt32
    public var grantedBy: UInt32?
    public var reason: String?
    /// M3: limits the grant gives allowance to instead of a window (nil: none), and whether
    /// that allowance has been added (at `start`, after any `Delay=`).
    public var limits: [String]?
    public var allowanceAdded: Bool?

    public init(id: String, selection: String, start: Date, end: Date, activities: [String], uid: UInt32,
                grantedBy: UInt32? = nil, reason: String? = nil) {
        (self.id, self.selection, self.start, self.end, self.activities) = (id, selection, start, end, activities)
        (self.uid, self.grantedBy, self.reason) = (uid, grantedBy, reason)
    }

    public var window: Window { Window(start: start, end: end) }

    /// M3 with U2: the reasons (activity names) the grant lifts from `blocked` at `t`. In its
    /// window, the asker's view of the selection (their own reasons and the machine-wide ones)
    /// is lifted when every reason in it is one the grant was given over; otherwise nothing.
    /// Other users' reasons are never the asker's to lift: kid's more time leaves kid2's
    /// homework on the same selection in place.
    public func lifted(from blocked: Policy.Blocked, at t: Date) -> Set<String> {
        guard blocked.selection == selection, window.contains(t), let view = blocked.seen(by: uid),
              view.reasons.allSatisfy({ activities.contains($0.activity) }) else { return [] }
        return Set(view.reasons.map(\.activity))
    }

    /// M3: whether the grant lifts the asker's view of `blocked` at `t`.
    public func lifts(_ blocked: Policy.Blocked, at t: Date) -> Bool { !lifted(from: blocked, at: t).isEmpty }
}

/// A request waiting for an administrator (M1 `MoreTime=approval`).
public struct MoreTimeRequest: Codable, Hashable, Sendable {
    public var id: String
    public var selection: String
    /// Seconds asked for; nil: the rest of the local day (`--today`).
    public var seconds: Int?
    public var activities: [String]
    public var uid: UInt32
    public var reason: String?
    public var asked: Date
    /// Unanswered by then, it expires: `RequestTimeout=` after asking, or the block's end.
    public var expires: Date

    public init(id: String, selection: String, seconds: Int?, activities: [String], uid: UInt32, reason: String?,
                asked: Date, expires: Date) {
        (self.id, self.selection, self.seconds, self.activities, self.uid) = (id, selection, seconds, activities, uid)
        (self.reason, self.asked, self.expires) = (reason, asked, expires)
    }
}

/// M2: a loosening that waits for its activity's `Delay=`: `blockc stop`, `schedule remove`,
/// `limit remove`. It takes effect at `due` unless cancelled with `blockc cancel NAME`.
public struct PendingLoosening: Codable, Hashable, Sendable {
    /// Its word in the state file, in `DelayedReply` and `CancelledReply`.
    public enum Kind: String, Codable, CaseIterable, Sendable { case stop, scheduleRemove = "schedule-remove", limitRemove = "limit-remove" }
    public var kind: Kind
    public var name: String
    public var uid: UInt32
    public var asked: Date
    public var due: Date

    public init(kind: Kind, name: String, uid: UInt32, asked: Date, due: Date) {
        (self.kind, self.name, self.uid, self.asked, self.due) = (kind, name, uid, asked, due)
    }

    /// The loosening `request` asks for and the activity it names; nil for a request that is
    /// no loosening. With `request`, the one mapping between the commands and the kinds (whose
    /// words the state file and the answers keep, whatever the commands are called).
    public static func asked(by request: Request) -> (kind: Kind, name: String)? {
        switch request {
        case .stop(let name): (.stop, name)
        case .scheduleRemove(let name): (.scheduleRemove, name)
        case .limitRemove(let name): (.limitRemove, name)
        case .hello, .status, .start, .scheduleAdd, .scheduleList, .selections, .selectionShow, .failures, .failuresClear, .limitAdd, .limitList,
             .more, .requests, .approve, .deny, .cancel, .stats, .report, .screen, .foreground, .web, .watch, .reload:
            nil
        }
    }

    /// The request carried out once the delay has passed, as its asker made it.
    public var request: Request {
        switch kind {
        case .stop: .stop(name: name)
        case .scheduleRemove: .scheduleRemove(name: name)
        case .limitRemove: .limitRemove(name: name)
        }
    }
}

extension Policy {
    /// M3: the desired set with what grants lift taken out. Applied after the union (T5), so a
    /// grant never changes why a selection is blocked, only whether it is enforced now.
    public func lifting(_ desired: [Blocked], grants: [Grant], at t: Date) -> [Blocked] {
        guard !grants.isEmpty else { return desired }
        return desired.compactMap { b in
            var lift = Lift()
            for grant in grants { lift.add(grant.lift(from: b, at: t)) }
            return b.without(lift)  // what stays is other users' (U2)
        }
    }
}

extension ConfigReader {
    /// One of `MoreTimePolicy.keys` in a schedule or limit file; unset keys keep their defaults.
    func moreTime(_ e: INIEntry, adding so_far: MoreTimePolicy?) throws(CoreError) -> MoreTimePolicy {
        var policy = so_far ?? .standard
        do throws(CoreError) { _ = try policy.set(e.key, e.value) } catch {
            let hint = e.key == "MoreTime" ? ConfigReader.didYouMean(e.value, among: MoreTimeMode.allCases.map(\.rawValue)) : ""
            throw fail(e, "\(e.key)=: \(error.message)\(hint)")
        }
        return policy
    }
}
