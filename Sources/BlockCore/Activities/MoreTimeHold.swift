import FoundationEssentials

/// M5: what a grant cannot lift. A grant lifts one selection over the activities it was given
/// over (M3); the selection's sites and apps may still be held by another reason: one the grant
/// was not given over (`more LIMIT` gives the limit allowance and leaves a bedtime in place),
/// or another blocked selection that covers the same sites or apps (a locked `reddit.com`
/// block under `more reddit`, an allow-only window). The answer names each, so that a grant
/// that lifts nothing never reads as if it did.
public struct MoreTimeHold: Equatable, Sendable {
    /// The blocked selection that holds it: the granted one itself, or another that covers some
    /// of its sites or apps.
    public var selection: String
    public var activity: String
    public var kind: Activity.Kind
    /// That activity's more-time policy, and whether it is a `--lock` block (which gives none).
    public var mode: MoreTimeMode
    public var locked: Bool
    /// When that reason ends (nil: no end in sight).
    public var until: Date?

    public init(selection: String, activity: String, kind: Activity.Kind, mode: MoreTimeMode, locked: Bool, until: Date?) {
        (self.selection, self.activity, self.kind, self.mode, self.locked, self.until) = (selection, activity, kind, mode, locked, until)
    }
}

/// M5: how much of the selection a grant lifts now (the answer's `lifts`).
public enum MoreTimeLift: String, CaseIterable, Sendable {
    /// Every site and app of the selection: nothing else holds it.
    case all
    /// Some of its sites or apps stay blocked by another selection.
    case some
    /// It stays blocked as a whole: another reason holds it, or other selections hold every
    /// site and app it has.
    case nothing
}

/// M1, M5: what `more NAME` was taken as (the answer's `named`): a selection, a limit's
/// name (more use of its allowance today), or allowed hours' name (time at the screen
/// during them).
public enum MoreTimeNamed: String, CaseIterable, Sendable {
    case selection, limit, hours
}

extension Selection {
    /// M5: which of this selection's targets (domains, URL prefixes, apps, each as written)
    /// `other`, blocked too, holds: a domain stands for its whole site (W1), a URL prefix is
    /// held by a domain of its host or a shorter prefix, an app by the same app. An allow-only
    /// selection (W2) holds every site and app it does not allow.
    public func targets(heldBy other: Selection) -> Set<String> {
        var held = Set<String>()
        if other.isAllowOnly {
            let allowedHosts = other.allowedHosts
            let allowedApps = Set((other.allowed ?? []).flatMap(\.apps))
            for d in domains where !Selection.covers(allowedHosts, Selection.host(d)) { held.insert(d) }
            for p in paths where !Selection.covers(allowedHosts, Selection.host(URLPrefix.host(of: p))) { held.insert(p) }
            for a in apps where !allowedApps.contains(a) { held.insert(a) }
            return held
        }
        let sites = Set(other.domains.map(Selection.host))
        let prefixes = other.paths.map { $0.lowercased() }
        for d in domains where Selection.covers(sites, Selection.host(d)) { held.insert(d) }
        for p in paths {
            let lower = p.lowercased()
            if Selection.covers(sites, Selection.host(URLPrefix.host(of: p))) || prefixes.contains(where: lower.hasPrefix) { held.insert(p) }
        }
        let apps = Set(other.apps)
        for a in self.apps where apps.contains(a) { held.insert(a) }
        return held
    }

    /// Every target of the selection, as `targets(heldBy:)` names them.
    public var allTargets: Set<String> { Set(domains + paths + apps) }

    static func host(_ name: String) -> String {
        var h = name.lowercased()
        while h.hasSuffix(".") { h.removeLast() }
        return h
    }

    /// Whether `host` is one of `sites` or a name under one (W1).
    static func covers(_ sites: Set<String>, _ host: String) -> Bool {
        var h = Substring(host)
        while true {
            if sites.contains(String(h)) { return true }
            guard let dot = h.firstIndex(of: ".") else { return false }
            h = h[h.index(after: dot)...]
        }
    }
}
