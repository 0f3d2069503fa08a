/// B2: the browser extension's report of where the person is on the web, on the wire:
///
///     web {"site":"youtube.com"}   (the focused window's visible tab shows that site, and the
///                                  person is active: not idle, the screen not locked)
///     web {}                       (none of that now)
///
/// Sent by blockd's native-messaging host on one connection that stays open while the browser
/// runs: it only ever speaks for the caller (the daemon takes the uid from SO_PEERCRED), so
/// anyone who can connect may send it, and what it reported ends when the connection does.
/// The site is a host name as the browser has it; the daemon counts it as its site (a leading
/// `www.` or `m.` dropped, W1).
extension Request {
    static func validateWeb(_ site: String?) throws(CoreError) {
        guard let site else { return }
        guard site.utf8.count <= 253, !site.isEmpty else {
            throw CoreError(.usage, "web: 'site' is a host name of 1 to 253 bytes, not '\(Request.shown(site))'")
        }
        guard (try? Domain.normalize(site)) != nil else {
            throw CoreError(.usage, "web: 'site' must be a host name such as youtube.com, not '\(Request.shown(site))'")
        }
    }

    /// The site a reported host name counts as: normalized (W1), a leading `www.` or `m.` dropped.
    public static func webSite(_ host: String) -> String? {
        guard let name = try? Domain.normalize(host) else { return nil }
        for prefix in ["www.", "m."] where name.hasPrefix(prefix) && name.utf8.count > prefix.utf8.count {
            let rest = String(name.dropFirst(prefix.count))
            if rest.contains(".") { return rest }
        }
        return name
    }
}
