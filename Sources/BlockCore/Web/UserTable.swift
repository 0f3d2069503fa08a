import FoundationEssentials

/// The per-user table that libnss_blockd.so.2 reads (U3): for one uid, the names blocked for
/// that user alone, one a line. blockd keeps one file per uid under `directory`, named by the
/// uid in decimal, owned by root and readable by that user only (`access(uid:owner:)`): the
/// module trusts nothing else, and nobody else learns what is blocked for whom.
///
/// One more table, `all` (`everyone`), holds the names blocked machine-wide, readable by every
/// user: the hosts file lists those too, but only by exact name, and the module's match covers
/// the whole site (W1).
///
/// A listed name covers itself and every name under it (W1): `example.com` blocks
/// `www.example.com` and `a.b.example.com`, not `badexample.com`. The module ignores ASCII
/// case and one trailing dot of the name looked up, blank lines and `#` lines.
public enum UserTable {
    /// The key of the machine-wide table. (uid_t)-1 is no user's uid: the kernel reserves it
    /// for "unchanged" in setresuid(2) and chown(2).
    public static let everyone = UInt32.max

    /// The directory the NSS module reads; compiled into it too (nss/nss_blockd.c), never
    /// taken from the environment. blockd's default for `UserTablesDirectory=`.
    public static let directory = "/run/blockd/users"

    /// The table's file name for `uid`.
    public static func fileName(uid: UInt32) -> String { uid == everyone ? "all" : String(uid) }

    /// The key a table's file name stands for (nil: not a table blockd writes).
    public static func uid(fileName name: String) -> UInt32? {
        if name == "all" { return everyone }
        guard let uid = UInt32(name), uid != everyone, String(uid) == name else { return nil }
        return uid
    }

    /// The bytes of `uid`'s table: one header line, then the domains normalised as for the
    /// hosts file, sorted and without repeats, each ending in LF. The same input always gives
    /// the same bytes, so an unchanged table is never rewritten. A name that could not go into
    /// the hosts file is refused the same way.
    ///
    /// W2: with `allowOnly` (the hosts an allow-only window lets through), the table also says
    /// "everything but": a `*` line, then `!name` for each allowed host that no listed name
    /// covers (a blocked site inside the window stays blocked). The module lets the most
    /// specific covering line decide, a listed name winning over a `!` of the same name; the
    /// `*` of the table `all` holds for login users only (uids 1000 to 60000), so system
    /// services and root keep resolving.
    ///
    /// W2: `exceptions` (always-allowed hosts under a listed name) get `!` lines with or
    /// without a window: being more specific than the listed name, they win.
    public static func render(uid: UInt32, domains: some Sequence<String>, allowOnly: Set<String>? = nil,
                              exceptions: Set<String> = []) throws(CoreError) -> [UInt8] {
        try render(uid: uid, sorted: sortedNames(domains), allowOnly: allowOnly, exceptions: exceptions)
    }

    /// `render` for names already normalised, in byte order and without repeats
    /// (`sortedNames`, `merged`).
    public static func render(uid: UInt32, sorted: [String], allowOnly: Set<String>? = nil,
                              exceptions: Set<String> = []) throws(CoreError) -> [UInt8] {
        let whose = uid == everyone ? "every user" : "uid \(uid) only"
        var out = Array("# blockd: names blocked for \(whose), each with the names under it; read by libnss_blockd.so.2, rewritten by blockd(8)\n".utf8)
        out.reserveCapacity(sorted.reduce(out.count) { $0 + $1.utf8.count + 1 })
        for name in sorted {
            out += name.utf8
            out.append(10)
        }
        let order = { (a: String, b: String) in a.utf8.lexicographicallyPrecedes(b.utf8) }
        var allowed = exceptions
        if let allowOnly {
            let names = Set(sorted)
            out += Array("# allow-only: every other name is blocked but these, each with the names under it\n*\n".utf8)
            allowed.formUnion(allowOnly.filter { Site.cover(of: $0, in: names) == nil })
        } else if !exceptions.isEmpty {
            out += Array("# always allowed, though under a name above\n".utf8)
        }
        for host in allowed.sorted(by: order) { out += Array("!\(try Domain.normalize(host))\n".utf8) }
        return out
    }

    /// `domains` normalised, in byte order, without repeats. Sorted by their first eight bytes
    /// as one integer, the rest compared only on a tie: the machine-wide table of a big list
    /// sorts 100,000 names on every change. A normalised name is ASCII with no NUL, so the
    /// zero-padded key orders as the bytes do, and String's < is byte order.
    static func sortedNames(_ domains: some Sequence<String>) throws(CoreError) -> [String] {
        var keyed: [(key: UInt64, name: String)] = []
        keyed.reserveCapacity(domains.underestimatedCount)
        for domain in domains {
            let name = try Domain.normalize(domain)
            var key: UInt64 = 0, taken = 0
            for byte in name.utf8.prefix(8) {
                key = key << 8 | UInt64(byte)
                taken += 1
            }
            keyed.append((key << (8 * UInt64(8 - taken)), name))
        }
        keyed.sort { $0.key != $1.key ? $0.key < $1.key : $0.name < $1.name }
        var out: [String] = []
        out.reserveCapacity(keyed.count)
        for entry in keyed where out.last != entry.name { out.append(entry.name) }
        return out
    }

    /// The names a table lists as blocked, in order (what the module would match), for checks
    /// and tests; `*` and `!` lines are not among them (`allowed(in:)`).
    public static func domains(in table: [UInt8]) -> [String] {
        lines(table).filter { $0 != "*" && !$0.hasPrefix("!") }
    }

    /// W2: nil when the table has no `*` line; else the hosts its `!` lines let through.
    public static func allowed(in table: [UInt8]) -> [String]? {
        let all = lines(table)
        guard all.contains("*") else { return nil }
        return all.filter { $0.hasPrefix("!") }.map { String($0.dropFirst()) }
    }

    static func lines(_ table: [UInt8]) -> [String] {
        table.split(separator: 10).compactMap { line in
            let text = String(decoding: line, as: UTF8.self).trimmed()
            return text.isEmpty || text.hasPrefix("#") ? nil : text
        }
    }

    /// How a table must be stored so that only its user (and root) can read it and nobody but
    /// root can change it. The file stays root's: an owner could chmod it or rewrite it.
    public struct Access: Equatable, Sendable {
        /// The permission bits `stat` shows (with an ACL, the group bits are its mask).
        public var mode: UInt32
        /// The `system.posix_acl_access` value, or nil for none.
        public var acl: [UInt8]?
    }

    /// U3: the table of `uid`, written by `owner` (root). Mode 0640 with the POSIX ACL
    /// `user:UID:r--`, the owning group and others getting nothing (the mask shows as the group
    /// bits); the owner's own table needs no ACL (0600). `everyone` is the fallback for a file
    /// system without POSIX ACLs: 0644, every user can read it (said in the log and in status).
    /// The machine-wide table is 0644 for everyone, as the hosts file is.
    public static func access(uid: UInt32, owner: UInt32, everyone: Bool = false) -> Access {
        if uid == owner { return Access(mode: 0o600, acl: nil) }
        if everyone || uid == UserTable.everyone { return Access(mode: 0o644, acl: nil) }
        return Access(mode: 0o640, acl: readACL(uid: uid))
    }

    /// The access ACL `user::rw- user:UID:r-- group::--- mask::r-- other::---` in the kernel's
    /// xattr format (<linux/posix_acl_xattr.h>): the little-endian u32 version 2, then one
    /// entry per tag (u16 tag, u16 perm, u32 id; the id is ACL_UNDEFINED_ID except for a named
    /// user), in the order the kernel keeps and gives back (by tag, then id).
    public static func readACL(uid: UInt32) -> [UInt8] {
        let undefined = UInt32.max
        let entries: [(tag: UInt16, perm: UInt16, id: UInt32)] = [
            (0x01, 6, undefined),  // ACL_USER_OBJ: the owner, root, reads and writes
            (0x02, 4, uid),        // ACL_USER: the table's user reads
            (0x04, 0, undefined),  // ACL_GROUP_OBJ: the owning group gets nothing
            (0x10, 4, undefined),  // ACL_MASK: at most read for named entries
            (0x20, 0, undefined),  // ACL_OTHER: nothing
        ]
        var out = littleEndian(UInt32(2))
        for e in entries { out += littleEndian(e.tag) + littleEndian(e.perm) + littleEndian(e.id) }
        return out
    }

    static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
}
