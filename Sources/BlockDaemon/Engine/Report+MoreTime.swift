import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// M3: what the journal and watchers are told when more time is asked for, granted, denied,
/// expires or ends, or when a loosening waits for its `Delay=` (M2).
struct MoreTimeNote {
    var event: LogEvent
    /// asked, granted, denied, expired, ended, cancelled, delayed.
    var kind: String
    /// The request's or grant's id, or the delayed activity's name.
    var id: String
    var selection: String
    var until: Date?
    var message: String
    var uid: UInt32?
    /// Who asked, when not `uid` (an administrator's answer): M4's agent finds its own answers.
    var asker: UInt32? = nil

    func entry(clock: LocalClock) -> LogEntry {
        var fields: [(JournalField, String)] = [(.selection, selection), (.moreID, id)]
        if let until { fields.append((.end, clock.iso8601(until))) }
        if let uid { fields.append((.uid, String(uid))) }
        return LogEntry(message, priority: .notice, event: event, fields: fields)
    }

    func events(clock: LocalClock, now: Date) -> [WatchEvent] {
        guard event != .delayed else { return [] }
        return [.moreTime(time: clock.iso8601(now), kind: kind, id: id, selection: selection, until: until.map(clock.iso8601), message: message,
                              uid: asker ?? uid)]
    }
}
