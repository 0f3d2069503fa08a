import FoundationEssentials

/// One structured log entry (§7): a sentence, a priority, the event type (which fixes
/// `MESSAGE_ID`) and the `BLOCKD_*` fields that apply.
public struct JournalEntry: Equatable, Sendable {
    public enum Priority: Int, Sendable, Comparable {
        // syslog(3) levels, as journald stores them.
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
        public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    public var message: String
    public var priority: Priority
    public var event: LogEvent?
    /// The entry's `BLOCKD_*` fields, in order.
    public var fields: [(JournalField, String)]

    public init(_ message: String, priority: Priority = .info, event: LogEvent? = nil, fields: [(JournalField, String)] = []) {
        self.message = message
        self.priority = priority
        self.event = event
        self.fields = fields
    }

    public static func == (a: JournalEntry, b: JournalEntry) -> Bool {
        a.message == b.message && a.priority == b.priority && a.event == b.event
            && a.fields.map(\.0) == b.fields.map(\.0) && a.fields.map(\.1) == b.fields.map(\.1)
    }

    public func field(_ name: JournalField) -> String? { fields.first { $0.0 == name }?.1 }
}

/// Every journal field blockd writes besides `BLOCKD_EVENT`, without its `BLOCKD_` prefix: the
/// one list, which blockd(8), JOURNAL, documents field by field (DocsTests checks both ways).
public enum JournalField: String, Sendable, CaseIterable {
    /// The activity concerned; several are separated by spaces.
    case activity = "ACTIVITY"
    /// The selection locked or unlocked (a catch-up: the activity's selections).
    case selection = "SELECTION"
    /// The end instant of a block or window, ISO 8601 with offset.
    case end = "END"
    /// How many milliseconds after its instant an unlock or catch-up was applied (T8).
    case lateMS = "LATE_MS"
    /// A refusal's or failure's error code.
    case code = "CODE"
    /// Whose request was refused, or whose launch was denied (U3).
    case uid = "UID"
    /// Whom a lock or an unlock is about, when some users only (U2).
    case users = "USERS"
    /// Who is left out of a lock or an unlock for everyone (U2).
    case exceptUsers = "EXCEPT_USERS"
    /// A shield hit: what happened (`denied-launch`, `killed`, `tamper`), to which
    /// executable or file, the app's name and the process (S5).
    case hit = "HIT"
    case path = "PATH"
    case app = "APP"
    case pid = "PID"
    /// E5: the addresses cut or refused, how many sockets a cut destroyed, a name whose
    /// lookup failed, and how many lookups a change had to leave out.
    case addresses = "ADDRESSES"
    case socketsCut = "SOCKETS_CUT"
    case domain = "DOMAIN"
    case lookupsDropped = "LOOKUPS_DROPPED"
    /// M3: a more-time request's or grant's id, or the activity whose stop waits (M2).
    case moreID = "MORE_ID"
}

/// Event types with a fixed `MESSAGE_ID` each (for the journal catalog and `journalctl -x`).
public enum LogEvent: String, Sendable, CaseIterable {
    case lock, unlock, catchUp = "catch-up", refusal, failure, shieldHit = "shield-hit", tamper, start, stop, reload, limit, warning
    /// E5: open connections to a blocked site's addresses destroyed; blockd's nftables table changed.
    case socketsCut = "sockets-cut", firewall
    /// M1-M3: more time asked for, granted, denied, expired unanswered, ended; a loosening delayed.
    case moreAsked = "more-asked", moreGranted = "more-granted", moreDenied = "more-denied", moreExpired = "more-expired"
    case moreEnded = "more-ended", delayed
    /// Screen time: a person's sessions locked or ended, or the machine suspended or powered
    /// off, by a used-up screen-time limit or by allowed hours.
    case session

    public var messageID: String {
        switch self {
        case .lock: "37b6956f1cb94e74ae234a0ccdb20516"
        case .unlock: "c610b328ba4f4283b9060bf2d87a6807"
        case .catchUp: "9f1f7c6587cf4cafa4379ee8cbccc5a5"
        case .refusal: "8becf93322ed4c36973e24cbf8ab3df5"
        case .failure: "5c2aed322d2549aba9c5fa3fca03e81a"
        case .shieldHit: "54f5dad015a04a7398bb30f4279191fd"
        case .tamper: "dce655153911498d962a49fe98b1b804"
        case .start: "ef5affc0912a4f189c7d1336cf8373d5"
        case .stop: "89a8690429c84d7c845bc0a90ebeaf46"
        case .limit: "651b59d17d544d039bec21e5b08780b5"
        case .warning: "dc47a1f9301b43a2a0588f99cb78552e"
        case .reload: "dfe2596177a74f71b9230fdd7eea5771"
        case .socketsCut: "4b0f1e6c8a3d4f52b7e9c2d5a1f08e63"
        case .firewall: "a7c3e95d02b84e1f9d6c4b8e3f1a2d70"
        case .moreAsked: "3e1c0f5a7b2d4c8e9a6f1b0d2c4e6a81"
        case .moreGranted: "b84d2e6f1a3c4b5d8e7f9a0c1d2e3f42"
        case .moreDenied: "c2f7a9e1d3b54f6a8c0e2d4f6a8b0c13"
        case .moreExpired: "d9a1c3e5f7b94d2e6a8c0f1e3d5b7a94"
        case .moreEnded: "e5b7d9f1a3c24e6b8d0f2a4c6e8b0d25"
        case .delayed: "f1c3e5a7b9d04f2a6c8e0b2d4f6a8c36"
        case .session: "41c621de454e4dfb8d878bc5dd53334f"
        }
    }
}
