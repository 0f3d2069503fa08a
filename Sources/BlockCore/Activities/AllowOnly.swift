/// W2: allow-only time. A selection expression `only:editor,school` means "everything but
/// these": while an activity names it, its users may reach only the allowed selections' sites.
///
/// It is a selection like any other for the rest of blockd (the index, the union of T5,
/// reasons, the journal, more time, per-user scopes), so an allow-only block, schedule or
/// per-user window needs nothing of its own there; `Catalog.resolve` turns the expression into
/// a `Selection` whose `allowed` lists the resolved selections, and the enforcers that can say
/// "everything but" read that (the NSS module's tables, the Chromium-family policy).
public enum AllowOnly {
    public static let prefix = "only:"
    /// More would make a table line, a policy and a journal field unreadable, not stricter.
    public static let maxAllowed = 64

    /// Who a window for everyone holds for: login users (uids 1000 to 60000, where Debian's adduser
    /// puts people), never root or system services, so the machine and the
    /// session's own services keep working. The NSS module (`LOGIN_UID_MIN`, `LOGIN_UID_MAX`),
    /// the firewall and the app shield use the same range.
    public static let loginUsers: ClosedRange<UInt32> = 1000...60000

    /// Whether `name` is an allow-only expression.
    public static func isExpression(_ name: String) -> Bool { name.hasPrefix(prefix) }

    /// The expression allowing `names` as typed (blockc's `--allow-only`; `Mode=allow-only`).
    public static func expression(allowing names: [String]) -> String { prefix + names.joined(separator: ",") }

    /// The canonical name for the resolved `names`: sorted, each once, so the same allowed set
    /// is the same selection whoever names it in whichever order (two windows allowing the same
    /// things are one selection with two reasons).
    public static func name(allowing names: [String]) -> String { prefix + Set(names).sorted().joined(separator: ",") }

    /// How people read a selection's name: `everything but editor, school` for an expression,
    /// the name itself otherwise (status, watch lines, the journal's sentences; fields keep
    /// the name).
    public static func display(_ name: String) -> String {
        guard isExpression(name) else { return name }
        return "everything but " + name.dropFirst(prefix.count).split(separator: ",").joined(separator: ", ")
    }

    /// The parts of an expression, checked: 1 to `maxAllowed` non-empty names, none itself an
    /// expression.
    public static func parts(of expression: String) throws(CoreError) -> [String] {
        let parts = expression.dropFirst(prefix.count).split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !parts.contains(where: \.isEmpty), (1...maxAllowed).contains(parts.count) else {
            throw CoreError(.usage, "'\(Domain.quoted(expression, limit: 60).dropFirst().dropLast())' allows nothing or has an empty part: write only:NAME,NAME with 1 to \(maxAllowed) selections, sites or apps' selections, such as only:school,editor")
        }
        if let nested = parts.first(where: isExpression) {
            throw CoreError(.usage, "'\(nested)' inside an allow-only expression: list what is allowed once, such as only:school,editor")
        }
        return parts
    }
}

extension Selection {
    /// W2: whether this is an allow-only selection ("everything but `allowed`").
    public var isAllowOnly: Bool { allowed != nil }

    /// W2: the host names an allow-only selection lets through (its allowed selections' domains
    /// and the hosts of their URL prefixes), normalized; empty for any other selection.
    public var allowedHosts: Set<String> {
        var hosts = Set<String>()
        for selection in allowed ?? [] {
            for domain in selection.domains { if let d = try? Domain.normalize(domain) { hosts.insert(d) } }
            for path in selection.paths { if let p = try? URLPrefix.normalize(path) { hosts.insert(URLPrefix.host(of: p)) } }
        }
        return hosts
    }
}
