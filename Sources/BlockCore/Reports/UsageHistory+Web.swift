import FoundationEssentials

/// B2: web time, as the person's browsers report it through blockd's extension: the site in
/// the focused window's visible tab while they are active. It is counted while a report says
/// so, and ends with the report's connection (the browser closed or crashed), so a browser that
/// dies without a word counts no longer than its native-messaging host's connection.
extension UsageHistory {
    /// `user`'s browsers show `sites` now (empty: none): each is opened, the user's other web
    /// intervals are folded. Reporting the same again changes nothing. Whether anything changed.
    @discardableResult
    public mutating func setWeb(_ sites: Set<String>, user: String, at t: Date, clock: LocalClock) -> Bool {
        var changed = false
        for key in open.keys {
            guard let o = Open(key: key), o.kind == .web, o.user == user, !sites.contains(o.name) else { continue }
            set(o, false, at: t, clock: clock)
            changed = true
        }
        for site in sites where open[Open(.web, user: user, name: site).key] == nil {
            set(Open(.web, user: user, name: site), true, at: t, clock: clock)
            changed = true
        }
        return changed
    }
}
