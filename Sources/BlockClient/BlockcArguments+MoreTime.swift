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
}
