import BlockCore

/// `--json` output (blockc(1) JSON OUTPUT): these shapes are an API for scripts, so each
/// command prints exactly what the page documents, whatever the daemon's answer wraps it in.
extension BlockcRunner {
    /// The document `--json` prints for a command, or nil when the command was not given
    /// `--json`. `status` and `start` print the daemon's object; the listings print their
    /// arrays; `selections show` prints the one selection object.
    static func jsonDocument(_ command: BlockcCommand, _ o: JSONObject) -> JSON? {
        switch command {
        case .start(_, _, _, _, json: true), .status(json: true, _, _): .object(o)
        case .scheduleList(json: true): o["schedules"] ?? []
        case .selections(json: true): o["selections"] ?? []
        case .selectionShow(_, json: true): o["selection"] ?? .object(o)
        case .failures(json: true, clear: false): o["failures"] ?? []
        case .failures(json: true, clear: true): .object(o)
        case .stats(json: true): o["shieldHits"] ?? []
        case .limitList(json: true): o["limits"] ?? []
        case .moreTime(_, json: true): .object(o)
        case .report(_, let options) where options.format == .json: .object(o)
        default: nil
        }
    }

    /// Indented for a person at a terminal; one line into a pipe or file, so that line-based
    /// tools see one document per line.
    func jsonText(_ document: JSON) -> String {
        isTerminal ? document.prettyPrinted() : document.serialized()
    }
}
