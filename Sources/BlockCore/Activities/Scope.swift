import FoundationEssentials

/// Who an activity applies to (per-user blocks): the user names and `@group`s it was given
/// (`Users=` in a schedule or limit file, `--user NAME` on blockc), and the uids the daemon
/// resolved them to when it accepted the activity. No scope (nil) means the whole machine.
///
/// The union of T5 stays per selection; each `Reason` carries its activity's scope, and what
/// is blocked for whom is derived from the reasons afterwards: a selection is blocked for uid
/// U when some reason's scope contains U, and for everyone when some reason has no scope.
public struct Scope: Hashable, Sendable, Codable, CustomStringConvertible {
    /// As given: user names and `@group` names, in order, without repeats.
    public var names: [String]
    /// The uids the names stood for when the daemon accepted them, sorted, without repeats
    /// (empty in a request: clients send names, the daemon resolves them).
    public var uids: [UInt32]

    public init(names: [String], uids: [UInt32] = []) {
        self.names = Registry.unique(names)
        self.uids = Array(Set(uids)).sorted()
    }

    public func contains(_ uid: UInt32) -> Bool { uids.contains(uid) }

    /// `kid, @kids`.
    public var description: String { names.joined(separator: ", ") }

    /// Checks the names a client or a file gave: user names as useradd(8) takes them, or a
    /// group name after `@`; at most 64 of them.
    public static func validate(_ names: [String], what: String = "user") throws(CoreError) {
        guard names.count <= 64 else { throw CoreError(.usage, "at most 64 users or groups may share one activity; use a group (@NAME)") }
        for name in names {
            let bare = name.hasPrefix("@") ? String(name.dropFirst()) : name
            guard !bare.isEmpty, bare.utf8.count <= 32, bare.utf8.allSatisfy(isNameByte), bare.utf8.first != UInt8(ascii: "-") else {
                throw CoreError(.usage, "'\(name)' is not a \(what) name; give a user name such as kid, or a group as @kids")
            }
        }
    }

    static func isNameByte(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c == 0x5f || c == 0x2d || c == 0x2e || c == 0x24
    }

    /// §5 for scopes: root and members of `blockd-admin` may scope an activity to anyone (or
    /// to no one in particular: the whole machine); a plain member of `blockd` only to
    /// themselves, which is also their scope when they give none (`own`).
    public static func authorize(_ requested: Scope?, peer: Peer, own: Scope) throws(CoreError) -> Scope? {
        if peer.isRoot || peer.isAdmin { return requested }
        guard let requested else { return own }
        guard !requested.uids.isEmpty, requested.uids.allSatisfy({ $0 == peer.uid }) else {
            throw CoreError(.permissionDenied, "a member of group 'blockd' may block only for themselves, not for \(requested); ask root or a member of group 'blockd-admin' to add it")
        }
        return requested
    }

    /// Whether someone with uid `uid` sees an activity with this scope, started by `origin`:
    /// machine-wide ones, their own, and those they created.
    public static func visible(_ scope: Scope?, origin: Origin, to uid: UInt32) -> Bool {
        guard let scope else { return true }
        if case .client(let creator) = origin, creator == uid { return true }
        return scope.contains(uid)
    }
}

extension Activity {
    /// Who the activity applies to (nil: the whole machine).
    public var scope: Scope? {
        switch self {
        case .block(let b): b.users
        case .schedule(let s): s.users
        case .limit(let l): l.users
        }
    }

    /// Whom it blocks at `t`, as a reason's scope (nil: the whole machine): its scope, but for
    /// a limit only the people whose own allowance is used up (§9, `Limit.blockedScope`).
    public func blockedScope(at t: Date) -> Scope? {
        if case .limit(let l) = self { return l.blockedScope(at: t) }
        return scope
    }

    /// Whether what it blocks can differ from one user to another: it has a user scope, or it
    /// is a limit (each person's own allowance).
    public var isPerPerson: Bool { scope != nil || kind == .limit }

    /// The activity as `viewer` sees it: a limit with their own figures only (§9, A1).
    public func seen(by viewer: UInt32?) -> Activity {
        if case .limit(let l) = self { return .limit(l.seen(by: viewer)) }
        return self
    }

    /// The same activity with scope `scope`.
    public func scoped(_ scope: Scope?) -> Activity {
        switch self {
        case .block(var b): b.users = scope; return .block(b)
        case .schedule(var s): s.users = scope; return .schedule(s)
        case .limit(var l): l.users = scope; return .limit(l)
        }
    }
}

extension Policy.Blocked {
    /// The uids this selection is blocked for, or nil when it is blocked for the whole
    /// machine (some reason has no scope).
    public var users: [UInt32]? {
        var uids = Set<UInt32>()
        for reason in reasons {
            guard let scope = reason.scope else { return nil }
            uids.formUnion(scope.uids)
        }
        return uids.sorted()
    }

    /// Whether it is blocked for `uid`.
    public func blocks(_ uid: UInt32) -> Bool { users.map { $0.contains(uid) } ?? true }

    /// The selection as seen by `uid`: only the reasons that apply to them (nil: none does),
    /// and, given `until`, when it is lifted for them (another user's longer block is not theirs).
    public func seen(by uid: UInt32, until: ((String) -> Date?)? = nil) -> Policy.Blocked? {
        let mine = reasons.filter { $0.scope.map { $0.contains(uid) } ?? true }
        guard !mine.isEmpty else { return nil }
        var b = self
        b.reasons = mine
        if let until { b.until = until(selection) }
        return b
    }
}

extension Selection {
    /// E8: browser policies are machine-wide, so a selection with URL paths cannot be scoped
    /// to users; the refusal says what to do instead.
    public func checkScopable(_ scope: Scope?) throws(CoreError) {
        guard let scope, !paths.isEmpty else { return }
        throw CoreError(.usage, "'\(name)' blocks URL paths (\(paths.joined(separator: ", "))), which browsers enforce for every user of the machine; it cannot be limited to \(scope). Block it for the whole machine, or use a selection of whole domains for \(scope)")
    }
}

extension Policy.Blocked {
    /// The names of the users and groups it is blocked for (nil: the whole machine).
    public var userNames: [String]? {
        var names: [String] = []
        for reason in reasons {
            guard let scope = reason.scope else { return nil }
            names += scope.names.filter { !names.contains($0) }
        }
        return names
    }
}

extension Registry {
    /// Starting a block again extends it (T10) only for the same people: a block of that name
    /// for others is neither widened nor narrowed by someone else's start.
    static func checkSameScope(_ existing: Block, _ users: Scope?) throws(CoreError) {
        guard existing.users?.uids != users?.uids else { return }
        let theirs = existing.users.map { "for \($0)" } ?? "for the whole machine"
        throw CoreError(.exists, "a block named '\(existing.name)' is already running \(theirs); give this one another name with --name")
    }
}
