import FoundationEssentials

/// §7: a block or schedule never loses its effect because the configuration changed or
/// broke. What each blocked selection was enforced with is kept in the state file; while the
/// selection stays blocked it keeps those targets (targets a reload adds apply at once), and a
/// selection removed from the configuration keeps its last targets for every activity that
/// still names it.

extension Core {
    /// Brings `enforcing` (the targets enforcement is asked for, per blocked selection) up to
    /// date for the selections `looked` at, or for every blocked one when `full`, and records
    /// each one's targets in `state.targets`. Returns the selections whose targets changed
    /// (nil: all may have) and those blocked with no targets at all (removed from the
    /// configuration before they were ever enforced), with why: those are not enforced, never
    /// "Blocked" (§7 "Truth"). The work is the size of `looked`, not of what is blocked.
    mutating func updateTargets(looked: Set<String>, full: Bool, now: Date) -> (changed: Set<String>?, unresolved: [String: String]) {
        var unresolved: [String: String] = [:]
        var changed: Set<String> = []
        let names: [String]
        if full {
            names = registry.index.blockedSelections.filter(isBlockedNow)
            enforcing = TargetTable()
            catalogAnswers = [:]
            // Selections not blocked now keep their last targets while an activity still
            // names them, for the day the configuration no longer does.
            for name in state.targets.keys.filter({ !registry.index.isNamed($0) }) {
                setTarget(name, nil)
            }
        } else {
            names = looked.sorted()
        }
        for name in names {
            guard isBlockedNow(name) else {
                catalogAnswers[name] = nil
                if enforcing.set(name, nil) { changed.insert(name) }
                continue
            }
            switch target(of: name, now: now) {
            case .success(let target):
                if state.targets[name] != target {
                    setTarget(name, target)
                }
                resolved[name] = target
                // W2: recorded whole, enforced without what is always allowed, per user.
                let scoped = scoped([config.alwaysAllowed.applied(to: target)], reasons: { self.blockedReasons($0) ?? [] })
                if enforcing.set(name, scoped) { changed.insert(name) }
            case .failure(let problem):
                unresolved[name] = problem.message
                if enforcing.set(name, nil) { changed.insert(name) }
            }
        }
        targetsStale = false
        return (full ? nil : changed, unresolved)
    }

    /// The targets `name` (blocked now) is enforced with: the configured ones, with those it
    /// was enforced with while it stays applied (§7); or why it has none.
    private mutating func target(of name: String, now: Date) -> Result<Selection, CoreError> {  // why it has none (§7 "Truth")
        // The catalog's answer for a name only changes with the configuration, so it is
        // worked out once while the name stays blocked, not at every reconcile.
        let answer = catalogAnswers[name] ?? Result { () throws(CoreError) in try config.catalog.resolve(name) }
        catalogAnswers[name] = answer
        switch (answer, state.targets[name]) {
        case (.success(let c), let p?) where applied[name] != nil: return .success(Core.union(c, p))
        case (.success(let c), _): return .success(c)
        case (.failure, let p?): return .success(p)
        case (.failure(let problem), nil):
            let cause = "it is not in the configuration and was never enforced, so blockd does not know what it blocks: \(problem.message)"
            if notEnforced[name] != cause {
                recordFailure(CoreError(.internal, "cannot enforce '\(name)': \(cause)"), uid: nil, activity: name, cause: .target, now: now)
            }
            return .failure(CoreError(.unknownSelection, cause))
        }
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
            let until = registry.index.until(name, from: now).map { " at \(local.spoken($0, from: now))" } ?? ""
            let keeps = holders.count > 1 ? "keep its targets until they end" : "keeps its targets until it ends"
            emit(.journal(JournalEntry("\(what); \(who.isEmpty ? "it" : who) \(keeps)\(until)", priority: .notice, event: .reload,
                             fields: [(.selection, name), (.activity, holders.map(\.name).joined(separator: " "))])))
        }
    }
}
