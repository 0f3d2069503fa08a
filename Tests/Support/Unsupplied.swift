import BlockCore
import BlockDaemon
import Foundation
import Testing

extension Engine.Collaborators {
    /// Collaborators that a test did not supply: each records an issue naming itself the first
    /// time the engine uses it, so a test that reaches a collaborator it did not set up fails
    /// loudly instead of passing on a silent default. Replace the ones a test needs.
    public static func unsupplied(clock: any SystemClock, store: StateStore) -> Engine.Collaborators {
        let c = Engine.Collaborators(
            clock: clock, enforcer: UnsuppliedEnforcer(), log: UnsuppliedLog(), store: store,
            loadConfig: { () throws(CoreError) -> ConfigSet in
                Unsupplied.used("loadConfig (a configuration loader for reload)")
                throw CoreError(.internal, "this test supplied no configuration loader")
            },
            hooks: UnsuppliedHooks(),
            armTimer: { _ in Unsupplied.used("armTimer (the transition timer)") },
            events: { _ in Unsupplied.used("events (the watch event hub)") },
            limitsChanged: { _ in Unsupplied.used("limitsChanged (the usage monitor)") },
            enforcementNotes: { _ in Unsupplied.used("enforcementNotes (the enforcers' status notes)"); return [:] },
            serverStats: { Unsupplied.used("serverStats (the control server's counters)"); return [:] },
            status: { _ in Unsupplied.used("status (systemd's STATUS=)") },
            users: .unsupplied)  // never the machine's own database by default
        return c
    }
}

public enum Unsupplied {
    /// Records that the engine used `collaborator`, which the test did not supply.
    public static func used(_ collaborator: String) {
        Issue.record("the engine used \(collaborator), which this test did not supply")
    }
}

/// An enforcer nobody asked for.
public final class UnsuppliedEnforcer: Enforcer {
    public init() {}
    public var mode: String { "unsupplied" }
    public func enforce(blocked: [Selection]) -> EnforcementReport {
        Unsupplied.used("enforcer")
        return EnforcementReport()
    }
    public func release() -> [EnforcementFailure] {
        Unsupplied.used("enforcer")
        return []
    }
}

/// A log nobody asked for.
public struct UnsuppliedLog: LogSink {
    public init() {}
    public func log(_ entry: JournalEntry) { Unsupplied.used("log (\(entry.message))") }
}

/// Hooks nobody asked for: only a selection that has a hook command uses them.
public struct UnsuppliedHooks: HookRunning {
    public init() {}
    public func run(_ event: HookRunner.Event, selection: Selection, until: String?) {
        let command = event == .block ? selection.execOnBlock : selection.execOnUnblock
        if command != nil { Unsupplied.used("hooks (\(event.rawValue) of \(selection.name))") }
    }
}
