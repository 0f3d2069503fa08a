import FoundationEssentials

/// A request's change as the core made it, before it is saved (§7 "Truth": `OK` means on
/// disk). The engine saves it when `saves` says so — and if that fails, puts the core back as
/// it was (`Core.Mark`) and answers `not-saved` — then hands it to `Core.proceed(_:now:)`,
/// which tells people, and reconciles when `reconciles` says so; the answer comes last
/// (`Core.reply(_:now:)`), once the change is enforced.
public struct Change: Sendable {
    /// Whether there is a change to save (reads and answers from memory have none).
    public var saves: Bool
    /// Whether enforcement must converge to it.
    public var reconciles = false
    /// The configuration was replaced (`reload`): resolved selections are forgotten, the
    /// targets kept by blocked selections are said, and enforcement is applied again.
    var reconfigured = false
    /// Journal entries for what was done, written once it is saved.
    var entries: [JournalEntry] = []
    /// Reports (journal and watchers) for what was done, once it is saved.
    var reports: [Report] = []
    /// Why selections are about to be unlocked, for the reconcile's "Unblocked" entries.
    var unlockNotes: [String: String] = [:]
    /// §9: the limits changed; the usage monitor follows their apps.
    var followsLimits = false
    /// The save failed after the limits were already followed (`reload`): follow them again
    /// as they are put back.
    public var refollowsLimitsOnFailure = false
    public var answer: Answer

    init(saves: Bool, answer: Answer) {
        self.saves = saves
        self.answer = answer
    }

    /// An answer from memory that changes nothing.
    static func read(_ answer: Answer) -> Change { Change(saves: false, answer: answer) }

    /// What the request is answered with, worked out after the change is enforced.
    public enum Answer: Equatable, Sendable {
        /// Known when the change was made.
        case reply(JSONObject)
        /// The activity of this name as it is after the reconcile (a limit's use brought up to date).
        case activity(String)
        /// T1: a started (or extended, or unchanged) block, with whether its selections are enforced.
        case started(Block, outcome: StartReply.Outcome)
        /// `status` for `viewer` (nil: everyone's) as `peer` may see it: the engine renders it
        /// from what it publishes (Engine+Snapshot.swift).
        case status(all: Bool, viewer: UInt32?, peer: Peer)
        /// `failures` and `stats`, as `peer` may see them.
        case published(Request, peer: Peer)
    }
}

extension Core {
    /// What a request may change besides the activities (those are undone by the registry's
    /// own log, so that marking costs nothing at 100,000 activities). The targets kept per
    /// selection and the report's open intervals are not copied either: `targetsAt` and
    /// `openAt` are where their undo logs stood (UndoLog.swift), and `state` holds neither.
    public struct Mark: Sendable {
        public var state: DaemonState
        var targetsAt: Int
        var openAt: Int
        var config: ConfigSet
        var configProvenance: ConfigProvenance
        /// The cap follows the configuration (a reload sets it).
        var maxActivities: Int
        var foregroundApps: [UInt32: String]
    }

    /// Where a request starts from, to come back to if its change cannot be saved.
    public func mark() -> Mark {
        // Not shared: the next change to them would copy them whole.
        Mark(state: state.withoutLogged, targetsAt: targetUndo.end, openAt: state.history.openUndo.end, config: config,
             configProvenance: configProvenance, maxActivities: registry.maxActivities, foregroundApps: foregroundApps)
    }

    /// Puts back what a request changed since `mark` (its change could not be saved, §7).
    public mutating func restore(_ mark: Mark) {
        registry.rollBack()
        restoreBatch(mark)
    }

    /// Puts back the state and configuration of `mark`, the registry as it is (a failed group
    /// commit rebuilds it whole).
    public mutating func restoreBatch(_ mark: Mark) {
        var (targets, open, openUndo) = (state.targets, state.history.open, state.history.openUndo)
        (state.targets, state.history.open) = ([:], [:])
        if !targetUndo.undo(to: mark.targetsAt, in: &targets) || !openUndo.undo(to: mark.openAt, in: &open) {
            // Not reachable while the engine forgets only what no mark needs; if it were, the
            // targets are worked out again whole rather than kept wrong (an open interval left
            // is closed at its next edge).
            mustApply = true
        }
        (targetsSaved, openSaved) = (min(targetsSaved, mark.targetsAt), min(openSaved, mark.openAt))
        (state, config, configProvenance) = (mark.state, mark.config, mark.configProvenance)
        (state.targets, state.history.open, state.history.openUndo) = (targets, open, openUndo)
        catalogAnswers = [:]
        targetsStale = true
        unsavedSelections = nil
        state.history.forgetTouched()
        registry.maxActivities = mark.maxActivities
        foregroundApps = mark.foregroundApps
    }

    /// After the change is saved: says what was done and follows it.
    mutating func proceed(_ change: Change, now: Date) {
        if change.reconfigured {
            resolved = [:]
            catalogAnswers = [:]
            mustApply = true
            logKeptTargets(now: now)
        }
        for entry in change.entries { emit(.journal(entry)) }
        for (selection, note) in change.unlockNotes { pendingUnlockNotes[selection] = note }
        for report in change.reports { publish(report, now: now) }
        if change.followsLimits { followLimits() }
    }

    /// A request's answer, once its change is saved and enforced.
    func reply(_ answer: Change.Answer, now: Date) -> JSONObject? {
        switch answer {
        case .reply(let o): return o
        case .activity(let name):
            // Said to who added it: a limit with their own figures only (§9, A1), unless they see everyone's.
            guard var a = registry.activity(named: name) else { return [:] }
            if case .limit(let l) = a, case .client(let uid) = a.origin, registry.people(uid).rank < .admin { a = .limit(l.seen(by: uid)) }
            return shapes.activity(a, at: now).object ?? [:]
        case .started(let block, let outcome):
            // Truth (§7): the block is registered either way; the client says whether it
            // is enforced, and blockd retries what is not.
            return StartReply(block: shapes.activityReply(.block(block), at: now), outcome: outcome,
                              notEnforced: notEnforcedReplies(block.selections), partial: partialReplies(block.selections)).json
        case .status, .published: return nil  // rendered by the engine
        }
    }

    /// `[{"selection", "cause"}]` for those of `selections` that should be blocked now but are
    /// not enforced.
    public func notEnforcedJSON(_ selections: [String]) -> JSON {
        .array(notEnforcedReplies(selections).map { .object($0.json) })
    }

    func notEnforcedReplies(_ selections: [String]) -> [NotEnforcedReply] {
        selections.filter { applied[$0] == nil && notEnforced[$0] != nil }.map { NotEnforcedReply(selection: $0, cause: notEnforced[$0]!) }
    }

    /// `[{"selection", "cause"}]` for those of `selections` blocked in part: one entry per part
    /// the configuration leaves off (§7 "Truth").
    public func partialJSON(_ selections: [String]) -> JSON {
        .array(partialReplies(selections).map { .object($0.json) })
    }

    func partialReplies(_ selections: [String]) -> [NotEnforcedReply] {
        selections.filter { applied[$0] != nil }.flatMap { name in (partsOff[name] ?? []).map { NotEnforcedReply(selection: name, cause: $0) } }
    }
}
