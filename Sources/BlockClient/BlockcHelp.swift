import BlockCore

/// `blockc --help` and `blockc help COMMAND` (DESIGN §6). The man page blockc(1) documents
/// the same commands; a test compares the two lists.
public enum BlockcHelp {
    public static let usage = """
    Usage: blockc [--socket PATH] COMMAND [ARGS...]

    Talks to the blockd daemon: timed blocks and repeating schedules for websites and apps.

    Commands:
      start (--minutes N | --for DURATION | --until TIME) [--lock] [--name NAME] [--json] SELECTION...
                               block SELECTIONs now until the end; starting again extends, never shortens
      stop NAME                end a block early (not one started with --lock)
      status [--json] [--watch]
                               what is blocked, why, and until when
      schedule add NAME (--daily HH:MM-HH:MM | --weekly DAYS HH:MM-HH:MM) SELECTION...
                               block SELECTIONs every day (or on DAYS) in a window of local time
      schedule remove NAME     remove a schedule
      schedule list [--json]   list schedules with their current or next window
      selections [--json]      list the selections (built-in catalog and selections.d)
      selections show NAME [--json]
                               the domains, apps and paths of one selection
      failures [--json] [--clear]
                               refused registrations and enforcement errors
      limit add NAME DURATION [--days DAYS] [--warn DURATION] SELECTION...
                               block SELECTIONs' apps for the rest of the day after DURATION of use
      limit remove NAME | limit list [--json]
      stats [--json]           shield hits per selection per day
      watch [--json] [--notify]
                               follow the daemon's events (--notify: desktop notifications)
      reload                   reload the daemon's configuration
      version                  print the client and daemon versions

    SELECTION is a name from 'blockc selections', a domain such as example.com, or a URL
    prefix such as youtube.com/shorts (blocked in Chromium-family browsers only).
    DURATION: 90s, 25m, 1h30m, 2d (1s to 366d).  TIME: HH:MM (the next one after now) or an
    ISO 8601 date-time such as 2026-11-29T22:00.  DAYS: mon,wed or ranges such as mon-fri.

    Options (anywhere on the line, each at most once):
      --socket PATH    the daemon's socket (default $BLOCKD_SOCKET or /run/blockd/blockd.sock)
      -h, --help       print this help; with a COMMAND before or after it, that command's help
                       (as 'blockc help COMMAND')
      --version        print the version

    Exit status: 0 ok, 1 refused by the daemon (or a start accepted but not enforced yet),
    2 usage error, 3 daemon unreachable.
    See blockc(1), blockd(8) and blockd.conf(5).
    """

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
        return out.isEmpty ? nil : "Usage:\n" + out.joined(separator: "\n")
    }
}
