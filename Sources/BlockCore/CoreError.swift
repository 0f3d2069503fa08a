/// The one error type of BlockCore (one error type per layer): a stable code that scripts and the wire
/// protocol use, and a sentence for people that says what happened and what to do next.
public struct CoreError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Stable kebab-case codes (§8). They are an API: add codes, never rename them.
public enum ErrorCode: String, Sendable, CaseIterable, Codable {
    case usage
    case unknownCommand = "unknown-command"
    case unknownSelection = "unknown-selection"
    case activityLimit = "activity-limit"
    case permissionDenied = "permission-denied"
    case locked
    case notFound = "not-found"
    case exists
    case invalidTime = "invalid-time"
    case invalidDuration = "invalid-duration"
    case invalidDays = "invalid-days"
    case invalidName = "invalid-name"
    case invalidDomain = "invalid-domain"
    case invalidConfig = "invalid-config"
    case lineTooLong = "line-too-long"
    case busy
    /// "OK means on disk" (§7): the change could not be saved, so it was not made.
    case notSaved = "not-saved"
    /// An ExecOnBlock=/ExecOnUnblock= hook failed or timed out (E3), in the failure list.
    case hookFailed = "hook-failed"
    /// blockd's hosts lines were edited away, or a line giving a blocked name an address was
    /// added, while a block was active; repaired (E1, E6), in the failure list.
    case tamper
    /// A well-formed request for something this version of blockd does not do yet.
    case unsupported
    case `internal`
}
