import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Human output of `more`, `requests`, `approve`, `deny`, `cancel`, and of a stop or removal
/// (which may wait for its `Delay=`, M1-M3), from the answers' types (Replies+MoreTime.swift).
extension Output {
    /// `more` and `approve`: more time now, or a request that waits for an administrator.
    public func more(_ reply: MoreReply) -> String {
        switch reply {
        case .granted(let g): return granted(g)
        case .pending(let r):
            let id = Output.clean(r.id)
            let expires = instant(r.expires).map(time) ?? Output.clean(r.expires ?? "")
            return "Asked for more time for \(Output.clean(r.selection)) (request \(id)); an administrator answers with 'blockc approve \(id)' or 'blockc deny \(id)'. It expires at \(expires) if unanswered."
        case .unknown(let o): return generic(o)
        }
    }

    public func denied(_ reply: DeniedReply) -> String {
        "Denied request \(Output.clean(reply.id)) for \(Output.clean(reply.selection))."
    }

    public func cancelled(_ reply: CancelledReply) -> String {
        let name = Output.clean(reply.name)
        return switch reply.kind {
        case .known(.request): "Withdrew request \(name)."
        case .known(.loosening), .unknown: "Cancelled the \(Output.clean(reply.kind.word)) of '\(name)'; it stays."
        }
    }

    /// `stop`, `schedule remove` or `limit remove` (`kind`: what a removal removed): done, or
    /// waiting for its `Delay=` (M2).
    public func removal(_ reply: RemovalReply, kind: String) -> String {
        switch reply {
        case .stopped(let name):
            return "Stopped block '\(Output.clean(name))'. Anything another activity still covers stays blocked (see 'blockc status')."
        case .removed(let name): return "Removed \(kind) '\(Output.clean(name))'."
        case .delayed(let d): return delayed(d)
        }
    }

    /// A window over blocks and schedules ("until 18:51 (15m left)"), and over a used-up daily
    /// limit an amount of use (M3: not a window; unused, it keeps until midnight). M1: what the
    /// name was taken as, when it names a limit; M5: what the grant cannot lift, and why.
    func granted(_ g: GrantReply) -> String {
        let start = instant(g.start), end = instant(g.end)
        let from = start.map { $0 > now ? " from \(time($0)) (after the delay)" : "" } ?? ""
        let by = g.grantedBy.map { " by \(g.grantedByUser.map(Output.clean) ?? person($0))" } ?? ""
        let head = "More time for \(Output.clean(g.selection))\(by)\(from)"
        let window = "\(end.map { until($0) } ?? ""); blocked again at its end if a reason still holds."
        let allowance = g.allowance ?? []
        var text: String
        if !allowance.isEmpty, let start, let end {
            let amount = DurationText.format(Int(end.timeIntervalSince(start).rounded()))
            let limits = allowance.map { "'\(Output.clean($0))'" }.joined(separator: ", ")
            let use = "\(amount) more use today under limit\(allowance.count == 1 ? "" : "s") \(limits); blocked again when it is used up."
            let others = g.activities.filter { !allowance.contains($0) }
            text = others.isEmpty ? "\(head): \(use)" : "\(head) \(window.dropLast()), and \(use)"
        } else {
            text = "\(head) \(window)"
        }
        if let named = naming(g) { text = "\(named) \(text)" }
        if let held = holding(g, asked: start.flatMap { s in end.map { Int($0.timeIntervalSince(s).rounded()) } }) { text += "\n" + held }
        return text
    }

    /// M1: a sentence when the name was taken as a limit, or names a limit and a selection.
    func naming(_ g: GrantReply) -> String? {
        let selection = Output.clean(g.selection)
        switch (g.named, g.also) {
        case (.known(.limit)?, let also):
            let limit = (g.allowance?.first).map(Output.clean) ?? selection
            let too = also == .known(.selection) ? " ('\(limit)' is also a selection, which is not blocked for you.)" : ""
            return "'\(limit)' is a limit: more time is more use of its allowance today.\(too)"
        case (.known(.hours)?, _):
            return "'\(selection)' are allowed hours: this is time at the screen during them."
        case (.known(.selection)?, .known(.limit)?):
            return "'\(selection)' is a selection and a limit: this is more time for the selection (blocked for you now)."
        case (.known(.selection)?, _), (.unknown?, _), (nil, _):
            return nil
        }
    }

    /// M5: what still blocks the selection after the grant, each with why and what to do
    /// ("reddit stays blocked by block 'focus' (locked: nobody can lift it) until 17:22").
    func holding(_ g: GrantReply, asked seconds: Int?) -> String? {
        guard let held = g.held, !held.isEmpty else { return nil }
        let selection = Output.clean(g.selection)
        let ask = seconds.map(DurationText.format) ?? "15m"
        let each = held.map { h in
            let other = Output.clean(h.selection)
            let on = other == selection ? "" : " on \(AllowOnly.display(other))"
            let why: String = if h.locked {
                "locked: nobody can lift it"
            } else {
                switch h.moreTime {
                case .known(.no): "MoreTime=no: it gives no more time"
                case .known(.approval): "'blockc more \(other) \(ask)' asks an administrator"
                case .known(.selfService): "'blockc more \(other) \(ask)' asks for it too"
                case .unknown(let word): "MoreTime=\(Output.clean(word))"
                }
            }
            let kind = Output.clean(h.kind.word)
            let until = instant(h.until).map { " until \(time($0))" } ?? " with no end in sight"
            return "\(kind) '\(Output.clean(h.activity))'\(on)\(until) (\(why))"
        }
        let list = each.count == 1 ? " " + each[0] : ":\n" + each.map { "  " + $0 }.joined(separator: "\n")
        switch g.lifts {
        case .known(.some)?: return "Part of \(selection) stays blocked by\(list)."
        case .known(.nothing)?, .known(.all)?, .unknown?, nil: return "It lifts nothing now: \(selection) stays blocked by\(list)."
        }
    }

    /// `stop`, `schedule remove` or `limit remove` of an activity with `Delay=` (M2).
    func delayed(_ d: DelayedReply) -> String {
        let name = Output.clean(d.name)
        let at = instant(d.at).map { self.at($0) } ?? Output.clean(d.at ?? "")
        return "The \(Output.clean(d.kind.word)) of '\(name)' takes effect \(at) (Delay=); 'blockc cancel \(name)' keeps it."
    }

    /// A table's header row, dim, so that a column of ids and times says what it is.
    static func columns(_ names: String...) -> [Cell] { names.map { Cell($0, .dim) } }

    public func requests(_ reply: RequestsReply) -> String {
        if reply.requests.isEmpty && reply.grants.isEmpty && reply.delayed.isEmpty { return "No requests, grants or delayed changes." }
        var lines: [String] = []
        if !reply.requests.isEmpty {
            lines.append(heading("Requests"))
            lines += table([Output.columns("ID", "SELECTION", "ASKED FOR", "BY", "REASON")] + reply.requests.map { r in
                let asked = r.seconds.map(DurationText.format) ?? "rest of the day"
                return [Cell(Output.clean(r.id), .bold), Cell(Output.clean(r.selection)), Cell(asked), Cell(person(user: r.user, uid: r.uid)),
                        Cell(Output.clean(r.reason ?? ""))]
            })
        }
        if !reply.grants.isEmpty {
            lines.append(heading("More time"))
            lines += table([Output.columns("ID", "SELECTION", "UNTIL", "FOR", "GIVEN")] + reply.grants.map { g in
                [Cell(Output.clean(g.id), .bold), Cell(Output.clean(g.selection)), Cell(until(g.end)), Cell(person(user: g.user, uid: g.uid)),
                 Cell(g.grantedBy.map { "granted by \(g.grantedByUser.map(Output.clean) ?? person($0))" } ?? "by policy")]
            })
        }
        if !reply.delayed.isEmpty {
            lines.append(heading("Waiting for Delay="))
            lines += table(reply.delayed.map { d in
                [Cell(Output.clean(d.name), .bold), Cell(Output.clean(d.kind.word)), Cell(instant(d.at).map { at($0) } ?? "")]
            })
        }
        return lines.joined(separator: "\n")
    }

    /// `status`: each loosening that waits for its `Delay=`, in words ("stop of 'work' takes
    /// effect at 16:40 (in 2m); 'blockc cancel work' to keep it"), then the pending requests
    /// and the grants, as `requests` shows them (M2, M3). Nothing when there are none.
    func moreTimeStatus(_ s: RequestsReply) -> [String] {
        let hasRest = !s.requests.isEmpty || !s.grants.isEmpty
        guard hasRest || !s.delayed.isEmpty else { return [] }
        var lines: [String] = []
        if !s.delayed.isEmpty {
            lines += ["", heading("Waiting for Delay=")]
            for d in s.delayed {
                let name = Output.clean(d.name)
                let what = switch d.kind {
                case .known(.stop): "stop"
                case .known(.scheduleRemove): "removal of schedule"
                case .known(.limitRemove): "removal of limit"
                case .unknown(let word): Output.clean(word)
                }
                let at = instant(d.at).map { self.at($0) } ?? Output.clean(d.at ?? "")
                lines.append("  \(what) of '\(name)' takes effect \(at); 'blockc cancel \(name)' to keep it")
            }
        }
        let rest = RequestsReply(requests: s.requests, grants: s.grants)
        if hasRest { lines += [""] + requests(rest).split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        return lines
    }
}
