import FoundationEssentials

/// Per-user blocks (U2): whom a lock or an unlock is about. A selection's union (T5) is kept
/// once, but what it means differs per user: blocked for `kid` by a bedtime, for everyone by a
/// machine-wide block, for nobody else. Each user's view changes on its own; an event is about
/// the users whose view changed, with the reasons that apply to them and no one else's.
public struct Audience: Hashable, Sendable {
    /// The uids the change is about; nil: everyone on the machine except `except`.
    public var users: [UInt32]?
    /// With `users` nil: the users left out because their own view did not change the same
    /// way (they are told separately, or not at all).
    public var except: [UInt32]

    public init(users: [UInt32]?, except: [UInt32] = []) {
        (self.users, self.except) = (users, users == nil ? except : [])
    }

    public static let everyone = Audience(users: nil)

    /// Whether uid `uid` is in it.
    public func contains(_ uid: UInt32) -> Bool { users.map { $0.contains(uid) } ?? !except.contains(uid) }
}

/// How one selection's blocked state changed for one audience between two reconciles.
public struct ViewChange: Equatable, Sendable {
    public enum Kind: Equatable, Sendable { case lock, unlock }
    public var kind: Kind
    /// A lock: the reasons that apply to the audience now. An unlock: those that applied before.
    public var reasons: [Reason]
    /// A lock: when the selection is lifted for this audience (nil: no end in sight).
    public var until: Date?
    public var audience: Audience

    public init(_ kind: Kind, reasons: [Reason], until: Date? = nil, audience: Audience) {
        (self.kind, self.reasons, self.until, self.audience) = (kind, reasons, until, audience)
    }
}

extension Reason {
    /// Whether this reason blocks `viewer` (nil: a user no activity names, who sees only the
    /// machine-wide reasons).
    public func applies(to viewer: UInt32?) -> Bool {
        guard let scope else { return true }
        return viewer.map(scope.contains) ?? false
    }
}

extension Policy {
    /// U2, T5 per user: what changed for whom when a selection's reasons went from `before` to
    /// `after` (nil: not blocked). The users some reason names each have their own view; every
    /// other user sees only the machine-wide reasons. A view that went from nothing to some
    /// reasons is a lock for its users, from some to nothing an unlock; a view that stays
    /// blocked, however its reasons change, is no news (as for a whole-machine selection).
    /// Users whose views changed alike are told together; `until(viewer)` is when the
    /// selection is lifted for that view. Locks come before unlocks.
    ///
    /// With no scope anywhere this is the whole-machine rule: one lock when the selection
    /// becomes blocked, one unlock when it stops being blocked, both for everyone.
    ///
    /// `before` empty (not nil) means blocked for reasons not known: what a daemon applied
    /// before it restarted. Every view counts as blocked then, or, with `unknownFor`, the views
    /// of those uids alone (what was applied for some users only, as the report's open
    /// intervals kept it).
    public static func viewChanges(before: [Reason]?, after: [Reason]?, unknownFor: [UInt32]? = nil,
                                   until: (UInt32?) -> Date?) -> [ViewChange] {
        let old = before ?? [], new = after ?? []
        let unknown = before?.isEmpty == true
        var named = Set<UInt32>(unknown ? unknownFor ?? [] : [])
        for reason in old + new { if let scope = reason.scope { named.formUnion(scope.uids) } }
        let others = named.sorted()
        var locks: [ViewChange] = [], unlocks: [ViewChange] = []
        func wasBlocked(_ viewer: UInt32?) -> Bool {
            guard unknown else { return false }
            guard let unknownFor else { return true }
            return viewer.map(unknownFor.contains) ?? false
        }
        func note(_ viewer: UInt32?) {
            let was = old.filter { $0.applies(to: viewer) }, now = new.filter { $0.applies(to: viewer) }
            guard (wasBlocked(viewer) || !was.isEmpty) == now.isEmpty else { return }
            let whom = viewer.map { Audience(users: [$0]) } ?? Audience(users: nil, except: others)
            if now.isEmpty {
                // Users who lost the same reasons are told together.
                if viewer != nil, let i = unlocks.firstIndex(where: { $0.audience.users != nil && $0.reasons == was }) {
                    unlocks[i].audience.users!.append(viewer!)
                } else {
                    unlocks.append(ViewChange(.unlock, reasons: was, audience: whom))
                }
            } else {
                let end = until(viewer)
                if viewer != nil, let i = locks.firstIndex(where: { $0.audience.users != nil && $0.reasons == now && $0.until == end }) {
                    locks[i].audience.users!.append(viewer!)
                } else {
                    locks.append(ViewChange(.lock, reasons: now, until: end, audience: whom))
                }
            }
        }
        note(nil)
        for uid in others { note(uid) }
        return locks + unlocks
    }
}
