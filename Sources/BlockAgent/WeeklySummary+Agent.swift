import BlockClient
import BlockCore
import FoundationEssentials
import Glibc

/// R3 at the edge: remembers the last week summarized in the user's state directory, asks
/// blockd for the week before this one, writes its HTML report beside that memory and hands
/// the notification to the notifier. Checked at start and whenever the local day changes while
/// the agent runs; a daemon that cannot be reached, or a summary no notification server
/// showed, is tried again ten minutes later. The week is remembered once it was shown (or had
/// nothing to say).
final class WeeklySummaryTask {
    let directory: String?
    let socketPath: String
    let clock: LocalClock
    let log: (String) -> Void
    private var checkedDay: CivilDate?
    private var retryAt: Date?
    private var saidDone = false

    init(environment: [String: String], socketPath: String, clock: LocalClock, log: @escaping (String) -> Void) {
        self.directory = WeeklySummaryTask.stateDirectory(environment)
        self.socketPath = socketPath
        self.clock = clock
        self.log = log
    }

    /// `$XDG_STATE_HOME/blockd`, else `~/.local/state/blockd` (nil: nowhere to remember, so
    /// no summary rather than one at every start).
    static func stateDirectory(_ environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/blockd" }
        if let home = environment["HOME"], home.hasPrefix("/"), home != "/" { return home + "/.local/state/blockd" }
        return nil
    }

    var markerPath: String? { directory.map { $0 + "/weekly-summary" } }
    var pagePath: String? { directory.map { $0 + "/last-week.html" } }

    /// Called on every turn of the agent's loop: cheap unless the day changed or a retry is due.
    func tick(now: Date, notifier: Notifier) {
        let today = clock.civil(of: now).date
        if let retryAt, now < retryAt { return }
        guard retryAt != nil || checkedDay != today else { return }
        (checkedDay, retryAt) = (today, nil)
        guard let markerPath else { return }
        let last = lastSummarized(markerPath)
        guard let week = WeeklySummary.due(today: today, last: last) else {
            if !saidDone, let last {  // once per run: the week is done, the next is not due
                saidDone = true
                log("weekly summary: the week of \(last) was summed up already; the next is due on \(WeeklySummary.monday(of: today).adding(days: 7))")
            }
            return
        }
        let report: ReportReply
        switch fetch(week) {
        case .success(let o): report = o
        case .failure(.unreachable):
            retryAt = now.addingTimeInterval(600)
            return
        case .failure(let error):  // refused: it would refuse again
            log("no weekly summary: blockd refused the report (\(error))")
            remember(week, markerPath)
            return
        }
        let url = writePage(report, week: week)
        guard notifier.post({ abilities in notifier.planner.planWeeklySummary(report, reportURL: url, abilities: abilities) }) else {
            retryAt = now.addingTimeInterval(600)  // no notification server yet (it may start after the agent at login)
            return
        }
        remember(week, markerPath)
    }

    /// The week's report, decoded once here for the page and the summary.
    func fetch(_ monday: CivilDate) -> Result<ReportReply, AgentError> {
        guard let connection = try? ControlConnection(path: socketPath, timeout: 2) else { return .failure(.unreachable) }
        defer { connection.close() }
        switch try? connection.send(.report(ReportArguments(period: .week, to: monday))) {
        case .ok(let o)?: return .success(ReportReply(o))
        case .error(let e)?: return .failure(.refused(e.message))
        case .event?, nil: return .failure(.unreachable)
        }
    }

    func lastSummarized(_ path: String) -> CivilDate? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return try? CivilDate.parse(String(text.prefix { !$0.isWhitespace }))
    }

    func remember(_ week: CivilDate, _ path: String) {
        if let problem = write(week.description + "\n", to: path) {
            log("cannot remember the weekly summary in \(path): \(problem); it may come again")
        }
    }

    /// The week's page as a `file://` URL (S7: each path segment percent-encoded), or nil when
    /// it could not be written (the notification then has no button).
    func writePage(_ report: ReportReply, week: CivilDate) -> String? {
        guard let pagePath else { return nil }
        let page = ReportHTML.page(report, title: "Last week", userName: Output.systemUserName)
        if let problem = write(page, to: pagePath) {
            log("cannot write the weekly report to \(pagePath): \(problem); the summary goes without its button")
            return nil
        }
        return "file://" + pagePath.split(separator: "/").map { PercentEncoding.encode(String($0)) }.reduce("") { $0 + "/" + $1 }
    }

    /// Writes `text` to `path` (0600) whole or not at all, as `report --html` does, making the
    /// directory (0700) first. The problem's text, or nil.
    func write(_ text: String, to path: String) -> String? {
        let dir = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        var made = ""
        for part in dir.split(separator: "/") {
            made += "/" + part
            _ = mkdir(made, 0o700)
        }
        return BlockcRunner.writeAtomically(path, text, mode: 0o600)
    }
}
