/// R1: the session agent's report of what has the focus, on the wire:
///
///     foreground {"app":"/usr/lib/firefox-esr/firefox-esr"}   (the focused window's executable)
///     foreground {}                                           (nothing of the caller's has it)
///
/// It only ever speaks for the caller (the daemon takes the uid from SO_PEERCRED), so anyone
/// who can connect may send it; the daemon counts it only for an app it follows that runs
/// for that uid.
extension Request {
    /// The longest executable path accepted. /proc/PID/exe is canonical, and no executable a
    /// desktop runs has a path near this long; the daemon keeps one per user in memory.
    public static let maxAppPathBytes = 1024

    static func validateForeground(_ app: String?) throws(CoreError) {
        guard let app else { return }
        guard app.hasPrefix("/") else {
            throw CoreError(.usage, "foreground: 'app' must be an absolute path to an executable (/proc/PID/exe), not '\(Request.shown(app))'")
        }
        guard app.utf8.count <= maxAppPathBytes else {
            throw CoreError(.usage, "foreground: 'app' is a path of at most \(maxAppPathBytes) bytes")
        }
        guard !app.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw CoreError(.usage, "foreground: 'app' must not contain control characters")
        }
    }

    /// Some of a client's text, safe to put in a message: at most 40 characters, control
    /// characters as `?`.
    static func shown(_ text: String) -> String {
        String(text.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7f ? "?" : Character($0) })
    }
}
