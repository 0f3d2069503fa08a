import BlockCore

extension CommandParser {
    /// `more SELECTION (DURATION | --today) [--reason TEXT]`, `requests`, `approve ID [DURATION]`,
    /// `deny ID [--reason TEXT]`, `cancel NAME` (M1, M2).
    mutating func moreTimeRequest(_ command: Command) throws(CoreError) -> Request {
        let request: Request
        switch command {
        case .requests:
            try none()
            request = .requests
        case .cancel: request = .cancel(name: try single("NAME"))
        case .approve:
            guard (1...2).contains(words.count) else { throw scanner.usage("approve needs ID and optionally a DURATION") }
            let id = words.removeFirst()
            let seconds = try words.first.map { text throws(CoreError) in try DurationText.parse(text) }
            words = []
            request = .approve(id: id, seconds: seconds)
        case .deny:
            let reason = value("--reason")
            request = .deny(id: try single("ID"), reason: reason)
        default:
            let reason = value("--reason"), today = take("--today")
            guard !words.isEmpty else { throw scanner.usage("more needs a SELECTION and a DURATION (or --today)") }
            let selection = words.removeFirst()
            guard today != (words.count == 1) else {
                throw scanner.usage(today ? "give a DURATION or --today, not both" : "more needs a DURATION such as 15m, or --today")
            }
            let seconds = try words.first.map { text throws(CoreError) in try DurationText.parse(text) }
            words = []
            request = .more(Request.MoreArguments(selection: selection, seconds: seconds, today: today, reason: reason))
        }
        try request.validateMoreTime()
        return request
    }

    /// `--more-time no|self|approval`, `--delay DURATION`, `--more-time-per-day DURATION` (M1,
    /// M2), checked as the config keys `MoreTime=`, `Delay=`, `MoreTimePerDay=` are.
    mutating func moreTimeFlags() throws(CoreError) {
        var policy = MoreTimePolicy.standard
        var given = false
        for (flag, key) in [("--more-time", "MoreTime"), ("--delay", "Delay"), ("--more-time-per-day", "MoreTimePerDay")] {
            guard let text = value(flag) else { continue }
            given = true
            do throws(CoreError) { _ = try policy.set(key, text) } catch {
                throw CoreError(.usage, "\(flag): \(error.message)")
            }
        }
        if given { moreTime = policy }
    }
}

extension Request {
    /// The request with the command line's more-time policy, for the commands that carry one.
    func with(moreTime policy: MoreTimePolicy?) -> Request {
        guard let policy else { return self }
        switch self {
        case .start(var a):
            a.moreTime = policy
            return .start(a)
        case .scheduleAdd(var s):
            s.moreTime = policy
            return .scheduleAdd(s)
        case .limitAdd(var l):
            l.moreTime = policy
            return .limitAdd(l)
        default: return self
        }
    }
}
