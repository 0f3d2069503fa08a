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
                                                             "counted": .array(site.map(webSelections)?.map { .string($0) } ?? [])]))
        change.reconciles = changed  // a limit may now be running toward its allowance, or stop
        return change
    }

    /// B2: the connection `reporter` of `uid` closed: what it said no longer holds. Whether
    /// the ledger changed (the engine then saves and reconciles).
    public mutating func webEnded(uid: UInt32, reporter: UInt64, now: Date) -> Bool {
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
