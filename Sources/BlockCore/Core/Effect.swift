import FoundationEssentials

/// What the core decided that someone else carries out (STYLE: decide in the core, act at the
/// edge), in the order `Core.handle` returns them. `.beginChange`, `.loadConfig`, `.commit` and `.enforce`
/// wait for what came of them: each ends its batch, and the edge hands the core its `Core.Outcome`.
public enum Effect: Equatable, Sendable {
    /// A request's change begins: what changed before it is not its to undo (the edge keeps it
    /// for the next save); then `Core.Outcome.begun`.
    case beginChange
    /// `reload`: read the configuration files now; then `Core.Outcome.configLoaded`.
    case loadConfig
    /// §7: write the request's change now (`OK` means on disk); then `Core.Outcome.committed`.
    case commit
    /// T5: make enforcement hold exactly these selections (`changed`: those whose targets
    /// differ from the last call, nil: any may); then `Core.Outcome.enforced` with the report.
    case enforce([Selection], changed: Set<String>?)
    /// A reconcile looked at these selections: the published view brings them up to date.
    case reconciled(looked: Set<String>)
    /// The answer to the client's request.
    case reply(Response)
    /// The answer to the client's request, rendered from what the edge publishes (`status`,
    /// `failures`, `stats`).
    case replyFromView(Change.Answer)
    /// A journal entry (§7: every lock and unlock is logged).
    case journal(JournalEntry)
    /// An event for the `watch` subscribers it concerns (S3).
    case event(WatchEvent)
    /// E3: run a selection's `ExecOnBlock=` or `ExecOnUnblock=`.
    case hook(HookEvent, Selection, until: String?)
    /// Save what changed; nobody waits for it (a failure is retried and recorded, §7).
    case persist
    /// T9: arm the one timer for this instant (nil: disarm).
    case armTimer(Date?)
    /// A one-line status for the service manager.
    case status(String)
    /// §9: the limits and their apps, for the usage monitor to follow.
    case followLimits([String: LimitedApps])
    /// R1: the `Apps=` entries of the selections some activity names, for the report.
    case followApps(Set<String>)
    /// Screen time: a screen-time limit's action on `uid`'s local sessions (their logind ids),
    /// or on the machine (suspend, poweroff).
    case sessionAction(SessionAction, uid: UInt32, sessions: [String])
}

/// E3: which hook of a selection runs.
public enum HookEvent: String, Sendable { case block, unblock }

/// What a limit counts (§9): its selections' `Apps=` entries, run by whom.
public struct LimitedApps: Equatable, Sendable {
    public var apps: [String]
    /// The uids whose processes count (nil: everyone's); a per-user limit counts only the
    /// running time of its users' own processes.
    public var users: Set<UInt32>?

    public init(apps: [String], users: Set<UInt32>? = nil) {
        self.apps = apps
        self.users = users
    }
}

/// §9: a process of a limit's apps running for `uid` (the person it stands for: its real
/// uid or, from a login session, its login uid; for a limit with users, the one in its scope).
public struct LimitUse: Hashable, Sendable {
    public var limit: String
    public var uid: UInt32
    public init(limit: String, uid: UInt32) { (self.limit, self.uid) = (limit, uid) }
}

/// R1: an app (its `Apps=` entry) with a process running for `uid`.
public struct RunningApp: Hashable, Sendable {
    public var uid: UInt32
    public var app: String
    public init(uid: UInt32, app: String) { (self.uid, self.app) = (uid, app) }
}
