/// One problem a configuration file has (§7, F2): where it is, what is wrong and what to do.
/// An error keeps the configuration from loading (a reload keeps the old one); a warning is
/// said and the configuration loads all the same (an app that is not installed yet).
public struct ConfigProblem: Equatable, Sendable, CustomStringConvertible {
    public enum Severity: String, Sendable { case error, warning }

    public var severity: Severity
    /// The file, as read; empty for a problem of no one file.
    public var file: String
    /// The line it is written on, where there is one.
    public var line: Int?
    /// What is wrong; what to do.
    public var what: String

    public init(_ severity: Severity = .error, file: String, line: Int?, _ what: String) {
        (self.severity, self.file, self.line, self.what) = (severity, file, line, what)
    }

    /// An error a reader threw as `FILE:LINE: what` (or `FILE: what`): its place taken apart,
    /// so problems sort by file and line. With no `file` (a problem found while listing the
    /// directories, `PATH: cannot be read: ...`), the path before the first `: ` is the file.
    public init(_ error: CoreError, file: String = "") {
        let message = error.message
        var file = file
        if file.isEmpty, message.hasPrefix("/"),
           let colon = message.indices.first(where: { message[$0] == ":" && message[message.index(after: $0)...].hasPrefix(" ") }) {
            file = String(message[..<colon])
        }
        guard !file.isEmpty, message.hasPrefix(file + ":") else {
            self.init(.error, file: "", line: nil, message)
            return
        }
        var rest = message.dropFirst(file.count + 1)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        var line: Int?
        if !digits.isEmpty, rest.dropFirst(digits.count).hasPrefix(":") {
            line = Int(digits)
            rest = rest.dropFirst(digits.count + 1)
        }
        self.init(.error, file: file, line: line, String(rest.drop { $0 == " " }))
    }

    /// `FILE:LINE: what`, a warning's with `warning: ` before what: the line `blockd
    /// --check-config` prints, in the form compilers use, so an editor can jump to it.
    public var text: String {
        let place = file.isEmpty ? "" : file + (line.map { ":\($0)" } ?? "") + ": "
        return place + (severity == .warning ? "warning: " : "") + what
    }

    /// The same as `text`, so tests and callers that read `message` off a `CoreError` read it
    /// the same way here.
    public var message: String { text }
    public var description: String { text }

    /// An error as the daemon's load throws it (`invalid-config`).
    public var error: CoreError { CoreError(.invalidConfig, text) }
}

extension [ConfigProblem] {
    /// In the order the files are read (`files`; a problem of a file not listed comes first, as
    /// one of the directory itself), then by line; problems of one line keep their order.
    public func inFileOrder(_ files: [String]) -> [ConfigProblem] {
        var rank: [String: Int] = [:]
        for (i, f) in files.enumerated() where rank[f] == nil { rank[f] = i }
        return enumerated().sorted { a, b in
            let (x, y) = (a.element, b.element)
            let (fx, fy) = (rank[x.file] ?? -1, rank[y.file] ?? -1)
            if fx != fy { return fx < fy }
            if fx == -1, x.file != y.file { return a.offset < b.offset }
            if (x.line ?? 0) != (y.line ?? 0) { return (x.line ?? 0) < (y.line ?? 0) }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// What the daemon's load and reload refuse with (§7): the first error, and how many
    /// more there are; nil when there is none (warnings alone load).
    public var loadError: CoreError? {
        let errors = self.errors
        guard let first = errors.first else { return nil }
        let more = errors.count - 1
        guard more > 0 else { return first.error }
        return CoreError(.invalidConfig, first.text + " (and \(more) more error\(more == 1 ? "" : "s"); 'blockd --check-config' lists every one)")
    }

    public var errors: [ConfigProblem] { filter { $0.severity == .error } }
    public var warnings: [ConfigProblem] { filter { $0.severity == .warning } }

    /// The summary line of `--check-config`: "3 problems in 2 files" when all are errors,
    /// "3 problems in 2 files (2 errors, 1 warning)" when some are warnings, "1 warning in 1
    /// file" when all are.
    public var summary: String {
        func n(_ k: Int, _ word: String) -> String { "\(k) \(word)\(k == 1 ? "" : "s")" }
        let (e, w) = (errors.count, warnings.count)
        let files = n(Set(map(\.file)).count, "file")
        if e == 0 { return "\(n(w, "warning")) in \(files)" }
        return "\(n(count, "problem")) in \(files)" + (w > 0 ? " (\(n(e, "error")), \(n(w, "warning")))" : "")
    }
}
