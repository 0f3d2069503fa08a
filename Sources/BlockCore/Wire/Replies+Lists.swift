/// The listings (§6) as their containers: `schedule list`, `limit list`, `selections`,
/// `selections show` and `failures`. The daemon writes each with `json` and blockc reads it with
/// `init(_:)`, so each container's key (`key`, also what blockc's `--json` prints of the answer)
/// is spelled once, here; the items are the objects of Replies.swift. Lenient, as a reader of
/// another version must be: an item that is not an object is skipped.
public struct SchedulesReply: Equatable, Sendable {
    /// The answer's one member (and what `--json` prints of it).
    public static let key = "schedules"
    public var schedules: [ActivityReply]

    public init(schedules: [ActivityReply]) { self.schedules = schedules }

    public var json: JSONObject { [Self.key: .array(schedules.map { .object($0.json) })] }

    public init(_ o: JSONObject) { schedules = Reply.objects(o[Self.key]).map(ActivityReply.init) }
}

/// `limit list` (§9): each limit with its use today.
public struct LimitsReply: Equatable, Sendable {
    /// The answer's one member (and what `--json` prints of it).
    public static let key = "limits"
    public var limits: [ActivityReply]

    public init(limits: [ActivityReply]) { self.limits = limits }

    public var json: JSONObject { [Self.key: .array(limits.map { .object($0.json) })] }

    public init(_ o: JSONObject) { limits = Reply.objects(o[Self.key]).map(ActivityReply.init) }
}

/// `selections`: every selection of the catalog.
public struct SelectionsReply: Equatable, Sendable {
    /// The answer's one member (and what `--json` prints of it).
    public static let key = "selections"
    public var selections: [SelectionReply]

    public init(selections: [SelectionReply]) { self.selections = selections }

    public var json: JSONObject { [Self.key: .array(selections.map { .object($0.json) })] }

    public init(_ o: JSONObject) { selections = Reply.objects(o[Self.key]).map(SelectionReply.init) }
}

/// `selections show NAME`: one selection. An answer without the container (an older daemon's)
/// is read as the selection itself.
public struct SelectionShowReply: Equatable, Sendable {
    /// The answer's one member (and what `--json` prints of it).
    public static let key = "selection"
    public var selection: SelectionReply

    public init(selection: SelectionReply) { self.selection = selection }

    public var json: JSONObject { [Self.key: .object(selection.json)] }

    public init(_ o: JSONObject) { selection = SelectionReply(o[Self.key]?.object ?? o) }
}

/// `failures`: the recorded failures, oldest first (for a member, A1, their own and the
/// daemon's).
public struct FailuresReply: Equatable, Sendable {
    /// The answer's one member (and what `--json` prints of it).
    public static let key = "failures"
    public var failures: [FailureReply]

    public init(failures: [FailureReply]) { self.failures = failures }

    public var json: JSONObject { [Self.key: .array(failures.map { .object($0.json) })] }

    public init(_ o: JSONObject) { failures = Reply.objects(o[Self.key]).map(FailureReply.init) }
}
