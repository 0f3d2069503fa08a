/// One line from the daemon: `OK {json}`, `ERR <code> <message>` or `EVENT {json}` (§8).
public enum Response: Equatable, Sendable {
    case ok(JSONObject)
    case error(CoreError)
    case event(JSONObject)

    /// The line without its LF. Messages are folded onto one line and bounded, so that no
    /// client-supplied text can forge a second response line.
    public var line: String {
        switch self {
        case .ok(let o): "OK \(JSON.object(o).serialized())"
        case .event(let o): "EVENT \(JSON.object(o).serialized())"
        case .error(let e): "ERR \(e.code.rawValue) \(Response.oneLine(e.message))"
        }
    }

    static func oneLine(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(1024) {
            out.unicodeScalars.append(scalar.value < 0x20 || scalar.value == 0x7f ? " " : scalar)
        }
        return out
    }

    /// Parses a line from the daemon (clients). An unknown error code is kept as `internal`
    /// with the code in the message, so newer daemons never break older clients.
    public static func parse(_ line: String) throws(CoreError) -> Response {
        var text = Substring(line)
        if text.last == "\r" { text = text.dropLast() }
        func object(_ body: Substring) throws(CoreError) -> JSONObject {
            guard case .object(let o) = try JSON.parse(String(body)) else {
                throw CoreError(.internal, "the daemon sent a response that is not a JSON object")
            }
            return o
        }
        if text == "OK" { return .ok(JSONObject()) }
        if text.hasPrefix("OK ") { return .ok(try object(text.dropFirst(3))) }
        if text.hasPrefix("EVENT ") { return .event(try object(text.dropFirst(6))) }
        if text.hasPrefix("ERR ") {
            let rest = text.dropFirst(4)
            let code = rest.prefix { $0 != " " }
            let message = rest.dropFirst(code.count).drop { $0 == " " }
            if let known = ErrorCode(rawValue: String(code)) { return .error(CoreError(known, String(message))) }
            return .error(CoreError(.internal, "\(code): \(message)"))
        }
        throw CoreError(.internal, "the daemon sent a line this client does not understand: \(oneLine(String(text.prefix(80))))")
    }
}
