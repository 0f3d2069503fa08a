/// The commands of the control protocol (§8), one case each: the raw value is the
/// word on the wire. The protocol's parse and format, blockc's argv parser, its `--help`,
/// the man pages and the shell completions all follow this list (a test checks the last
/// three), so a command is added here first and the compiler points at the rest.
///
/// The order is the order blockc(1) and blockd(8) document them in.
public enum Command: String, CaseIterable, Sendable, CustomStringConvertible {
    case start
    case stop
    case status
    case scheduleAdd = "schedule-add"
    case scheduleRemove = "schedule-remove"
    case scheduleList = "schedule-list"
    case selections
    case selectionShow = "selection-show"
    case failures
    case failuresClear = "failures-clear"
    case limitAdd = "limit-add"
    case limitRemove = "limit-remove"
    case limitList = "limit-list"
    // M1, M2: more time.
    case more, requests, approve, deny, cancel
    case stats
    // R2: the usage ledger.
    case report
    // Screen time: whether a person may be at the screen now, or what keeps them off it.
    case screen
    // R1: the session agent's report of the app in the foreground.
    case foreground
    // B2: the browser extension's report (through its native-messaging host) of the site in
    // the focused window's visible tab.
    case web
    case watch
    case reload
    case hello

    /// The wire word, so that messages interpolate "schedule-add", never "scheduleAdd".
    public var description: String { rawValue }

    /// The words that name the command on blockc's command line ("schedule add"), or nil
    /// where blockc reaches it through another command's flag (`failures --clear`).
    public var cliWords: String? {
        switch self {
        case .scheduleAdd: "schedule add"
        case .scheduleRemove: "schedule remove"
        case .scheduleList: "schedule list"
        case .selectionShow: "selections show"
        case .limitAdd: "limit add"
        case .limitRemove: "limit remove"
        case .limitList: "limit list"
        case .failuresClear: nil
        // R1: sent by blockc-agent, not typed.
        case .foreground: nil
        // B2: sent by the native-messaging host, not typed.
        case .web: nil
        // `blockc version` prints the client's version and the daemon's answer to hello.
        case .hello: "version"
        case .start, .stop, .status, .selections, .failures, .stats, .report, .screen, .watch, .reload: rawValue
        case .more, .requests, .approve, .deny, .cancel: rawValue
        }
    }

    /// Whether the command changes state (its route says, Authority.swift).
    public var modifies: Bool { route.modifies }

    /// blockc's commands, in documented order: "start", ..., "schedule add", ..., "version".
    public static var cliCommands: [String] { allCases.compactMap(\.cliWords) }

    /// The first words of blockc's commands ("schedule" once for add, remove and list).
    public static var cliGroups: [String] {
        var out: [String] = []
        for words in cliCommands {
            let first = String(words.split(separator: " ")[0])
            if !out.contains(first) { out.append(first) }
        }
        return out
    }

    /// The second words under a group: "schedule" -> ["add", "remove", "list"]; [] for a
    /// command that stands alone.
    public static func subcommands(of group: String) -> [String] {
        cliCommands.compactMap { words in
            let parts = words.split(separator: " ")
            return parts.count == 2 && parts[0] == group ? String(parts[1]) : nil
        }
    }

    /// The command that blockc's leading words name: the longest match, so that
    /// `selections show x` is selection-show and `selections` alone is selections.
    public static func named(by words: [String]) -> (command: Command, consumed: Int)? {
        for count in [2, 1] where words.count >= count {
            let phrase = words.prefix(count).joined(separator: " ")
            if let command = allCases.first(where: { $0.cliWords == phrase }) { return (command, count) }
        }
        return nil
    }
}
