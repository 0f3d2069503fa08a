import Foundation

/// The per-user table that libnss_blockd.so.2 reads (U3): for one uid, the names blocked for
/// that user alone, one a line. blockd keeps one file per uid under `directory`, named by the
/// uid in decimal, owned by root with mode 0644; the module trusts nothing else.
///
/// Names match exactly, as in the hosts file's section (E1): `example.com` does not block
/// `www.example.com`, which a selection lists on its own, as the catalog does. The module
/// ignores ASCII case and one trailing dot of the name looked up, blank lines and `#` lines.
public enum UserTable {
    /// The directory the NSS module reads; compiled into it too (nss/nss_blockd.c), never
    /// taken from the environment.
    public static let directory = "/run/blockd/users"

    /// The table's file name for `uid`.
    public static func fileName(uid: UInt32) -> String { String(uid) }

    /// The bytes of `uid`'s table: one header line, then the domains normalised as for the
    /// hosts file, sorted and without repeats, each ending in LF. The same input always gives
    /// the same bytes, so an unchanged table is never rewritten. A name that could not go into
    /// the hosts file is refused the same way.
    public static func render(uid: UInt32, domains: some Sequence<String>) throws(CoreError) -> [UInt8] {
        var names = Set<String>()
        for domain in domains { names.insert(try Domain.normalize(domain)) }
        var out = Array("# blockd: names blocked for uid \(uid) only; read by libnss_blockd.so.2, rewritten by blockd(8)\n".utf8)
        for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            out += name.utf8
            out.append(10)
        }
        return out
    }

    /// The names a table lists, in order (what the module would match), for checks and tests.
    public static func domains(in table: [UInt8]) -> [String] {
        table.split(separator: 10).compactMap { line in
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            return text.isEmpty || text.hasPrefix("#") ? nil : text
        }
    }
}
