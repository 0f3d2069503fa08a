import FoundationEssentials

/// The user database as a value (per-user blocks, A1): who has which uid and name, which groups
/// hold whom, and so each uid's rank, in one place. The edge reads it (the daemon: the system's
/// passwd and group, UsersTable+System.swift; a test: the people it names) and hands it to the
/// core, which only looks things up in it: no file and no getpw*/getgr* call is reachable from
/// the core. Names the edge has not read are simply not known here.
public struct UsersTable: Equatable, Sendable {
    public struct User: Equatable, Sendable {
        public var name: String
        /// The primary group's gid: a user is a member of the group whose gid it is, listed or not.
        public var gid: UInt32
        public init(name: String, gid: UInt32) { (self.name, self.gid) = (name, gid) }
    }

    public struct Group: Equatable, Sendable {
        public var gid: UInt32
        /// The user names the group lists.
        public var listed: [String]
        public init(gid: UInt32, listed: [String]) { (self.gid, self.listed) = (gid, listed) }
    }

    public private(set) var users: [UInt32: User] = [:]
    public private(set) var groups: [String: Group] = [:]
    /// The uid the daemon itself runs as: an administrator of its own daemon (an unprivileged
    /// sandbox such as `make try`; root anyway on a real install).
    public var daemonUID: UInt32?
    private var uids: [String: UInt32] = [:]
    /// Each group's members by uid (listed, or theirs as primary group), kept with the table.
    private var members: [String: [UInt32]] = [:]

    /// Group `blockd-admin`: its members are administrators (A1, M1).
    public static let adminGroup = "blockd-admin"
    /// Group `blockd`: its members may change blocks (§5); everyone who can connect may read.
    public static let memberGroup = "blockd"

    public init(daemonUID: UInt32? = nil) { self.daemonUID = daemonUID }

    /// A table of these users and groups at once (the members worked out once: a whole
    /// system's database).
    public init(users: [UInt32: User], groups: [String: Group], daemonUID: UInt32? = nil) {
        (self.users, self.groups, self.daemonUID) = (users, groups, daemonUID)
        for (uid, user) in users where uids[user.name] == nil || uid < uids[user.name]! { uids[user.name] = uid }
        refreshMembers()
    }

    /// Adds (or replaces) a user.
    public mutating func add(uid: UInt32, name: String, gid: UInt32) {
        if let old = users[uid], uids[old.name] == uid { uids[old.name] = nil }
        users[uid] = User(name: name, gid: gid)
        if uids[name] == nil || uid < uids[name]! { uids[name] = uid }  // two uids, one name: the lower, as getpwnam finds the first
        refreshMembers()
    }

    /// Adds (or replaces) a group.
    public mutating func add(group: String, gid: UInt32, listed: [String]) {
        groups[group] = Group(gid: gid, listed: listed)
        refreshMembers()
    }

    /// Every entry of `other` added to this table's (a lookup the edge made one by one).
    public mutating func merge(_ other: UsersTable) {
        for (uid, user) in other.users.sorted(by: { $0.key < $1.key }) where users[uid] != user {
            users[uid] = user
            if uids[user.name] == nil || uid < uids[user.name]! { uids[user.name] = uid }
        }
        for (name, group) in other.groups where groups[name] != group { groups[name] = group }
        refreshMembers()
    }

    private mutating func refreshMembers() {
        var byGID: [UInt32: [UInt32]] = [:]
        for (uid, user) in users { byGID[user.gid, default: []].append(uid) }
        members = groups.mapValues { group in
            Array(Set(group.listed.compactMap { uids[$0] } + (byGID[group.gid] ?? []))).sorted()
        }
    }

    // MARK: Lookups

    public func uid(_ name: String) -> UInt32? { uids[name] }
    public func name(_ uid: UInt32) -> String? { users[uid]?.name }
    /// A group's members by uid (nil: no such group).
    public func members(_ group: String) -> [UInt32]? { members[group] }

    /// Whether `uid` is in `group`: listed, or theirs as primary group, or the group of the
    /// process speaking (`processGID`, SO_PEERCRED's: `sg` and `newgrp` count).
    public func isMember(_ uid: UInt32, of group: String, processGID: UInt32? = nil) -> Bool {
        guard let g = groups[group] else { return false }
        return processGID == g.gid || members[group]?.contains(uid) == true
    }

    /// The names and uids this table does not know: what the edge must look up before the core
    /// decides (`@name` for a group).
    public func lacking(names: [String], uids: [UInt32] = []) -> (names: [String], uids: [UInt32]) {
        let names = names.filter { $0.hasPrefix("@") ? groups[String($0.dropFirst())] == nil : self.uids[$0] == nil }
        return (names, uids.filter { users[$0] == nil })
    }

    // MARK: Rank (A1, §5): decided here alone

    /// A1: whether `uid` is an administrator: root, the daemon's own user, or a member of
    /// `blockd-admin`.
    public func isAdmin(_ uid: UInt32, processGID: UInt32? = nil) -> Bool {
        uid == 0 || uid == daemonUID || isMember(uid, of: Self.adminGroup, processGID: processGID)
    }

    /// §5: whether `uid` may change blocks: an administrator, or a member of `blockd`.
    public func mayModify(_ uid: UInt32, processGID: UInt32? = nil) -> Bool {
        isAdmin(uid, processGID: processGID) || isMember(uid, of: Self.memberGroup, processGID: processGID)
    }

    /// A1: who a uid is, for the authority table: root, an administrator or a member (an
    /// owner who left group blockd still owns what they set), named by user name.
    public func person(_ uid: UInt32) -> Person {
        if uid == 0 { return Person(rank: .root, name: "root") }
        return Person(rank: isAdmin(uid) ? .admin : .member, name: name(uid) ?? "#\(uid)")
    }

    /// The peer speaking as `uid` from a process of group `processGID` (nil: not known), with
    /// its rank now.
    public func peer(_ uid: UInt32, processGID: UInt32? = nil) -> Peer {
        var p = Peer(uid: uid, mayModify: mayModify(uid, processGID: processGID))
        p.isAdmin = isAdmin(uid, processGID: processGID)
        return p
    }

    // MARK: Scopes (U1)

    /// `names` resolved: every uid they stand for. An unknown user or group is an error that
    /// names it; an empty group too (it would block no one).
    public func resolve(_ names: [String]) throws(CoreError) -> Scope {
        var uids: [UInt32] = []
        for name in names {
            if name.hasPrefix("@") {
                let group = String(name.dropFirst())
                guard let members = members(group) else {
                    throw CoreError(.notFound, "no group named '\(group)' on this machine; check the name with 'getent group \(group)'")
                }
                guard !members.isEmpty else {
                    throw CoreError(.notFound, "group '\(group)' has no members, so the block would apply to no one; add users with 'usermod -aG \(group) NAME'")
                }
                uids += members
            } else {
                guard let uid = uid(name) else {
                    throw CoreError(.notFound, "no user named '\(name)' on this machine; check the name with 'getent passwd \(name)'")
                }
                uids.append(uid)
            }
        }
        return Scope(names: names, uids: uids)
    }

    /// The scope of a caller who gave none: themselves (their name, or their uid as `#1000`
    /// when it has no name).
    public func own(_ uid: UInt32) -> Scope { Scope(names: [name(uid) ?? "#\(uid)"], uids: [uid]) }
}

extension UsersTable {
    /// A table of exactly these people, for tests and tools: root, `users` by name (each its
    /// own primary group, gid = uid), `groups` with their members' uids, and `admins` besides
    /// root (members of `blockd-admin`). A uid not given has no name (`#1000`).
    public static func holding(users: [String: UInt32] = [:], groups: [String: [UInt32]] = [:], admins: Set<UInt32> = []) -> UsersTable {
        var t = UsersTable()
        let all = users.merging(["root": 0]) { given, _ in given }
        for (name, uid) in all.sorted(by: { $0.value < $1.value }) { t.add(uid: uid, name: name, gid: uid) }
        let names = Dictionary(all.map { ($0.value, $0.key) }) { a, b in min(a, b) }
        var nextGID: UInt32 = 900_000
        func gid() -> UInt32 { nextGID += 1; return nextGID }
        for (group, uids) in groups.sorted(by: { $0.key < $1.key }) {
            t.add(group: group, gid: gid(), listed: uids.compactMap { names[$0] })
        }
        let adminUIDs = admins.union(groups[adminGroup] ?? [])
        if !adminUIDs.isEmpty { t.add(group: adminGroup, gid: gid(), listed: adminUIDs.sorted().compactMap { names[$0] }) }
        return t
    }
}
