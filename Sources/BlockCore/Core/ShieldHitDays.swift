/// Shield hits are counted per local day (`2026-12-01`) for everyone, and per day and user
/// (`2026-12-01/1001`) for a member's own `stats` (A1), in the one keyed map, so that the state
/// log records both the same way.
public enum ShieldHitDays {
    public static func key(day: String, uid: UInt32) -> String { "\(day)/\(uid)" }

    /// The day `key` counts for a viewer: the totals for everyone (`uid` nil), a member's own
    /// keys for that member; nil when the viewer does not see it.
    public static func day(of key: String, for uid: UInt32?) -> String? {
        let parts = key.split(separator: "/", maxSplits: 1)
        switch uid {
        case nil: return parts.count == 1 ? key : nil
        case let u?: return parts.count == 2 && parts[1] == "\(u)" ? String(parts[0]) : nil
        }
    }
}
