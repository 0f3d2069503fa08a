import FoundationEssentials

/// The more-time requests on the wire (M1, M2):
///
///     more {"selection":"games","seconds":300,"reason":"homework"}   (or "today":true)
///     requests
///     approve {"id":"m3","seconds":900}      (seconds optional: what was asked)
///     deny {"id":"m3","reason":"not tonight"}
///     cancel {"name":"work"}                 (a delayed loosening, or one's own request)
///
/// `start`, `schedule-add` and `limit-add` take an optional `moreTime` object:
/// `{"mode":"approval","delay":120,"perDay":1800,"requestTimeout":3600}`.
extension Request {
    public struct MoreArguments: Equatable, Sendable {
        public var selection: String
        /// Exactly one of the two: seconds from the daemon's receipt, or the rest of the day.
        public var seconds: Int?
        public var today: Bool
        public var reason: String?

        public init(selection: String, seconds: Int? = nil, today: Bool = false, reason: String? = nil) {
            (self.selection, self.seconds, self.today, self.reason) = (selection, seconds, today, reason)
        }
    }

    /// The longest reason kept with a request.
    public static let maxReasonBytes = 200

    public func validateMoreTime() throws(CoreError) {
        switch self {
        case .more(let m):
            try Names.validate(m.selection, what: "selection name")
            if let s = m.seconds, !(1...86_400).contains(s) {
                throw CoreError(.invalidDuration, "more: ask for 1s up to the end of the day, or --today")
            }
            try Request.checkReason(m.reason)
        case .approve(let id, let seconds):
            try Names.validate(id, what: "request id")
            if let s = seconds, !(1...86_400).contains(s) {
                throw CoreError(.invalidDuration, "approve: give 1s up to the end of the day")
            }
        case .deny(let id, let reason):
            try Names.validate(id, what: "request id")
            try Request.checkReason(reason)
        case .cancel(let name): try Names.validateReference(name, what: "name")
        default: break
        }
    }

    static func checkReason(_ reason: String?) throws(CoreError) {
        guard let reason else { return }
        guard reason.utf8.count <= maxReasonBytes, !reason.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw CoreError(.usage, "a reason is one line of at most \(maxReasonBytes) bytes")
        }
    }

    var moreTimeArguments: JSONObject {
        var o = JSONObject()
        switch self {
        case .more(let m):
            o["selection"] = .string(m.selection)
            if let s = m.seconds { o["seconds"] = .int(Int64(s)) }
            if m.today { o["today"] = .bool(true) }
            if let r = m.reason { o["reason"] = .string(r) }
        case .approve(let id, let seconds):
            o["id"] = .string(id)
            if let s = seconds { o["seconds"] = .int(Int64(s)) }
        case .deny(let id, let reason):
            o["id"] = .string(id)
            if let r = reason { o["reason"] = .string(r) }
        case .cancel(let name): o["name"] = .string(name)
        default: break
        }
        return o
    }
}

extension MoreTimePolicy {
    public var json: JSON {
        ["mode": .string(mode.rawValue), "delay": .int(Int64(delay)), "perDay": .int(Int64(perDay)),
         "requestTimeout": .int(Int64(requestTimeout))]
    }
}

extension Arguments {
    mutating func moreTimeRequest() throws(CoreError) -> Request {
        switch command {
        case .requests: return .requests
        case .cancel: return .cancel(name: try string("name"))
        case .approve:
            let id = try string("id")
            return .approve(id: id, seconds: try optional("seconds").map { v throws(CoreError) in try intValue("seconds", v) })
        case .deny: return .deny(id: try string("id"), reason: try optionalString("reason"))
        default:
            var m = Request.MoreArguments(selection: try string("selection"))
            if let v = optional("seconds") { m.seconds = try intValue("seconds", v) }
            if let v = optional("today") {
                guard case .bool(let b) = v else { throw wrongType("today", "true or false") }
                m.today = b
            }
            guard (m.seconds == nil) == m.today else {
                throw CoreError(.usage, "more: give exactly one of 'seconds' and 'today'")
            }
            m.reason = try optionalString("reason")
            return .more(m)
        }
    }

    mutating func optionalString(_ key: String) throws(CoreError) -> String? {
        guard let v = optional(key) else { return nil }
        guard case .string(let s) = v else { throw wrongType(key, "a string") }
        return s
    }

    /// The optional `moreTime` object of `start`, `schedule-add` and `limit-add`.
    mutating func moreTimePolicy() throws(CoreError) -> MoreTimePolicy? {
        guard let v = optional("moreTime") else { return nil }
        guard case .object(let o) = v else { throw wrongType("moreTime", "an object") }
        var p = MoreTimePolicy.standard
        for (key, value) in o {
            switch key {
            case "mode":
                guard let m = value.string.flatMap(MoreTimeMode.init(rawValue:)) else { throw wrongType("moreTime.mode", "no, self or approval") }
                p.mode = m
            case "delay", "perDay", "requestTimeout":
                guard let n = value.int, (0...86_400).contains(n) else { throw wrongType("moreTime.\(key)", "seconds from 0 to 86400") }
                switch key {
                case "delay": p.delay = n
                case "perDay": p.perDay = n
                default: p.requestTimeout = max(n, 1)
                }
            default: throw CoreError(.usage, "\(command): unknown argument 'moreTime.\(key)'")
            }
        }
        return p
    }
}
