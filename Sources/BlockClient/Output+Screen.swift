import BlockCore

/// `screen`: whether a person may be at the screen now, in a sentence.
extension Output {
    public func screen(_ r: ScreenReply) -> String {
        let who = Output.clean(r.user)
        guard r.held, let activity = r.activity.map(Output.clean) else { return "\(who) may use the computer now." }
        let what = r.action.map { "; \(Output.sessionAction($0))" } ?? ""
        if r.kind == Activity.Kind.limit.rawValue {
            return "\(who)'s screen time is used up for today: limit '\(activity)' keeps \(who) off the screen \(until(r.until))\(what)."
        }
        return "Allowed hours '\(activity)' keep \(who) off the screen \(until(r.until))\(what)."
    }
}
