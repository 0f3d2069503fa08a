import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Human output of `more`, `requests`, `approve`, `deny`, `cancel`, and of a stop or removal
/// that waits for its `Delay=` (M1-M3).
extension Output {
    public func moreTime(_ o: JSONObject) -> String {
        if o["pending"] != nil { return delayed(o) }
        if let id = o["denied"] { return "Denied request \(text(id)) for \(text(o["selection"]))." }
        if let name = o["cancelled"] {
            return text(o["kind"]) == "request" ? "Withdrew request \(text(name))." : "Cancelled the \(text(o["kind"])) of '\(text(name))'; it stays."
        }
        if o["requests"] != nil { return requests(o) }
        switch text(o["state"]) {
        case "granted": return granted(o)
        case "pending":
            let expires = instant(o["expires"]).map(time) ?? text(o["expires"])
            return "Asked for more time for \(text(o["selection"])) (request \(text(o["id"]))); an administrator answers with 'blockc approve \(text(o["id"]))' or 'blockc deny \(text(o["id"]))'. It expires at \(expires) if unanswered."
        default: return generic(o)
        }
    }

    /// A window over blocks and schedules ("until 18:51 (15m left)"), and over a used-up daily
    /// limit an amount of use (M3: not a window; unused, it keeps until midnight).
    func granted(_ o: JSONObject) -> String {
        let start = instant(o["start"]), end = instant(o["end"])
        let from = start.map { $0 > now ? " from \(time($0)) (after the delay)" : "" } ?? ""
        let by = o["grantedBy"]?.int.map { " by \(o["grantedByUser"]?.string.map(Output.clean) ?? person($0))" } ?? ""
        let head = "More time for \(text(o["selection"])) (\(text(o["id"])))\(by)\(from)"
        let window = "\(end.map { until($0) } ?? ""); blocked again at its end if a reason still holds."
        let allowance = (o["allowance"]?.array ?? []).compactMap(\.string)
        guard !allowance.isEmpty, let start, let end else { return "\(head) \(window)" }
        let amount = DurationText.format(Int(end.timeIntervalSince(start).rounded()))
        let limits = allowance.map { "'\(Output.clean($0))'" }.joined(separator: ", ")
        let use = "\(amount) more use today under limit\(allowance.count == 1 ? "" : "s") \(limits); blocked again when it is used up."
        let others = (o["activities"]?.array ?? []).compactMap(\.string).filter { !allowance.contains($0) }
        return others.isEmpty ? "\(head): \(use)" : "\(head) \(window.dropLast()), and \(use)"
    }

    /// `stop`, `schedule remove` or `limit remove` of an activity with `Delay=` (M2).
    func delayed(_ o: JSONObject) -> String {
        let name = text(o["pending"])
        let at = instant(o["at"]).map { self.at($0) } ?? text(o["at"])
        return "The \(text(o["kind"])) of '\(name)' takes effect \(at) (Delay=); 'blockc cancel \(name)' keeps it."
    }

    public func requests(_ o: JSONObject) -> String {
        let requests = o["requests"]?.array ?? [], grants = o["grants"]?.array ?? [], delayed = o["delayed"]?.array ?? []
        if requests.isEmpty && grants.isEmpty && delayed.isEmpty { return "No requests, grants or delayed changes." }
        var lines: [String] = []
        if !requests.isEmpty {
            lines.append(heading("Requests"))
            lines += table(requests.map { r in
                let asked = r["seconds"]?.int.map(DurationText.format) ?? "rest of the day"
                return [Cell(text(r["id"]), .bold), Cell(text(r["selection"])), Cell(asked), Cell(person(r)),
                        Cell(text(r["reason"]))]
            })
        }
        if !grants.isEmpty {
            lines.append(heading("More time"))
            lines += table(grants.map { g in
                [Cell(text(g["id"]), .bold), Cell(text(g["selection"])), Cell(until(g["end"])), Cell(person(g)),
                 Cell(g["grantedBy"]?.int.map { "granted by \(g["grantedByUser"]?.string.map(Output.clean) ?? person($0))" } ?? "by policy")]
            })
        }
        if !delayed.isEmpty {
            lines.append(heading("Waiting for Delay="))
            lines += table(delayed.map { d in
                [Cell(text(d["pending"]), .bold), Cell(text(d["kind"])), Cell(instant(d["at"]).map { at($0) } ?? "")]
            })
        }
        return lines.joined(separator: "\n")
    }

    /// `status`: each loosening that waits for its `Delay=`, in words ("stop of 'work' takes
    /// effect at 16:40 (in 2m); 'blockc cancel work' to keep it"), then the pending requests
    /// and the grants, as `requests` shows them (M2, M3). Nothing when there are none.
    func moreTimeStatus(_ s: JSONObject) -> [String] {
        let delayed = (s["delayed"]?.array ?? []).compactMap(\.object)
        var rest: JSONObject = ["requests": s["requests"] ?? [], "grants": s["grants"] ?? [], "delayed": []]
        let hasRest = !(rest["requests"]?.array ?? []).isEmpty || !(rest["grants"]?.array ?? []).isEmpty
        guard hasRest || !delayed.isEmpty else { return [] }
        var lines: [String] = []
        if !delayed.isEmpty {
            lines += ["", heading("Waiting for Delay=")]
            for d in delayed {
                let name = text(d["pending"])
                let what = switch text(d["kind"]) {
                case "schedule-remove": "removal of schedule"
                case "limit-remove": "removal of limit"
                default: text(d["kind"])
                }
                let at = instant(d["at"]).map { self.at($0) } ?? text(d["at"])
                lines.append("  \(what) of '\(name)' takes effect \(at); 'blockc cancel \(name)' to keep it")
            }
        }
        rest["delayed"] = []
        if hasRest { lines += [""] + requests(rest).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        return lines
    }
}
