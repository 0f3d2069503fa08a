/// A1, §5: what of an answer a caller may see, decided on the typed values before anything is
/// rendered. A member (`viewer`: their uid) sees their own failures, requests, grants and
/// delayed loosenings, and the failures that are nobody's (the daemon's own); root and
/// administrators (`viewer` nil) see everything. A reply's keys play no part: renaming one
/// cannot show a member what is not theirs.
extension Authority {
    /// What of the more-time lists `viewer` may see.
    public static func view(_ viewer: UInt32?, _ lists: RequestsReply) -> RequestsReply {
        guard let viewer else { return lists }
        var out = lists
        out.requests = lists.requests.filter { owns($0.uid, viewer) }
        out.grants = lists.grants.filter { owns($0.uid, viewer) }
        out.delayed = lists.delayed.filter { owns($0.uid, viewer) }
        return out
    }

    /// What of the failures `viewer` may see: their own, and the daemon's.
    public static func view(_ viewer: UInt32?, _ failures: [FailureReply]) -> [FailureReply] {
        guard let viewer else { return failures }
        return failures.filter { $0.uid == nil || owns($0.uid, viewer) }
    }

    /// What of `status` `viewer` may see: its failures and more-time lists cut as above (what is
    /// blocked and the activities are the view's already: `Core.statusView`).
    public static func view(_ viewer: UInt32?, _ document: StatusDocument) -> StatusDocument {
        guard viewer != nil else { return document }
        var out = document
        out.failures = view(viewer, document.failures)
        out.moreTime = view(viewer, document.moreTime)
        out.screen = document.screen.filter { owns($0.uid, viewer!) }  // screen time: one's own only
        return out
    }

    private static func owns(_ owner: Int?, _ viewer: UInt32) -> Bool { owner == Int(viewer) }
}
