/// A small, strict argv scanner shared by `blockd` and `blockc` (no outside packages):
/// `--flag`, `--option VALUE`, `--option=VALUE`, `--` ends options. Unknown options are usage
/// errors that name the option and point at `--help`.
public struct ArgumentScanner {
    public enum Token: Equatable {
        case option(String, value: String?)  // value only when written as --option=value
        case positional(String)
    }

    private var tokens: [String]
    private var index = 0
    private var optionsEnded = false
    let program: String

    public init(_ arguments: [String], program: String) {
        self.tokens = arguments
        self.program = program
    }

    public mutating func next() -> Token? {
        guard index < tokens.count else { return nil }
        let t = tokens[index]
        index += 1
        if !optionsEnded && t == "--" {
            optionsEnded = true
            return next()
        }
        if !optionsEnded && t.hasPrefix("-") && t.count > 1 {
            if t.hasPrefix("--"), let eq = t.firstIndex(of: "=") {
                return .option(String(t[..<eq]), value: String(t[t.index(after: eq)...]))
            }
            return .option(t, value: nil)
        }
        return .positional(t)
    }

    /// The value of an option: the `=value` part, or the next argument.
    public mutating func value(for option: String, inline: String?) throws(CoreError) -> String {
        if let inline { return inline }
        guard index < tokens.count else { throw usage("\(option) needs a value") }
        index += 1
        return tokens[index - 1]
    }

    /// The arguments not read yet, as typed: what may follow an option's value and belong to
    /// it (`--for 2 hours`, `--until tomorrow 07:00`).
    public var upcoming: [String] { Array(tokens[index...]) }

    /// Takes `count` of the upcoming arguments as read.
    public mutating func skip(_ count: Int) {
        index = min(index + count, tokens.count)
    }

    public func usage(_ message: String) -> CoreError {
        CoreError(.usage, "\(message); see '\(program) --help'")
    }
}
