import BlockCore
import FoundationEssentials

/// R3: once a week, the first time the agent runs in it, one notification says how the week
/// before went: the time in the selection whose apps and sites were used most, against the week
/// before it, the site longest in the focused tab (B2), and the more time asked and granted, with a button that opens the week's HTML report (R2).
/// Decided here without I/O; WeeklySummary+Agent.swift fetches, writes and remembers.
public enum WeeklySummary {
    /// The notification's slot: one at a time, apart from every selection's (S2).
    public static let slot = "blockd-weekly-summary"

    /// The Monday of `date`'s week (weeks run Monday to Sunday, as `report --week`).
    public static func monday(of date: CivilDate) -> CivilDate { date.adding(days: -date.weekday.rawValue) }

    /// The Monday of the week to summarize, when this week has had no summary yet (`last` is
    /// the Monday of the last week summarized, nil when none ever was); nil when it has.
    public static func due(today: CivilDate, last: CivilDate?) -> CivilDate? {
        let thisWeek = monday(of: today)
        if let last, last >= thisWeek.adding(days: -7) { return nil }
        return thisWeek.adding(days: -7)
    }
}

extension NotificationPlanner {
    /// R3: the summary of `report` (the daemon's answer for a week, the user's own view, decoded
    /// once where it arrived), or nil when the week had nothing to say (no app or site counted,
    /// nothing blocked, nothing asked).
    /// `reportURL` (already a `file://` URL with S7 encoding) becomes the button when the server
    /// and an opener allow one (S4).
    public func planWeeklySummary(_ report: ReportReply, reportURL: String?, abilities: Abilities) -> PlannedNotification? {
        func totals(_ figures: (ReportReply.Day) -> ReportReply.Figures) -> [String: Double] {
            var out: [String: Double] = [:]
            for day in report.days { for (name, s) in figures(day) { out[name, default: 0] += Double(s) } }
            return out
        }
        func most(_ totals: [String: Double]) -> (key: String, value: Double)? {
            totals.max(by: { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }).flatMap { $0.value >= 60 ? $0 : nil }
        }
        let used = totals { $0.used ?? [:] }, blocked = totals(\.blocked), web = totals(\.web)
        let asked = report.days.reduce(0) { $0 + $1.count(.asked) }, granted = report.days.reduce(0) { $0 + $1.count(.granted) }
        guard most(used) != nil || most(blocked) != nil || most(web) != nil || asked > 0 else { return nil }
        let en = language == .en
        var parts: [String] = []
        if let top = most(used) {
            let name = AllowOnly.display(top.key)
            var text = en ? "\(amount(top.value)) on \(name)" : "\(name)に\(amount(top.value))"
            if let before = report.previous?.used.map({ Double($0[top.key] ?? 0) }) {
                text += change(top.value - before)
            }
            parts.append(text)
        } else if let top = most(blocked) {
            let name = AllowOnly.display(top.key)
            parts.append(en ? "\(name) blocked for \(amount(top.value))" : "\(name)を\(amount(top.value))ブロック")
        }
        if let site = most(web) {  // B2: a site, not a selection, so no comparison with the week before
            parts.append(en ? "top site: \(site.key), \(amount(site.value))" : "一番見たサイトは\(site.key)（\(amount(site.value))）")
        }
        if asked > 0 {
            parts.append(en ? "\(asked) request\(asked == 1 ? "" : "s") for more time, \(granted) granted" : "延長のリクエスト\(asked)回、うち\(granted)回許可")
        }
        let body = en ? parts.joined(separator: "; ") + "." : parts.joined(separator: "。") + "。"
        var plan = PlannedNotification(selection: WeeklySummary.slot, summary: en ? "Last week" : "先週のまとめ", body: body,
                                       action: nil, urgency: 0)
        if let reportURL, abilities.serverActions, abilities.opener {
            plan.action = .init(label: en ? "Open report" : "レポートを開く", url: reportURL)
        }
        return plan
    }

    /// `9 h 20 min` / `9時間20分`, to the nearest minute (a week's time may pass a day).
    func amount(_ seconds: Double) -> String {
        let m = Int((seconds / 60).rounded())
        let (h, rest) = (m / 60, m % 60)
        if language == .en { return h == 0 ? "\(m) min" : rest == 0 ? "\(h) h" : "\(h) h \(rest) min" }
        return h == 0 ? "\(m)分" : rest == 0 ? "\(h)時間" : "\(h)時間\(rest)分"
    }

    /// `, 1 h 10 min less than the week before`, or about the same within half a minute a day.
    func change(_ delta: Double) -> String {
        let en = language == .en
        if abs(delta) < 210 { return en ? ", about the same as the week before" : "（前の週とほぼ同じ）" }
        if en { return ", \(amount(abs(delta))) \(delta < 0 ? "less" : "more") than the week before" }
        return "（前の週より\(amount(abs(delta)))\(delta < 0 ? "少ない" : "多い")）"
    }
}
