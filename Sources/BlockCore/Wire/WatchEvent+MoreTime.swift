extension WatchEvent {
    /// M3: a more-time request or grant changed. `kind` says how (asked, granted, denied,
    /// expired, ended, cancelled); `activity` is the request's or grant's id.
    public static func moreTime(time: String, kind: String, id: String, selection: String, until: String?, message: String,
                                uid: UInt32? = nil) -> WatchEvent {
        var e = WatchEvent(Name.moreTime.rawValue, time: time)
        (e.hitKind, e.activity, e.selection, e.until, e.message) = (kind, id, selection, until, message)
        e.uid = uid.map(Int.init)
        return e
    }
}
