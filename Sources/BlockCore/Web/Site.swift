/// W1: a domain in a selection stands for its whole site, the name and every name under it.
///
/// Each layer covers the site as far as it can: the NSS module and Chromium's `URLBlocklist`
/// match every subdomain; the hosts file has no wildcards, so it lists the name and its
/// common prefixes (`hostsNames`); the firewall refuses the addresses of the names blockd
/// looks up, which are the same. The rules on names here are pure: every name given is
/// already in `Domain.normalize`'s form.
public enum Site {
    /// The first labels under which sites commonly serve the same pages: the hosts file lists
    /// `www.` and `m.` forms of every blocked name that does not begin with one of them.
    public static let commonPrefixes = ["www", "m"]

    /// The names the hosts file lists for `domain`: the domain, then its common-prefix forms
    /// (none when its first label is already one of them, or a form would be too long).
    public static func hostsNames(_ domain: String) -> [String] {
        // Bytes, not Characters: this runs for each of 100,000 names of a big list, and a
        // normalised name is ASCII.
        let first = domain.utf8.prefix { $0 != UInt8(ascii: ".") }
        guard !commonPrefixes.contains(where: { $0.utf8.elementsEqual(first) }) else { return [domain] }
        var out = [domain]
        out.reserveCapacity(commonPrefixes.count + 1)
        for prefix in commonPrefixes where prefix.utf8.count + 1 + domain.utf8.count <= Domain.maxLength {
            var name = prefix
            name.reserveCapacity(prefix.utf8.count + 1 + domain.utf8.count)
            name += "."
            name += domain
            out.append(name)
        }
        return out
    }

    /// Whether `name` is `domain` or a name under it (`a.b.example.com` under `example.com`;
    /// `badexample.com` is not).
    public static func covers(_ domain: String, _ name: String) -> Bool {
        let d = domain.utf8, n = name.utf8
        guard n.count >= d.count, n.reversed().starts(with: d.reversed()) else { return false }
        return n.count == d.count || n.dropLast(d.count).last == UInt8(ascii: ".")
    }

    /// The entry of `blocked` that covers `name`: the name itself, else its nearest parent
    /// domain in the set; nil when none does. One set lookup per label.
    public static func cover(of name: String, in blocked: Set<String>) -> String? {
        cover(of: name) { blocked.contains($0) }
    }

    /// `cover(of:in:)` over any set of names: `contains` says whether one is in it.
    public static func cover(of name: String, where contains: (String) -> Bool) -> String? {
        var rest = Substring(name)
        while true {
            if contains(String(rest)) { return String(rest) }
            guard let dot = rest.firstIndex(of: ".") else { return nil }
            rest = rest[rest.index(after: dot)...]
        }
    }
}

extension Site {
    /// What a pasted web address names (W1): `https://www.youtube.com/` the site
    /// `youtube.com`, `https://www.youtube.com/watch?v=x` the page prefix
    /// `youtube.com/watch?v=x` (E8: blocked in browsers only). The scheme, any user name,
    /// port and `#fragment` are dropped, a leading `www.` or `m.` too, since the site covers
    /// it. `summary` says what was made of the address, for the person who gave it.
    public struct Reading: Equatable, Sendable {
        public enum Kind: Equatable, Sendable { case site, prefix }
        public var kind: Kind
        /// A `Domain.normalize` name (`site`) or a `URLPrefix.normalize` prefix (`prefix`).
        public var target: String

        public func summary(of given: String) -> String {
            switch kind {
            case .site: "read \(Domain.quoted(given)) as the site \(target) and every name under it"
            case .prefix: "read \(Domain.quoted(given)) as the pages under \(target), blocked in browsers only (the rest of the site stays open; name the site \(URLPrefix.host(of: target)) to block all of it)"
            }
        }
    }

    /// The reading of `text` when it is an `http://` or `https://` address; nil for anything
    /// else (a domain, a prefix without a scheme, a selection's name). A bad host or path is
    /// the `.invalidDomain` error of `Domain.normalize` or `URLPrefix.normalize`.
    public static func reading(url text: String) throws(CoreError) -> Reading? {
        let rest = URLPrefix.strippingScheme(text)
        guard rest.count < text.count else { return nil }
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var tail = rest.dropFirst(authority.count)
        if let fragment = tail.firstIndex(of: "#") { tail = tail[..<fragment] }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if let colon = authority.lastIndex(of: ":"), authority[authority.index(after: colon)...].allSatisfy(\.isNumber) {
            authority = authority[..<colon]
        }
        var host = try Domain.normalize(String(authority))
        for prefix in commonPrefixes where host.hasPrefix(prefix + ".") {
            let parent = String(host.dropFirst(prefix.count + 1))
            if parent.contains(".") { host = parent }
        }
        while tail.hasSuffix("?") { tail = tail.dropLast() }
        guard !tail.isEmpty, tail != "/" else { return Reading(kind: .site, target: host) }
        return Reading(kind: .prefix, target: try URLPrefix.normalize(host + (tail.hasPrefix("/") ? "" : "/") + tail))
    }
}
