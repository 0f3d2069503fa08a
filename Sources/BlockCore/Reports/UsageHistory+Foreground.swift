import FoundationEssentials

/// R1: the time an app had the focus, as the user's session agent reports it (X11 only). It is
/// counted only inside the app's running time for that user: it opens only while the app runs
/// for them, and it closes when the running interval closes (`set`), so foreground ≤ running
/// on every day, and a session agent that dies without a word counts no longer than the app.
extension UsageHistory {
    /// `user`'s foreground is now `apps` (the `Apps=` entries the focused executable counts as;
    /// empty: none of theirs, or nothing): each of them that runs for `user` is opened, and the
    /// user's other foreground intervals are folded. Reporting the same again changes nothing.
    /// Returns the apps in the foreground now.
    @discardableResult
    public mutating func setForeground(_ apps: Set<String>, user: String, at t: Date, clock: LocalClock) -> Set<String> {
        let focused = Set(apps.filter { open[Open(.running, user: user, name: $0).key] != nil })
        for key in open.keys {
            guard let o = Open(key: key), o.kind == .foreground, o.user == user, !focused.contains(o.name) else { continue }
            set(o, false, at: t, clock: clock)
        }
        for app in focused { set(Open(.foreground, user: user, name: app), true, at: t, clock: clock) }
        return focused
    }
}
