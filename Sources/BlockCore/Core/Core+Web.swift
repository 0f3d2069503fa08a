import FoundationEssentials

/// B2: web time. blockd's browser extension says, through its native-messaging host, which
/// site is in the focused window's visible tab while the person is active (`web`); the core
/// keeps the latest word per user and per reporter (the host's connection: a person may run
/// two browsers), in memory only, and counts it in the report's ledger (`web`, and `used` for
/// the named selections whose sites cover it) and in the limits whose selections' sites cover
/// it (B3, one interval with their apps' time). What a reporter said ends with its connection
/// (`webEnded`); after a restart nothing is in a browser until a host says so again.
extension Core {
    /// `web`: the caller's own word (by SO_PEERCRED), for the connection it came on.
    mutating func web(_ host: String?, peer: Peer, now: Date) -> Change {
        let site = host.flatMap(Request.webSite)
        let changed = setWebSite(site, uid: peer.uid, reporter: peer.connection ?? 0, now: now)
        var change = Change(saves: changed, answer: .reply(["site": site.map { .string($0) } ?? .null,
                                                             "counted": .array(site.map(webSelections)?.map { .string($0) } ?? []),
                                                             "blocked": .array(webBlocked(for: peer.uid, now: now)),
                                                             "limits": .array(webLimits(for: peer.uid, now: now))]))
        change.reconciles = changed  // a limit may now be running toward its allowance, or stop
        return change
    }

    /// B2: the connection `reporter` of `uid` closed: what it said no longer holds. Whether
    /// the ledger changed (the engine then saves and reconciles).
    mutating func webEnded(uid: UInt32, reporter: UInt64, now: Date) -> Bool {
        guard webSites[uid]?[reporter] != nil else { return false }
        let changed = setWebSite(nil, uid: uid, reporter: reporter, now: now)
        if changed {
            emit(.persist)
            armNextTransition(now: now)
        }
        return changed
    }

    /// Keeps `site` as what `reporter` of `uid` says (nil: nothing), and brings the ledger and
    /// the limits' use to it. Whether anything counted changed.
    mutating func setWebSite(_ site: String?, uid: UInt32, reporter: UInt64, now: Date) -> Bool {
        var reporters = webSites[uid] ?? [:]
        reporters[reporter] = site
        webSites[uid] = reporters.isEmpty ? nil : reporters
        let sites = Set(reporters.values)
        guard state.history.setWeb(sites, user: String(uid), at: now, clock: local) else { return false }
        recordUsed(at: now)
        applyLimitUses(now: now)
        return true
    }

    /// The named selections (some activity names them) whose sites cover `site` (W1: a domain
    /// stands for its whole site), in catalog order.
    func webSelections(_ site: String) -> [String] {
        config.catalog.selections.filter { s in
            registry.index.isNamed(s.name) && s.domains.contains { Site.covers($0, site) }
        }.map(\.name)
    }

    /// §9, B3: whether a limit counts time on `site`: one of its selections' sites covers it.
    func limitCovers(_ limit: Limit, site: String) -> Bool {
        limit.selections.contains { name in
            (try? config.catalog.resolve(name))?.domains.contains { Site.covers($0, site) } ?? false
        }
    }
}

/// B4: what the extension needs to block in the browser and to explain it (the block page),
/// and B3: the limits that count web time, each as the caller's own day. Part of the `web`
/// answer, so that the extension's view is always the caller's and nobody else's.
extension Core {
    /// The selections blocked for `uid` now that have anything a browser can act on (domains,
    /// URL prefixes, an allow-only window), as enforced: without what is always allowed, for
    /// that person (W2), each with the reasons and the end the person's own view has (U2), and
    /// what asking for more time would get (M4).
    func webBlocked(for uid: UInt32, now: Date) -> [JSON] {
        let room = registry.liveCount(at: now) + book.count < registry.maxActivities
        var out: [JSON] = []
        var seen = Set<String>()
        for target in enforcing.all where target.users.map({ $0.contains(uid) }) ?? true {
            guard !seen.contains(target.name), !target.domains.isEmpty || !target.paths.isEmpty || target.allowed != nil,
                  let whole = blockedNow(target.name),
                  let view = whole.seen(by: uid, until: { self.registry.index.until($0, from: now, viewer: uid) }) else { continue }
            seen.insert(target.name)
            var activities: [String] = []
            for r in view.reasons where !activities.contains(r.activity) { activities.append(r.activity) }
            let offer = room ? book.offer(view, activities: registry.index.activities(covering: target.name), now: now, clock: local) : nil
            var o: JSONObject = [
                "selection": .string(target.name),
                "activities": .array(activities.map { .string($0) }),
                "until": view.until.map { .string(local.iso8601($0)) } ?? .null,
                "domains": .array(Set(target.domains.compactMap { try? Domain.normalize($0) }).sorted().map { .string($0) }),
                "exceptions": .array((target.exceptions ?? []).map { .string($0) }),
                "paths": .array(Set(target.paths.compactMap { try? URLPrefix.normalize($0) }).sorted().map { .string($0) }),
                "more": offer.map { .string($0.rawValue) } ?? .null,
            ]
            if let allowed = target.allowed {
                // W2: a page cannot load if its host is blocked, so an allowed prefix opens its host.
                let hosts = allowed.flatMap { s in
                    s.domains.compactMap { try? Domain.normalize($0) } + s.paths.compactMap { (try? URLPrefix.normalize($0)).map(URLPrefix.host(of:)) }
                }
                o["allowOnly"] = .array(Set(hosts).sorted().map { .string($0) })
            }
            out.append(.object(o))
        }
        return out
    }

    /// B3: the limits `uid` is under whose selections name sites, each with their own day.
    func webLimits(for uid: UInt32, now: Date) -> [JSON] {
        registry.index.limits.compactMap { limit -> JSON? in
            guard limit.users.map({ $0.contains(uid) }) ?? true else { return nil }
            let sites = limit.selections.contains { (try? config.catalog.resolve($0))?.domains.isEmpty == false }
            guard sites else { return nil }
            let mine = limit.seen(by: uid)
            let used = mine.state?.used ?? 0
            let left = mine.state?.remaining ?? Double(limit.seconds)
            let reached = mine.state?.window.map { $0.start <= now } ?? false
            return .object(["activity": .string(limit.name), "selections": .array(limit.selections.map { .string($0) }),
                            "allowance": .int(Int64(limit.seconds)), "used": .int(Int64(used.rounded(.down))),
                            "left": .int(Int64(max(0, left).rounded(.up))), "reached": .bool(reached)])
        }
    }
}
