import FoundationEssentials

/// M4, S4: what the agent's button may offer for a blocked selection, decided by the daemon
/// with the same rules `more` answers with, so that a button is shown only when pressing it
/// can succeed.
public enum MoreTimeOffer: String, Sendable, CaseIterable {
    /// `more SELECTION 15m` is granted by policy ("15 more minutes").
    case grant
    /// `more SELECTION 15m` becomes a pending request ("Ask for more time").
    case ask
    /// Only "one more minute" can be had (`more SELECTION 1m`).
    case minute

    /// The button's ask: 15 minutes, or the one more minute.
    public static let buttonSeconds = 15 * 60
    public var seconds: Int { self == .minute ? MoreTimeBook.oneMinute : MoreTimeOffer.buttonSeconds }
}

extension MoreTimeBook {
    /// M4: the offer for `blocked` now, or nil when asking would be refused (MoreTime=no, no
    /// allowance left, already lifted or about to be, the day ends first).
    public func offer(_ blocked: Policy.Blocked, activities: [Activity], now: Date, clock: LocalClock) -> MoreTimeOffer? {
        // As `more` refuses: a grant that lifts the selection now, or one still to begin.
        if grants.contains(where: { $0.lifts(blocked, at: now) || ($0.selection == blocked.selection && $0.start > now) }) { return nil }
        switch try? decide(blocked, seconds: MoreTimeOffer.buttonSeconds, activities: activities, now: now, clock: clock) {
        case .grant(_, _, let minute)?: return minute ? .minute : .grant
        case .pending?: return .ask
        case nil: break
        }
        if case .grant(_, _, true)? = try? decide(blocked, seconds: MoreTimeBook.oneMinute, activities: activities, now: now, clock: clock) {
            return .minute
        }
        return nil
    }
}
