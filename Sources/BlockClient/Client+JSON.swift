import BlockCore

/// What `--json` prints (blockc(1) JSON OUTPUT). These shapes are an API for scripts, so each
/// command prints exactly what the page documents, whatever the daemon's answer wraps it in.
public enum JSONShape: Equatable, Sendable {
    /// The daemon's answer as it came: `status`, `start`, the more-time commands, `report`.
    case answer
    /// One array of the answer (`[]` when it is missing): the listings.
    case list(String)
    /// One object of the answer, else the whole answer: `selections show`.
    case member(String)
    /// `watch --json`: each event on a line of its own, as the daemon sent it (Client+Watch.swift).
    case events

    /// The document for the answer `o`.
    func document(_ o: JSONObject) -> JSON {
        switch self {
        case .answer, .events: .object(o)
        case .list(let key): o[key] ?? []
        case .member(let key): o[key] ?? .object(o)
        }
    }
}

extension Command {
    /// What the command's `--json` prints; nil when it takes no `--json` (the parser then
    /// refuses the flag). A switch, so that a new command does not compile until it says.
    public var jsonShape: JSONShape? {
        switch self {
        case .start, .status, .failuresClear, .more, .requests, .approve, .deny, .cancel, .report, .screen: .answer
        case .scheduleList: .list(Listing.schedules.rawValue)
        case .selections: .list(Listing.selections.rawValue)
        case .selectionShow: .member(SelectionShowReply.key)
        case .failures: .list(Listing.failures.rawValue)
        case .stats: .list(StatsReply.key)
        case .limitList: .list(Listing.limits.rawValue)
        case .watch: .events
        case .stop, .scheduleAdd, .scheduleRemove, .limitAdd, .limitRemove, .reload, .hello: nil
        // R1: blockc-agent's, never typed.
        case .foreground: nil
        case .web: nil
        }
    }
}

extension BlockcRunner {
    /// The document `--json` prints for the answer to `request`: its command's shape.
    static func jsonDocument(_ request: Request, _ o: JSONObject) -> JSON {
        request.command.jsonShape?.document(o) ?? .object(o)
    }

    /// Indented for a person at a terminal; one line into a pipe or file, so that line-based
    /// tools see one document per line.
    func jsonText(_ document: JSON) -> String {
        isTerminal ? document.prettyPrinted() : document.serialized()
    }
}
