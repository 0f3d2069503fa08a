import FoundationEssentials

/// What one reconcile tells people, decided here from what the engine knows: for each
/// selection it looked at, the locks and unlocks of every view (U2) between what was applied
/// and what is enforced now, why each unlock happened and how late (T8), and the blocks that
/// ended without unlocking anything. Never "Blocked" unless it is enforced, never "Unblocked"
/// until the unlock has landed (§7 Truth). Locks come first, then unlocks, each by selection;
/// the ended blocks' reports follow.
public struct Announcements {
    /// One selection after the apply.
    public struct Outcome: Equatable, Sendable {
        /// Its reasons as applied before this reconcile (nil: not applied; empty: applied, the
        /// reasons unknown, as after a restart).
        public var before: [Reason]?
        /// The reasons blocking it now that no grant lifts (nil: not blocked now).
        public var current: [Reason]?
        /// The apply could not enforce it.
        public var notEnforced = false
        /// It is no longer blocked, but its enforcement could not be taken away yet.
        public var lingering = false
        /// With `before` empty: the uids it was applied for, when that was some users only (nil:
        /// the whole machine, or not known).
        public var beforeFor: [UInt32]?

        public init(before: [Reason]?, current: [Reason]?, notEnforced: Bool = false, lingering: Bool = false,
                    beforeFor: [UInt32]? = nil) {
            (self.before, self.current, self.notEnforced, self.lingering) = (before, current, notEnforced, lingering)
            self.beforeFor = beforeFor
        }

        /// What people are told holds after this reconcile: a lock that failed is no news yet,
        /// and an unlock that has not landed is no unlock.
        public var shown: [Reason]? { current != nil ? (notEnforced ? before : current) : (lingering ? before : nil) }
        /// What is applied after this reconcile: its reasons if it is blocked and enforced, the
        /// old ones while an unlock is pending.
        public var applied: [Reason]? { lingering ? before : (notEnforced ? nil : current) }
    }

    public var clock: LocalClock
    /// Why a request, not time, lifts a selection ("block 'x' stopped early by kid"), by selection.
    public var notes: [String: String]
    /// A user's name for the journal (nil: unknown; the uid is shown instead).
    public var name: (UInt32) -> String?
    /// When `selection` is lifted for a viewer (nil: for everyone).
    public var until: (_ selection: String, _ viewer: UInt32?) -> Date?

    public init(clock: LocalClock, notes: [String: String] = [:], name: @escaping (UInt32) -> String? = { _ in nil },
                until: @escaping (_ selection: String, _ viewer: UInt32?) -> Date?) {
        (self.clock, self.notes, self.name, self.until) = (clock, notes, name, until)
    }

    /// The reports of one reconcile. `outcomes`: each selection it looked at; `unlocked`: the
    /// selections it unlocked (an ended block that unlocked one of them is told through that
    /// unlock); `applied`: what is applied now for any selection, looked at or not (an ended
    /// block's selections may not have been).
    public func reports(_ outcomes: [String: Outcome], ended: [Block], unlocked: [String], applied: (String) -> [Reason]?,
                        now: Date) -> [Report] {
        var locks: [Report] = [], unlocks: [Report] = []
        for (selection, outcome) in outcomes.sorted(by: { $0.key < $1.key }) where outcome.before != outcome.shown {
            let changes = Policy.viewChanges(before: outcome.before, after: outcome.shown, unknownFor: outcome.beforeFor) { viewer in
                until(selection, viewer)
            }
            for change in changes {
                switch change.kind {
                case .lock:
                    locks.append(.lock(Policy.Blocked(selection: selection, reasons: change.reasons, until: change.until),
                                       audience: change.audience, whom: whom(change.audience)))
                case .unlock:
                    unlocks.append(unlock(selection, previous: change.reasons, ended: ended, now: now,
                                          audience: change.audience, whom: whom(change.audience)))
                }
            }
        }
        let quiet = ended.filter { !$0.selections.contains(where: unlocked.contains) }
        return locks + unlocks + quiet.map { endedReport($0, applied: applied, now: now) }
    }

    /// U2: whom a lock or an unlock is about, in words for the journal (nil: everyone).
    public func whom(_ audience: Audience) -> String? {
        func names(_ uids: [UInt32]) -> String { uids.map { name($0) ?? "#\($0)" }.joined(separator: ", ") }
        if let users = audience.users { return "for \(names(users))" }
        return audience.except.isEmpty ? nil : "for everyone but \(names(audience.except))"
    }

    /// Why a selection is no longer blocked, in words, with the fields that say which activity
    /// ended when and how late the unlock is (T8).
    public func unlock(_ selection: String, previous: [Reason], ended: [Block], now: Date, audience: Audience = .everyone,
                       whom: String? = nil) -> Report {
        var why = notes[selection] ?? ""
        var fields: [(JournalField, String)] = []
        func late(_ instant: Date) -> String { String(Int((now.timeIntervalSince(instant) * 1000).rounded())) }
        if why.isEmpty, let block = ended.first(where: { b in b.selections.contains(selection) && (previous.isEmpty || previous.contains { $0.activity == b.name }) }) {
            why = "timed block '\(block.name)' ended (\(DurationText.format(Int(block.end.timeIntervalSince(block.start).rounded()))))"
            fields = [(.activity, block.name), (.end, clock.iso8601(block.end)), (.lateMS, late(block.end))]
        } else if why.isEmpty, let reason = previous.first {
            why = "\(reason.kind.rawValue) '\(reason.activity)' ended"
            fields = [(.activity, previous.map(\.activity).joined(separator: " ")), (.end, clock.iso8601(reason.until)), (.lateMS, late(reason.until))]
        } else if why.isEmpty {
            why = "no activity covers it any more"
        }
        return .unlock(selection: selection, why: why, fields: fields, audience: audience, whom: whom)
    }

    /// A block ended without unlocking anything. Said truthfully: only selections another
    /// activity still covers "stay blocked"; the others were never enforced by this daemon
    /// (the block began and ended while it was not looking, e.g. while it was down).
    public func endedReport(_ block: Block, applied: (String) -> [Reason]?, now: Date) -> Report {
        let covered = block.selections.filter { applied($0) != nil }
        let others = Set(covered.flatMap { applied($0)?.map(\.activity) ?? [] }).subtracting([block.name]).sorted()
        let by = others.map { "'\($0)'" }.joined(separator: ", ")
        let message: String
        if covered.count == block.selections.count {
            message = "Block '\(block.name)' ended; its selections stay blocked by \(by)"
        } else if covered.isEmpty {
            message = "Block '\(block.name)' ended at \(clock.spoken(block.end, from: now)) before it was enforced; nothing to unlock"
        } else {
            message = "Block '\(block.name)' ended; \(covered.joined(separator: ", ")) stay blocked by \(by)"
        }
        return .ended(block, message: message)
    }
}
