import FoundationEssentials

/// M3: what the journal and watchers are told when more time is asked for, granted, denied,
/// expires or ends, or when a loosening waits for its `Delay=` (M2).
public struct MoreTimeNote: Sendable {
    public var event: LogEvent
    /// What `watch` is told changed (its `more-time` event's kind); nil for what only the
    /// journal says: a loosening that waits for its `Delay=` (M2), or that wait cancelled.
    public var kind: WatchEvent.MoreTime.Kind?
    /// The request's or grant's id, or the delayed activity's name.
    public var id: String
    public var selection: String
    public var until: Date?
    public var message: String
    public var uid: UInt32?
    /// Who asked, when not `uid` (an administrator's answer): M4's agent finds its own answers.
    public var asker: UInt32? = nil
    /// M5: for a grant, how much it lifts, and when what still holds the selection ends (nil:
    /// it lifts all, or a hold has no end in sight).
    public var lifts: MoreTimeLift? = nil
    public var heldUntil: Date? = nil

    public init(event: LogEvent, kind: WatchEvent.MoreTime.Kind?, id: String, selection: String, until: Date?, message: String, uid: UInt32?,
                asker: UInt32? = nil, held: (lifts: MoreTimeLift, holds: [MoreTimeHold])? = nil) {
        (self.event, self.kind, self.id, self.selection, self.until, self.message, self.uid, self.asker) = (event, kind, id, selection, until, message, uid, asker)
        if let held {
            lifts = held.lifts
            let ends = held.holds.map(\.until)
            heldUntil = ends.contains(nil) ? nil : ends.compactMap { $0 }.max()
        }
    }

    public func entry(clock: LocalClock) -> JournalEntry {
        var fields: [(JournalField, String)] = [(.selection, selection), (.moreID, id)]
        if let until { fields.append((.end, clock.iso8601(until))) }
        if let uid { fields.append((.uid, String(uid))) }
        return JournalEntry(message, priority: .notice, event: event, fields: fields)
    }

    public func events(clock: LocalClock, now: Date) -> [WatchEvent] {
        guard let kind else { return [] }
        var event = WatchEvent.MoreTime(time: clock.iso8601(now), kind: .known(kind), id: id, selection: selection, until: until.map(clock.iso8601),
                                        message: message, uid: (asker ?? uid).map(Int.init))
        event.lifts = lifts.map(WireWord.known)
        event.heldUntil = heldUntil.map(clock.iso8601)
        return [.moreTime(event)]
    }
}
