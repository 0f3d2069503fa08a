import BlockCore

/// `blockc --help` and `blockc help COMMAND` (§6). The man page blockc(1) documents
/// the same commands; a test compares the two lists.
public enum BlockcHelp {
    public static let usage = """
    Usage: blockc [--socket PATH] COMMAND [ARGS...]

    Talks to the blockd daemon: timed blocks and repeating schedules for websites and apps.

    Commands:
    \(Command.allCases.compactMap(listing).joined(separator: "\n"))

    SELECTION is a name from 'blockc selections', a domain such as example.com (the whole
    site: www.example.com and every other name under it too), a URL prefix such as
    youtube.com/shorts (blocked in Chromium-family browsers only), or an address pasted from
    a browser (https://www.youtube.com/ is read as youtube.com, with a path as its prefix).
    DURATION: 90s, 25m, 1h30m, 2d, or in words: 2 hours, 90 min, 1h 30m, 1.5h (1s to 366d);
    quotes are not needed: --for 2 hours.
    TIME: HH:MM or 10pm (the next one after now), tomorrow 07:00, sat 9am, or an ISO 8601
    date-time such as 2026-11-29T22:00; quotes are not needed: --until tomorrow 7am.
    DAYS: mon,wed or ranges such as mon-fri.
    DATE: YYYY-MM-DD, today or yesterday.
    POLICY (more time, see 'blockc help more'): --more-time no|self|approval (no: none at all;
    self: granted at once, up to --more-time-per-day DURATION a day, 30m unless given; approval:
    a request that root or a blockd-admin member answers, the default for a block set for
    someone else), --delay DURATION (every stop, removal or grant waits this long).

    Options (anywhere on the line, each at most once):
      --socket PATH    the daemon's socket (default $BLOCKD_SOCKET or /run/blockd/blockd.sock)
      -h, --help       print this help; with a COMMAND before or after it, that command's help
                       (as 'blockc help COMMAND')
      --version        print blockc's version (no daemon needed; 'blockc version' adds the daemon's)

    Exit status: 0 ok, 1 refused by the daemon, with its message (busy too; with --json its
    code too), or a start accepted but not enforced yet, 2 usage error, 3 daemon unreachable.
    See blockc(1), blockd(8) and blockd.conf(5).
    """

    /// One command's lines in the listing: the usage, then the summary at column 27 (on the
    /// next line when the usage is too long to leave room).
    static func listing(_ command: Command) -> String? {
        guard let (usage, summary) = command.blockcHelp else { return nil }
        let column = 25
        if usage.count < column - 1 { return "  " + usage + String(repeating: " ", count: column - usage.count) + summary }
        return "  \(usage)\n" + String(repeating: " ", count: column + 2) + summary
    }

    /// Help for one command or command group (`schedule` lists add, remove and list): the
    /// matching usage lines from the listing above, with their descriptions.
    public static func help(for topic: String) -> String? {
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var out: [String] = []
        var i = 0
        while i < lines.count {
            let line = lines[i]
            if line.hasPrefix("  \(topic) ") || line == "  \(topic)" {
                out.append("  blockc " + line.dropFirst(2))
                i += 1
                while i < lines.count, lines[i].hasPrefix("    ") {
                    out.append(lines[i])
                    i += 1
                }
                continue
            }
            i += 1
        }
        guard !out.isEmpty else { return nil }
        // The words the usage lines use, as the full help defines them, and examples.
        let commands = Command.allCases.filter { c in c.cliWords.map { $0 == topic || $0.hasPrefix(topic + " ") } ?? false }
        let terms = glossary.filter { term, _ in
            out.contains { $0.contains(term) } || (term == "POLICY" && commands.contains { [.more, .approve, .deny, .requests].contains($0) })
        }
        let examples = commands.flatMap(\.blockcExamples)
        return "Usage:\n" + out.joined(separator: "\n")
            + (terms.isEmpty ? "" : "\n\n" + terms.map(\.text).joined(separator: "\n"))
            + (examples.isEmpty ? "" : "\n\nExamples:\n" + examples.map { "  $ " + $0 }.joined(separator: "\n"))
    }

    /// The paragraphs of `usage` that define a word of the usage lines (SELECTION, DURATION…),
    /// each with the word it defines.
    static var glossary: [(term: String, text: String)] {
        let lines = usage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let terms = ["SELECTION", "DURATION", "TIME", "DAYS", "DATE", "POLICY"]
        var out: [(term: String, text: String)] = []
        for line in lines {
            if let term = terms.first(where: { line.hasPrefix($0 + " ") || line.hasPrefix($0 + ":") }) {
                out.append((term, line))
            } else if !out.isEmpty, !line.isEmpty, !line.hasPrefix(" "), !line.hasPrefix("Options") {
                out[out.count - 1].text += "\n" + line
            } else if line.isEmpty || line.hasPrefix("Options") {
                if !out.isEmpty && out.count == terms.count { break }
            }
        }
        return out
    }
}

extension Command {
    /// The options blockc takes for the command, read off its usage line (POLICY standing for
    /// the more-time flags): what a mistyped option is matched against.
    var blockcOptions: Set<String> {
        guard let usage = blockcHelp?.usage else { return [] }
        var out = Set(usage.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
        if usage.contains("POLICY") { out.formUnion(["--more-time", "--delay", "--more-time-per-day"]) }
        return out
    }

    /// What `blockc help COMMAND` shows as examples.
    var blockcExamples: [String] {
        switch self {
        case .start: ["blockc start --for 30m instagram", "blockc start --until 17:00 --lock youtube reddit",
                      "blockc start --for 2 hours --allow-only wikipedia.org", "blockc start --minutes 45 --user kid games"]
        case .stop: ["blockc stop instagram"]
        case .status: ["blockc status", "blockc status --user kid", "blockc status --watch"]
        case .scheduleAdd: ["blockc schedule add evenings --daily 22:00-07:00 youtube",
                            "blockc schedule add school --weekly mon-fri 08:30-15:00 --user kid games",
                            "blockc schedule add bedtime --daily 21:00-07:00 --user kid --session"]
        case .scheduleRemove: ["blockc schedule remove bedtime"]
        case .limitAdd: ["blockc limit add games 1h steam", "blockc limit add social 30m --days mon-fri --warn 5m instagram tiktok",
                         "blockc limit add screen 2h --user kid --session", "blockc limit add late 3h --user kid --session --action logout"]
        case .limitRemove: ["blockc limit remove games"]
        case .more: ["blockc more instagram 15m --reason \"group chat about homework\"", "blockc more games 10m", "blockc more youtube --today"]
        case .approve: ["blockc approve mq3v8k2x1fd 30m"]
        case .deny: ["blockc deny mq3v8k2x1fd --reason \"not on a school night\""]
        case .selectionShow: ["blockc selections show social"]
        case .screen: ["blockc screen", "blockc screen --user kid"]
        case .report: ["blockc report --week", "blockc report --day yesterday --by app", "blockc report --last 30 --html month.html"]
        case .watch: ["blockc watch", "blockc watch --notify"]
        case .scheduleList, .selections, .failures, .failuresClear, .foreground, .web, .limitList, .requests, .cancel, .stats,
             .reload, .hello: []
        }
    }

    /// Whether blockc takes `option` for the command.
    func takes(_ option: String) -> Bool { blockcOptions.contains(option) }

    /// blockc's usage line and one-line summary of the command; nil for a command blockc
    /// reaches through another's flag. A new command does not compile until it has its help.
    var blockcHelp: (usage: String, summary: String)? {
        switch self {
        case .start: ("start (--minutes N | --for DURATION | --until TIME) [--lock] [--allow-only] [--name NAME] [--user NAME]... [POLICY] [--json] SELECTION...",
                      "block SELECTIONs now until the end (--allow-only: everything but them); starting again extends, never shortens")
        case .stop: ("stop NAME", "end a block early (not one started with --lock)")
        case .status: ("status [--json] [--watch] [--all] [--user NAME | --all-users]",
                       "what is blocked, for whom, why, and until when (an administrator sees every user's; --user NAME: what NAME sees); the active activities and counts (--all: every one)")
        case .scheduleAdd: ("schedule add NAME (--daily HH:MM-HH:MM | --weekly DAYS HH:MM-HH:MM) [--user NAME]... [POLICY] ([--allow-only] SELECTION... | --session [--action lock|logout|suspend|poweroff])",
                            "block SELECTIONs (--allow-only: everything but them) every day (or on DAYS) in a window of local time; --session: allowed hours, the screen is locked (or the action) in the window")
        case .scheduleRemove: ("schedule remove NAME", "remove a schedule")
        case .scheduleList: ("schedule list [--json]", "list schedules with their current or next window")
        case .selections: ("selections [--json]", "list the selections (built-in catalog and selections.d)")
        case .selectionShow: ("selections show NAME [--json]", "the domains, apps and paths of one selection")
        case .failures: ("failures [--json] [--clear]", "broken configuration, enforcement errors and other failures (resolved ones marked)")
        case .failuresClear: nil
        case .foreground: nil  // R1: blockc-agent's, not typed
        case .web: nil  // B2: the native-messaging host's, not typed
        case .limitAdd: ("limit add NAME DURATION [--days DAYS] [--warn DURATION] [--user NAME]... [POLICY] (SELECTION... | --session [--action lock|logout|suspend|poweroff])",
                         "block SELECTIONs' apps and sites for the rest of the day for whoever used DURATION of them (each person their own); --session: DURATION at the screen, then lock (or the action)")
        case .limitRemove: ("limit remove NAME", "remove a daily limit")
        case .limitList: ("limit list [--json]", "list daily limits with today's use")
        case .more: ("more NAME (DURATION | --today) [--reason TEXT] [--json]",
                     "ask for more time for a blocked selection, or more use of a used-up limit NAME (granted, or a request for an admin)")
        case .requests: ("requests [--json]", "pending more-time requests, grants, and changes waiting for Delay=")
        case .approve: ("approve ID [DURATION] [--json]", "grant a more-time request (root and group blockd-admin)")
        case .deny: ("deny ID [--reason TEXT] [--json]", "refuse a more-time request (root and group blockd-admin)")
        case .cancel: ("cancel NAME", "keep an activity whose stop or removal waits for Delay=, or withdraw a request")
        case .stats: ("stats [--json]", "shield hits per selection per day")
        case .screen: ("screen [--user NAME] [--json] [--pam]",
                       "whether you (or NAME) may be at the screen now, or what keeps you off it and until when; --pam: pam_exec's check, which refuses a login then")
        case .report: ("report [--last N [--to DATE] | --day DATE | --week [DATE] | --month [DATE]] [--user NAME | --all-users] [--by selection|app|user] [--json | --csv | --html FILE]",
                       "per day, time in each selection's apps and sites (limits drawn), the top apps and sites, time blocked; blocks and more time (the last 7 days)")
        case .watch: ("watch [--json] [--notify]", "follow the daemon's events about you (an admin: everyone's; --notify: desktop notifications)")
        case .reload: ("reload", "reload the daemon's configuration")
        case .hello: ("version", "print the client and daemon versions")
        }
    }
}
