/// The answers to `hello`, `start`, `failures-clear`, `reload` and `watch` (§6, §7, S3), encoded by `json`
/// and decoded by `init(_:)` as in Replies.swift. Decoding is lenient: a key of the wrong type
/// reads as absent.

/// `hello`: who answers, and which protocol it speaks. Absent: an older or a stranger daemon
/// left it out; blockc then says `blockd unknown`.
public struct HelloReply: Equatable, Sendable {
    public var daemon: String?
    public var version: String?
    public var protocolVersion: Int?

    public init(daemon: String?, version: String?, protocolVersion: Int?) {
        (self.daemon, self.version, self.protocolVersion) = (daemon, version, protocolVersion)
    }

    /// This build's own answer.
    public static var current: HelloReply {
        HelloReply(daemon: "blockd", version: BlockdVersion.version, protocolVersion: BlockdVersion.protocolVersion)
    }

    public var json: JSONObject {
        var o = JSONObject()
        if let protocolVersion { o["protocol"] = .int(Int64(protocolVersion)) }
        if let version { o["version"] = .string(version) }
        if let daemon { o["daemon"] = .string(daemon) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(daemon: o["daemon"]?.string, version: o["version"]?.string, protocolVersion: o["protocol"]?.int)
    }
}

/// `watch`'s greeting, before the events (S3): the stream is open, and in which protocol.
public struct WatchingReply: Equatable, Sendable {
    public var watching: Bool
    public var protocolVersion: Int?

    public init(watching: Bool = true, protocolVersion: Int? = BlockdVersion.protocolVersion) {
        (self.watching, self.protocolVersion) = (watching, protocolVersion)
    }

    public var json: JSONObject {
        var o: JSONObject = ["watching": .bool(watching)]
        if let protocolVersion { o["protocol"] = .int(Int64(protocolVersion)) }
        return o
    }

    public init(_ o: JSONObject) { self.init(watching: o["watching"]?.bool == true, protocolVersion: o["protocol"]?.int) }
}

/// A selection that should be blocked now but is not enforced yet, and why (§7 Truth), in
/// `start`'s answer and `status`'s enforcement.
public struct NotEnforcedReply: Equatable, Sendable {
    public var selection: String
    public var cause: String

    public init(selection: String, cause: String) { (self.selection, self.cause) = (selection, cause) }

    public var json: JSONObject { ["selection": .string(selection), "cause": .string(cause)] }

    public init(_ o: JSONObject) { self.init(selection: o["selection"]?.string ?? "", cause: o["cause"]?.string ?? "") }
}

/// `start`: the block's activity object, what the request did to it (T10), and whether it is
/// enforced (§7 Truth: the block is registered either way, and blockd retries what is not).
public struct StartReply: Equatable, Sendable {
    /// What `start` did to the block of that name (T10: a block is extended, never shortened).
    public enum Outcome: String, CaseIterable, Sendable { case created, extended, unchanged }

    public var block: ActivityReply
    /// `created`, `extended` or `unchanged`; a newer daemon may say more.
    public var outcome: WireWord<Outcome>
    /// False only when the daemon said so; an older daemon that did not say is taken at its word.
    public var enforced: Bool
    public var notEnforced: [NotEnforcedReply]
    /// §7 "Truth": enforced in part: what the configuration leaves off (the app shield turned
    /// off, ...), one entry per part; the block is enforced all the same.
    public var partial: [NotEnforcedReply]

    public init(block: ActivityReply, outcome: Outcome, notEnforced: [NotEnforcedReply], partial: [NotEnforcedReply] = []) {
        (self.block, self.outcome, self.enforced, self.notEnforced) = (block, .known(outcome), notEnforced.isEmpty, notEnforced)
        self.partial = partial
    }

    public var json: JSONObject {
        var o = block.json
        o["outcome"] = .string(outcome.word)
        o["enforced"] = .bool(enforced)
        if !notEnforced.isEmpty { o["notEnforced"] = .array(notEnforced.map { .object($0.json) }) }
        if !partial.isEmpty { o["partial"] = .array(partial.map { .object($0.json) }) }
        return o
    }

    public init(_ o: JSONObject) {
        (block, outcome) = (ActivityReply(o), WireWord(o["outcome"]?.string ?? ""))
        enforced = o["enforced"]?.bool != false
        notEnforced = Reply.objects(o["notEnforced"]).map(NotEnforcedReply.init)
        partial = Reply.objects(o["partial"]).map(NotEnforcedReply.init)
    }
}

/// `failures-clear`: how many failures were cleared.
public struct ClearedReply: Equatable, Sendable {
    public var cleared: Int

    public init(cleared: Int) { self.cleared = cleared }

    public var json: JSONObject { ["cleared": .int(Int64(cleared))] }

    public init(_ o: JSONObject) { self.init(cleared: o["cleared"]?.int ?? 0) }
}

/// `reload`: how many files were read, and what of them is not in force as written (T4, A1;
/// empty when all of it is).
public struct ReloadReply: Equatable, Sendable {
    public var files: Int
    public var problems: [String]

    public init(files: Int, problems: [String]) { (self.files, self.problems) = (files, problems) }

    public var json: JSONObject { ["reloaded": .int(Int64(files)), "problems": Reply.strings(problems)] }

    public init(_ o: JSONObject) { self.init(files: o["reloaded"]?.int ?? 0, problems: Reply.strings(o["problems"])) }
}

/// `screen`: whether the person may be at the screen now; when not, what keeps them off it
/// (allowed hours or a used-up screen-time limit), until when, and what it does to their
/// sessions.
public struct ScreenReply: Equatable, Sendable {
    public var user: String
    public var uid: Int
    public var held: Bool
    public var activity: String?
    /// `schedule` (allowed hours) or `limit`.
    public var kind: String?
    public var until: String?
    public var action: String?

    public init(user: String, uid: Int, held: Bool = false, activity: String? = nil, kind: String? = nil, until: String? = nil, action: String? = nil) {
        (self.user, self.uid, self.held, self.activity, self.kind, self.until, self.action) = (user, uid, held, activity, kind, until, action)
    }

    public var json: JSONObject {
        var o: JSONObject = ["user": .string(user), "uid": .int(Int64(uid)), "held": .bool(held)]
        if let activity { o["activity"] = .string(activity) }
        if let kind { o["kind"] = .string(kind) }
        if let until { o["until"] = .string(until) }
        if let action { o["action"] = .string(action) }
        return o
    }

    public init(_ o: JSONObject) {
        self.init(user: o["user"]?.string ?? "", uid: o["uid"]?.int ?? -1, held: o["held"] == .bool(true), activity: o["activity"]?.string,
                  kind: o["kind"]?.string, until: o["until"]?.string, action: o["action"]?.string)
    }
}
