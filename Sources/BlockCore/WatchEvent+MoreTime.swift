extension WatchEvent {
    /// M3: a more-time request or grant changed. `kind` says how (asked, granted, denied,
    /// expired, ended, cancelled); `activity` is the request's or grant's id.
    public static func moreTime(time: String, kind: String, id: String, selection: String, until: String?, message: String) -> WatchEvent {
        var e = WatchEvent(Name.moreTime.rawValue, time: time)
        (e.hitKind, e.activity, e.selection, e.until, e.message) = (kind, id, selection, until, message)
        return e
    }
}
