/// W2: `AlwaysAllowed=` in blockd.conf, selections no block ever covers (a school's site, the
/// text editor): whatever blocks them, by name or as part of a larger site, leaves them out,
/// and every allow-only window lets them through.
///
/// Applied to what the engine enforces, never to what it records: a blocked selection keeps its
/// targets in the state file, and `AlwaysAllowed=` changed by a reload takes effect at once.
public struct AlwaysAllowed: Equatable, Sendable {
    public var selections: [Selection]
    /// Their domains and the hosts of their URL prefixes, normalized: never blocked by name
    /// (a page cannot load if its host gives the sink).
    public let hosts: Set<String>
    /// Their domains alone, and their URL prefixes: what no blocked prefix may fall under.
    let domains: Set<String>, prefixes: [String]
    public let apps: Set<String>

    public init(_ selections: [Selection]) {
        self.selections = selections
        var domains = Set<String>(), prefixes: [String] = [], apps = Set<String>()
        for s in selections {
            for d in s.domains { if let n = try? Domain.normalize(d) { domains.insert(n) } }
            for p in s.paths { if let n = try? URLPrefix.normalize(p) { prefixes.append(n) } }
            apps.formUnion(s.apps)
        }
        (self.domains, self.prefixes, self.apps) = (domains, prefixes, apps)
        hosts = domains.union(prefixes.map(URLPrefix.host(of:)))
    }

    public var isEmpty: Bool { selections.isEmpty }

    /// `selection` as it is enforced: without the domains an always-allowed site or page needs,
    /// the page prefixes under an always-allowed site or prefix, and the always-allowed apps; `exceptions` the always-allowed hosts under a domain it
    /// still blocks (the NSS module and Chromium let them through, the hosts file never lists
    /// them). An allow-only selection allows them too.
    public func applied(to selection: Selection) -> Selection {
        guard !isEmpty else { return selection }
        var s = selection
        if var allowed = s.allowed {
            for a in selections where !allowed.contains(where: { $0.name == a.name }) { allowed.append(a) }
            s.allowed = allowed
            return s
        }
        s.domains = s.domains.filter { d in (try? Domain.normalize(d)).map { Site.cover(of: $0, in: hosts) == nil } ?? true }
        s.paths = s.paths.filter { p in
            guard let n = try? URLPrefix.normalize(p) else { return true }
            return Site.cover(of: URLPrefix.host(of: n), in: domains) == nil && !prefixes.contains(where: n.hasPrefix)
        }
        s.apps = s.apps.filter { !apps.contains($0) }
        let blocked = Set(s.domains.compactMap { try? Domain.normalize($0) })
        let under = hosts.filter { Site.cover(of: $0, in: blocked) != nil }.sorted()
        s.exceptions = under.isEmpty ? nil : under
        return s
    }
}
