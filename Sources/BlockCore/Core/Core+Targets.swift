import FoundationEssentials

/// §7: a block or schedule never loses its effect because the configuration changed or
/// broke. What each blocked selection was enforced with is kept in the state file; while the
/// selection stays blocked it keeps those targets (targets a reload adds apply at once), and a
/// selection removed from the configuration keeps its last targets for every activity that
/// still names it.
extension Core {
    /// The targets to enforce for the blocked selections `names`, recorded in `state.targets`,
    /// and the selections that have none (removed from the configuration before they were ever
    /// enforced), with why: those are not enforced, never "Blocked" (§7 "Truth").
    mutating func enforcementTargets(_ names: [String], now: Date) -> (targets: [Selection], unresolved: [String: String]) {
        var kept: [String: Selection] = [:]
        var out: [Selection] = []
        var unresolved: [String: String] = [:]
        var looked: [String: Result<Selection, CoreError>] = [:]
        defer { catalogAnswers = looked }  // kept for the names blocked now only
        for name in names {
            var current: Selection?
            var problem = ""
            // The catalog's answer for a name only changes with the configuration, so it is
            // worked out once while the name stays blocked, not at every reconcile.
            let answer = catalogAnswers[name] ?? Result { () throws(CoreError) in try config.catalog.resolve(name) }
            looked[name] = answer
            switch answer {
            case .success(let c): current = c
            case .failure(let error): problem = error.message
            }
            let target: Selection
            switch (current, state.targets[name]) {
            case (let c?, let p?) where applied[name] != nil: target = Core.union(c, p)
            case (let c?, _): target = c
            case (nil, let p?): target = p
            case (nil, nil):
                let cause = "it is not in the configuration and was never enforced, so blockd does not know what it blocks: \(problem)"
                if notEnforced[name] != cause { recordFailure(CoreError(.internal, "cannot enforce '\(name)': \(cause)"), uid: nil, activity: nil, now: now) }
                unresolved[name] = cause
                continue
            }
            kept[name] = target
            resolved[name] = target
            out.append(config.alwaysAllowed.applied(to: target))  // W2: recorded whole, enforced without them
        }
        // Selections not blocked now keep their last targets while an activity still names
        // them, for the day the configuration no longer does.
        for (name, pin) in state.targets where kept[name] == nil && registry.index.isNamed(name) { kept[name] = pin }
        state.targets = kept
        return (out, unresolved)
    }

    /// The configured selection with the targets it was enforced with added back. Linear in
    /// the targets: a selection of 100,000 domains is merged at every reconcile while blocked.
    public static func union(_ current: Selection, _ pinned: Selection) -> Selection {
        var s = current
        s.domains = merged(current.domains, pinned.domains)
        s.apps = merged(current.apps, pinned.apps)
        s.paths = merged(current.paths, pinned.paths)  // E8
        return s
    }

    /// `current`, then what of `pinned` it lacks, in `pinned`'s order.
    static func merged(_ current: [String], _ pinned: [String]) -> [String] {
        if current == pinned { return current }  // the usual case, and often the same storage
        let have = Set(current)
        return current + pinned.filter { !have.contains($0) }
    }

    /// After a reload: says, for every blocked selection the new configuration removed or
    /// narrowed, that its activities keep their targets until they end.
    public mutating func logKeptTargets(now: Date) {
        for name in applied.keys.sorted() {
            guard let pinned = state.targets[name] else { continue }
            let what: String
            if let current = try? config.catalog.resolve(name) {
                let lost = pinned.domains.filter { !current.domains.contains($0) } + pinned.apps.filter { !current.apps.contains($0) }
                    + pinned.paths.filter { !current.paths.contains($0) }
                guard !lost.isEmpty else { continue }
                what = "Selection '\(name)' lost \(lost.count) target\(lost.count == 1 ? "" : "s") in the configuration"
            } else {
                what = "Selection '\(name)' was removed from the configuration"
            }
            let holders = registry.index.activities(covering: name).filter { $0.activeWindow(at: now, clock: local) != nil }
            let who = holders.map { "\($0.kind.rawValue) '\($0.name)'" }.joined(separator: " and ")
            let until = registry.index.until(name, from: now).map { " at \(local.iso8601($0))" } ?? ""
            let keeps = holders.count > 1 ? "keep its targets until they end" : "keeps its targets until it ends"
            emit(.journal(JournalEntry("\(what); \(who.isEmpty ? "it" : who) \(keeps)\(until)", priority: .notice, event: .reload,
                             fields: [(.selection, name), (.activity, holders.map(\.name).joined(separator: " "))])))
        }
    }
}
