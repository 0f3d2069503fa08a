import FoundationEssentials

extension ReportHTML {
    /// What a bar counts, which names its colour, its element ids and its `data-kind`.
    enum Kind: String {
        case used, blocked, app, site, user, screen

        /// What its bars measure in each day of the answer.
        var measure: Measure {
            switch self {
            case .used: .used
            case .blocked: .blocked
            case .app: .apps
            case .site: .web
            case .user: .users
            case .screen: .screen
            }
        }

        /// Solid fills (GNOME's palette) that stay the same in the dark scheme, so a screenshot
        /// can be measured by colour (the render test does).
        var colour: String {
            switch self {
            case .used: "#3584e4"
            case .blocked: "#9141ac"
            case .app: "#2190a4"
            case .site: "#26a269"
            case .user: "#c64600"
            case .screen: "#613583"
            }
        }
    }

    static let limitColour = "#e01b24"

    /// One selection's (or, from an older daemon, one app's) seconds by day as an SVG bar
    /// chart: a bar per day scaled to a round top (a whole number of 15 min, 30 min, 1 h…
    /// steps), the figure over each bar while there is room, and each limit's allowance as a
    /// 2-pixel line over the days it applies. Coordinates are whole pixels and bars are drawn
    /// with crisp edges: a bar is a solid rectangle of its colour in a screenshot.
    struct WeekChart {
        struct Limit {
            var name: String
            /// Per day of the chart: the allowance, nil where the limit does not apply.
            var allowances: [Double?]
        }

        static let (width, left, top, plotHeight) = (640, 72, 22, 160)
        static let base = top + plotHeight
        static let height = base + 40

        let kind: Kind, index: Int, name: String, days: [ReportReply.Day], limits: [Limit]
        let values: [Double]

        init(kind: Kind, index: Int, name: String, days: [ReportReply.Day], limits: [Limit]) {
            (self.kind, self.index, self.name, self.days, self.limits) = (kind, index, name, days, limits)
            values = days.map { kind.measure.seconds(name, on: $0) }
        }

        var total: Double { values.reduce(0, +) }

        /// The top of the scale and its step: the largest bar or allowance rounded up to at most
        /// four steps.
        var scale: (top: Double, step: Double) {
            let most = max(values.max() ?? 0, limits.flatMap { $0.allowances.compactMap { $0 } }.max() ?? 0)
            let steps: [Double] = [900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
            let step = steps.first { (most / $0).rounded(.up) <= 4 } ?? 86400
            return (max(1, (most / step).rounded(.up)) * step, step)
        }

        /// Pixels for `seconds`; anything above nothing is at least 2 pixels, so it shows.
        func pixels(_ seconds: Double) -> Int {
            guard seconds > 0 else { return 0 }
            return max(2, Int((seconds / scale.top * Double(Self.plotHeight)).rounded()))
        }

        /// The left edge of day `i`'s slot; slot `days.count` is the plot's right edge.
        func slot(_ i: Int) -> Int {
            let plot = Double(Self.width - 8 - Self.left)
            return Self.left + Int((Double(i) * plot / Double(max(days.count, 1))).rounded())
        }

        var svg: String {
            let id = "\(kind.rawValue)-\(index)"
            var out = [#"<svg class="week" id="\#(id)" data-kind="\#(kind.rawValue)" data-name="\#(escape(name))" width="\#(Self.width)" height="\#(Self.height)" viewBox="0 0 \#(Self.width) \#(Self.height)" role="img" aria-label="\#(escape(AllowOnly.display(name))) by day">"#]
            out += grid()
            for i in days.indices { out += bar(i, id: id) }
            out += limitLines()
            out.append("</svg>")
            return out.joined(separator: "\n")
        }

        func grid() -> [String] {
            let (top, step) = scale
            var out: [String] = []
            for k in 1...Int(top / step) {
                let y = Self.base - pixels(Double(k) * step)
                out.append(#"<rect class="grid" x="\#(Self.left)" y="\#(y)" width="\#(slot(days.count) - Self.left)" height="1"/>"#)
                out.append(#"<text class="axis" x="\#(Self.left - 8)" y="\#(y + 4)" text-anchor="end">\#(figureHTML(Double(k) * step))</text>"#)
            }
            out.append(#"<rect class="baseline" x="\#(Self.left)" y="\#(Self.base)" width="\#(slot(days.count) - Self.left)" height="1"/>"#)
            return out
        }

        /// Day `i`'s bar (zero pixels high on a day with nothing: every day has its element),
        /// its figure while the slots are wide enough, and its label under the axis.
        func bar(_ i: Int, id: String) -> [String] {
            let (x0, x1) = (slot(i), slot(i + 1))
            let width = min(40, max(1, (x1 - x0) * 11 / 20))
            let (x, h) = (x0 + (x1 - x0 - width) / 2, pixels(values[i]))
            let date = days[i].date
            let label = Report.date(days[i]).map(ReportChart.dayText) ?? date
            let centre = x0 + (x1 - x0) / 2
            var out = [#"<rect class="bar" id="\#(id)-d\#(i)" data-kind="\#(kind.rawValue)" data-name="\#(escape(name))" data-day="\#(escape(date))" data-seconds="\#(Int(values[i].rounded()))" x="\#(x)" y="\#(Self.base - h)" width="\#(width)" height="\#(h)" fill="\#(kind.colour)" shape-rendering="crispEdges"><title>\#(escape(label)): \#(figureHTML(values[i]))</title></rect>"#]
            if x1 - x0 >= 60, values[i] > 0 {
                out.append(#"<text class="fig" x="\#(centre)" y="\#(Self.base - h - 7)" text-anchor="middle">\#(figureHTML(values[i]))</text>"#)
            }
            let every = days.count <= 14 ? 1 : (days.count + 9) / 10
            if i % every == 0 {
                let words = label.split(separator: " ")
                let (first, second) = days.count <= 14 && words.count >= 2 ? (String(words[0]), String(words[1])) : (words.count >= 2 ? String(words[1]) : label, "")
                out.append(#"<text class="day" x="\#(centre)" y="\#(Self.base + 16)" text-anchor="middle">\#(escape(first))</text>"#)
                if !second.isEmpty {
                    out.append(#"<text class="date" x="\#(centre)" y="\#(Self.base + 31)" text-anchor="middle">\#(escape(second))</text>"#)
                }
            }
            return out
        }

        /// A 2-pixel segment at each day's allowance across its slot: a run of days with the same
        /// allowance reads as one line.
        func limitLines() -> [String] {
            limits.flatMap { limit in
                limit.allowances.enumerated().compactMap { i, allowance -> String? in
                    guard let allowance, i < days.count else { return nil }
                    let date = escape(days[i].date)
                    return #"<rect class="limit" data-limit="\#(escape(limit.name))" data-day="\#(date)" data-seconds="\#(Int(allowance.rounded()))" x="\#(slot(i))" y="\#(Self.base - pixels(allowance) - 1)" width="\#(slot(i + 1) - slot(i))" height="2" fill="\#(limitColour)" shape-rendering="crispEdges"><title>Limit \#(escape(limit.name)): \#(figureHTML(allowance))</title></rect>"#
                }
            }
        }

        /// `Limit screen: 1 h a day`, `… 1 h to 2 h a day`, for the legend; nil without limits.
        var limitLegend: String? {
            let parts = limits.compactMap { limit -> String? in
                let figures = limit.allowances.compactMap { $0 }
                guard let low = figures.min(), let high = figures.max() else { return nil }
                let range = low == high ? ReportChart.figure(low) : "\(ReportChart.figure(low)) to \(ReportChart.figure(high))"
                let days = figures.count == limit.allowances.count ? "a day" : "a day where it applies"
                return "Limit \(limit.name): \(range) \(days)"
            }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }
    }

    /// A horizontal bar per name, biggest first, scaled to the first: apps', sites' or people's totals.
    struct HBar {
        var kind: Kind, name: String, label: String, seconds: Double, note: String?

        static let width = 260

        /// `firstIndex`: the first row's number in its element id, after the charts of its kind.
        static func table(_ rows: [HBar], firstIndex: Int = 0) -> String {
            let most = rows.map(\.seconds).max() ?? 0
            let lines = rows.enumerated().map { n, row in
                let i = firstIndex + n
                let w = row.seconds <= 0 || most <= 0 ? 0 : max(2, Int((row.seconds / most * Double(width)).rounded()))
                let note = row.note.map { #"<span class="note">\#(escape($0))</span>"# } ?? ""
                return #"<tr><th scope="row">\#(labelHTML(row))</th><td class="hbar"><svg width="\#(width)" height="14" viewBox="0 0 \#(width) 14" preserveAspectRatio="none"><rect class="bar" id="\#(row.kind.rawValue)-\#(i)" data-kind="\#(row.kind.rawValue)" data-name="\#(escape(row.name))" data-seconds="\#(Int(row.seconds.rounded()))" x="0" y="0" width="\#(w)" height="14" fill="\#(row.kind.colour)" shape-rendering="crispEdges"/></svg></td><td class="fig">\#(figureHTML(row.seconds))\#(note)</td></tr>"#
            }
            return "<table class=\"hbars\">\n" + lines.joined(separator: "\n") + "\n</table>"
        }

        /// An app's path with its file name stressed (`/usr/bin/` `steam`); other labels as they are.
        static func labelHTML(_ row: HBar) -> String {
            guard row.kind == .app, let slash = row.label.lastIndex(of: "/"), row.label.index(after: slash) < row.label.endIndex else {
                return #"<span class="name">\#(escape(row.label))</span>"#
            }
            let dir = row.label[...slash], file = row.label[row.label.index(after: slash)...]
            return #"<span class="dir">\#(escape(String(dir)))</span><span class="name">\#(escape(String(file)))</span>"#
        }
    }
}
