import FoundationEssentials

/// R2: `blockc report --html`: the report (schema 1) as one self-contained HTML5 page, pure.
/// Inline CSS and inline SVG only: no script, nothing fetched (no font, image or link to the
/// network), so it reads the same offline, in a mail attachment or with JavaScript off. Every
/// name from the answer is escaped; figures and averages are the terminal view's
/// (`ReportChart.figure`, `ReportChart.summary`). Fields added after schema 1's first answers
/// (`used`, `limits`, `users`, `foreground`, `web`, `previous.used`) are optional: an older
/// daemon's answer draws the apps' charts instead of the selections'.
public enum ReportHTML {
    /// The page for `report` (decoded once where it arrived), titled `title`; `userName` names a
    /// uid (nil: shown as `uid N`); `generated` (the caller's clock, such as `2026-11-29 18:04`)
    /// goes in the footer.
    public static func page(_ report: ReportReply, title: String, generated: String? = nil,
                            userName: (Int) -> String?) -> String {
        let r = Report(report)
        var body = [header(r, title: title, userName: userName)]
        if r.days.isEmpty {
            body.append(#"<section class="card empty"><p>No days in the report.</p></section>"#)
        } else {
            body += screenSections(r, userName: userName)
            body += timeSections(r)
            body.append(people(r, userName: userName))
            body.append(blockedSection(r))
            body.append(counts(r))
        }
        let footer = generated.map { "<footer>Generated \(escape($0)) by blockd.</footer>" } ?? ""
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(escape(title))</title>
            <style>
            \(style)
            </style>
            </head>
            <body>
            <main>
            \(body.filter { !$0.isEmpty }.joined(separator: "\n"))
            \(footer)
            </main>
            </body>
            </html>

            """
    }

    /// A figure ("1 h 5 min", "<1 min") as HTML text.
    static func figureHTML(_ seconds: Double) -> String { escape(ReportChart.figure(seconds)) }

    /// Text for HTML, in an element or a quoted attribute: `& < > " '` as references, and
    /// control characters (other than tab and newline) dropped, as the text view drops them.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n": out.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: - Sections

    static func header(_ r: Report, title: String, userName: (Int) -> String?) -> String {
        let whose = r.user.map { "for " + (userName($0) ?? "uid \($0)") } ?? "for the whole machine"
        let period = r.days.isEmpty ? "" : r.periodText + ", "
        return """
            <header>
            <h1>\(escape(title))</h1>
            <p class="period">\(escape(period + whose))</p>
            </header>
            """
    }

    /// Screen time first, as the text report has it: a chart per person at the screen (their
    /// local login sessions active, unlocked and not idle), by day. Nothing from an older
    /// daemon, which did not count it.
    static func screenSections(_ r: Report, userName: (Int) -> String?) -> [String] {
        guard r.days.contains(where: { $0.screen != nil }) else { return [] }
        let people = r.ranked(.screen)
        guard !people.isEmpty else { return [card("Screen time", #"<p class="note">None was counted (blockd reads logind's sessions).</p>"#)] }
        return people.enumerated().map { i, person in
            let whose = r.user != nil ? "" : " — " + (Int(person.name).flatMap(userName) ?? "uid \(person.name)")
            // One's own page draws one's screen-time limits; the machine's limit figures are the
            // most any one person used, no one person's line.
            let limits = r.user != nil ? r.screenLimits : []
            return chartCard("Screen time" + whose, WeekChart(kind: .screen, index: i, name: person.name, days: r.days, limits: limits), r, previous: nil)
        }
    }

    /// The main figure: each selection's time in its apps and on its sites (`used`) by day, its
    /// limits as a line; an older answer without `used` gets a chart per app instead. Then the
    /// apps and the sites, biggest first.
    static func timeSections(_ r: Report) -> [String] {
        var out: [String] = []
        if r.hasUsed {
            let names = r.names(.used).filter { r.total(.used, $0) > 0 }
            if names.isEmpty { out.append(card("Time in apps and on sites", #"<p class="note">\#(noTime(r))</p>"#)) }
            let (charted, small) = split(names, .used, r)
            for (i, name) in charted.enumerated() {
                let chart = WeekChart(kind: .used, index: i, name: name, days: r.days, limits: r.limits(for: name))
                out.append(chartCard(AllowOnly.display(name), chart, r, previous: r.previous(\.used, name)))
            }
            if !small.isEmpty {
                let heading = charted.isEmpty ? "Time in apps and on sites" : "Other selections"
                out.append(card(heading, smallTable(small, .used, r, firstIndex: charted.count)))
            }
        } else {
            let apps = r.names(.apps)
            for (i, app) in apps.enumerated() {
                out.append(chartCard(app, WeekChart(kind: .app, index: i, name: app, days: r.days, limits: []), r, previous: nil))
            }
        }
        out.append(appsBreakdown(r))
        out.append(sitesBreakdown(r))
        return out
    }

    /// What the page says where no selection's time was counted: what there was none of. An
    /// answer without `used` is an older daemon's, which does not count sites: only apps.
    static func noTime(_ r: Report) -> String {
        switch (r.ranked(.apps).isEmpty, r.ranked(.web).isEmpty) {
        case (true, true): r.hasUsed ? "No time in apps or on sites was counted." : "No time in apps was counted."
        case (true, false): "No time in apps was counted; the time on sites is below."
        case (false, _): "No selection's apps or sites were used; the apps are below."
        }
    }

    static func appsBreakdown(_ r: Report) -> String {
        let apps = r.ranked(.apps)
        guard !apps.isEmpty else {
            return r.hasUsed ? "" : card("Time in apps", #"<p class="note">\#(noTime(r))</p>"#)
        }
        // X11 only (R1): no figure rather than "0 min" for an app never seen with the focus.
        let focus = { (app: String) -> Double? in
            let seconds = r.total(.foreground, app)
            return seconds > 0 ? seconds : nil
        }
        let rows = apps.map { app in
            HBar(kind: .app, name: app.name, label: app.name, seconds: app.seconds,
                 note: focus(app.name).map { "\(ReportChart.figure($0)) in focus" })
        }
        let head = "Apps, total over \(r.periodWord == "week" ? "the week" : r.periodWord)"
        return card(head, HBar.table(rows))
    }

    /// How many sites the page lists; the rest are counted together under them.
    static let siteCount = 10

    /// B2: the sites longest in the focused tab, biggest first, as the apps are; past
    /// `siteCount`, how many more and their time together.
    static func sitesBreakdown(_ r: Report) -> String {
        let sites = r.ranked(.web)
        guard !sites.isEmpty else { return "" }
        let rows = sites.prefix(siteCount).map { HBar(kind: .site, name: $0.name, label: $0.name, seconds: $0.seconds, note: nil) }
        let rest = sites.dropFirst(siteCount)
        let more = rest.isEmpty ? "" : "\n<p class=\"note\">\(rest.count) more site\(rest.count == 1 ? "" : "s"): \(figureHTML(rest.reduce(0) { $0 + $1.seconds })).</p>"
        return card("Sites, total over \(r.periodWord == "week" ? "the week" : r.periodWord)", HBar.table(rows) + more)
    }

    /// The whole machine's view: each person's time in any counted app (`users`).
    static func people(_ r: Report, userName: (Int) -> String?) -> String {
        guard r.user == nil else { return "" }
        let users = r.ranked(.users)
        guard !users.isEmpty else { return "" }
        let rows = users.map { u in
            HBar(kind: .user, name: u.name, label: Int(u.name).flatMap(userName) ?? "uid \(u.name)", seconds: u.seconds, note: nil)
        }
        return card("People", HBar.table(rows))
    }

    static func blockedSection(_ r: Report) -> String {
        let names = r.names(.blocked).filter { r.total(.blocked, $0) > 0 }
        guard !names.isEmpty else { return card("Blocked time", #"<p class="note">Nothing was blocked.</p>"#) }
        var parts: [String] = []
        let (charted, small) = split(names, .blocked, r)
        for (i, name) in charted.enumerated() {
            let chart = WeekChart(kind: .blocked, index: i, name: name, days: r.days, limits: [])
            parts.append("<h3>\(escape(AllowOnly.display(name)))</h3>\n" + chart.svg + "\n" + summary(chart, r, previous: r.previous(\.blocked, name)))
        }
        if !small.isEmpty {
            parts.append((charted.isEmpty ? "" : "<h3>Other selections</h3>\n") + smallTable(small, .blocked, r, firstIndex: charted.count))
        }
        return card("Blocked time", parts.joined(separator: "\n"))
    }

    /// A chart's smallest scale: a selection whose busiest day is shorter, and that has no
    /// limit to draw, would be a near-empty chart; it is a row of one table instead.
    static let chartMinimum: Double = 900

    /// The selections worth a chart of their own (a day of at least `chartMinimum`, or a
    /// limit), and the others, each list in the answer's order.
    static func split(_ names: [String], _ kind: Kind, _ r: Report) -> (charted: [String], small: [String]) {
        var charted: [String] = [], small: [String] = []
        for name in names {
            let busiest = r.days.map { kind.measure.seconds(name, on: $0) }.max() ?? 0
            let limited = kind == .used && !r.limits(for: name).isEmpty
            if busiest >= chartMinimum || limited { charted.append(name) } else { small.append(name) }
        }
        return (charted, small)
    }

    /// The small selections as one table of totals over the period, biggest first.
    static func smallTable(_ names: [String], _ kind: Kind, _ r: Report, firstIndex: Int) -> String {
        let rows = names.map { HBar(kind: kind, name: $0, label: AllowOnly.display($0), seconds: r.total(kind.measure, $0), note: nil) }
            .sorted { $0.seconds > $1.seconds }
        let word = r.periodWord == "week" ? "the week" : r.periodWord
        return "<p class=\"note\">Less than \(figureHTML(chartMinimum)) on every day; totals over \(escape(word)):</p>\n"
            + HBar.table(rows, firstIndex: firstIndex)
    }

    static func counts(_ r: Report) -> String {
        let items: [(count: UsageHistory.Count, label: String)] = [
            (.started, "Blocks started"), (.stoppedEarly, "Stopped early"),
            (.asked, "More time asked"), (.granted, "Granted"), (.denied, "Denied"),
        ]
        var tiles = items.map { item in
            #"<li data-count="\#(item.count.rawValue)"><span class="n">\#(r.count(item.count))</span> \#(item.label)</li>"#
        }
        var hits = 0
        for day in r.days { hits += day.shieldHits.values.reduce(0, +) }
        if hits > 0 { tiles.append(#"<li data-count="shieldHits"><span class="n">\#(hits)</span> Shield hits</li>"#) }
        return card("Blocks and more time", "<ul class=\"counts\">\n" + tiles.joined(separator: "\n") + "\n</ul>")
    }

    // MARK: - Pieces

    static func card(_ heading: String, _ content: String) -> String {
        "<section class=\"card\">\n<h2>\(escape(heading))</h2>\n\(content)\n</section>"
    }

    static func chartCard(_ heading: String, _ chart: WeekChart, _ r: Report, previous: Double?) -> String {
        let legend = chart.limitLegend.map { "\n<p class=\"legend\"><span class=\"key-limit\"></span>\(escape($0))</p>" } ?? ""
        return card(heading, "<p class=\"total\">\(figureHTML(chart.total))</p>\n" + chart.svg + legend + "\n" + summary(chart, r, previous: previous))
    }

    static func summary(_ chart: WeekChart, _ r: Report, previous: Double?) -> String {
        let text = ReportChart.summary(total: chart.total, days: r.days.count, previous: previous, period: r.periodWord)
        return "<p class=\"summary\">\(escape(text))</p>"
    }
}
