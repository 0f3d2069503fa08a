import FoundationEssentials

/// R1: foreground time. A user's session agent says which executable has the focus in their
/// X11 session (`foreground`); the core keeps the latest word per uid, in memory only, and
/// counts it as the `Apps=` entries the usage monitor follows that executable as, only while
/// such an app runs for that uid (the ledger closes the foreground with the running, and
/// opens it again when the app is seen running under a focus already reported). After a
/// restart nothing is in the foreground until an agent says so again (it does on resubscribing).
extension Core {
    /// `foreground`: the caller's own word (by SO_PEERCRED), saved when it changed the ledger.
    mutating func foreground(_ app: String?, peer: Peer, now: Date) -> Change {
        let before = state.history
        foregroundApps[peer.uid] = app  // a new word replaces the user's last one
        let counted = refreshForeground(of: peer.uid, at: now)
        // Saved only when the ledger changed; if that fails the last word is put back.
        return Change(saves: state.history != before, answer: .reply(["counted": .array(counted.sorted().map { .string($0) })]))
    }

    /// Opens the foreground of `uid`'s reported app where it runs for them, closes the rest of
    /// theirs; the `Apps=` entries counted now.
    @discardableResult
    mutating func refreshForeground(of uid: UInt32, at now: Date) -> Set<String> {
        let apps = foregroundApps[uid].map { executableApps($0) } ?? []
        return state.history.setForeground(apps, user: String(uid), at: now, clock: local)
    }

    /// After the usage monitor's news: an app that started under a focus already reported now
    /// counts (one that stopped was closed with its running time).
    mutating func refreshForegrounds(at now: Date) {
        for uid in foregroundApps.keys { refreshForeground(of: uid, at: now) }
    }
}
