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

    /// M2: an administrator's answer names a request; approve's length, if given, is 1s up to
    /// a day.
    public static func validateApproval(id: String, seconds: Int?) throws(CoreError) {
        try Names.validate(id, what: "request id")
        if let s = seconds, !(1...86_400).contains(s) {
            throw CoreError(.invalidDuration, "approve: give 1s up to the end of the day")
        }
    }

    public static func validateDenial(id: String, reason: String?) throws(CoreError) {
        try Names.validate(id, what: "request id")
        try Request.checkReason(reason)
    }

    static func checkReason(_ reason: String?) throws(CoreError) {
        guard let reason else { return }
        guard reason.utf8.count <= maxReasonBytes, !reason.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw CoreError(.usage, "a reason is one line of at most \(maxReasonBytes) bytes")
        }
    }

    static func approvalArguments(id: String, seconds: Int?) -> JSONObject {
        var o: JSONObject = ["id": .string(id)]
        if let s = seconds { o["seconds"] = .int(Int64(s)) }
        return o
    }

    static func denialArguments(id: String, reason: String?) -> JSONObject {
        var o: JSONObject = ["id": .string(id)]
        if let r = reason { o["reason"] = .string(r) }
        return o
    }
}

extension Request.MoreArguments {
    /// M1: a selection name, 1s up to the end of the day (or `today`), and a short reason.
    public func validate() throws(CoreError) {
        try Names.validate(selection, what: "selection name")
        if let s = seconds, !(1...86_400).contains(s) {
            throw CoreError(.invalidDuration, "more: ask for 1s up to the end of the day, or --today")
        }
        try Request.checkReason(reason)
    }

    var arguments: JSONObject {
        var o: JSONObject = ["selection": .string(selection)]
        if let s = seconds { o["seconds"] = .int(Int64(s)) }
        if today { o["today"] = .bool(true) }
        if let r = reason { o["reason"] = .string(r) }
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
    mutating func more() throws(CoreError) -> Request.MoreArguments {
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
        return m
    }

    mutating func approval() throws(CoreError) -> Request {
        let id = try string("id")
        return .approve(id: id, seconds: try optional("seconds").map { v throws(CoreError) in try intValue("seconds", v) })
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
