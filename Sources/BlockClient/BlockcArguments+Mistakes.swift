import BlockCore

/// §6: blockc's own mistakes told with what it takes: an option matched against the command's
/// own options, a command by what people call it.
extension CommandParser {
    /// `'--minuts' is not an option of 'start'`, with the option meant when one of the
    /// command's is: the nearest in spelling, the word's usual meaning (`--time` is `--for`),
    /// or for a one-letter flag the command's shortest option of that letter (`-m` is
    /// `--minutes`); never an option the command does not take.
    func notAnOption(_ name: String) -> CoreError {
        let said = "'\(name)' is not an option of '\(verb)'"
        let see = command.map { "See 'blockc help \($0.cliWords ?? verb)'." } ?? "See 'blockc --help'."
        guard let near = meantOption(name) else { return CoreError(.usage, "\(said). \(see)") }
        return CoreError(.usage, "\(said); did you mean '\(near)'? \(see)")
    }

    /// What people type for an option, and the option it is.
    static let optionSynonyms: [String: String] = [
        "--time": "--for", "--duration": "--for", "--length": "--for", "--hours": "--for", "--mins": "--minutes", "--min": "--minutes",
        "--till": "--until", "--end": "--until", "--ends": "--until", "--at": "--until", "--weekdays": "--days", "--for-user": "--user",
        "--users": "--user", "--everyone": "--all-users", "--locked": "--lock", "--weekly": "--week", "--monthly": "--month",
        "--daily": "--day", "--date": "--day", "--from": "--to",
    ]

    func meantOption(_ name: String) -> String? {
        let own = command.map(\.blockcOptions) ?? BlockcInvocation.options
        guard !own.contains(name) else { return nil }
        if let synonym = CommandParser.optionSynonyms[name], own.contains(synonym) { return synonym }
        if name.count == 2, name.hasPrefix("-"), let letter = name.last {
            return own.filter { $0.hasPrefix("--\(letter)") }.min { ($0.count, $0) < ($1.count, $1) }
        }
        return Suggest.closest(to: name, amongUnordered: own)
    }

    /// The words name no command: a group without (or with a wrong) second word, or a typo.
    func unknown() -> CoreError {
        let subs = Command.subcommands(of: verb)
        if !subs.isEmpty {
            let choices = subs.dropLast().joined(separator: ", ") + " or " + subs.last!
            guard let sub = words.first else { return scanner.usage("\(verb) needs \(choices)") }
            return scanner.usage("unknown \(verb) command '\(sub)'; use \(choices)")
        }
        let hint = (CommandParser.commandSynonyms[verb.lowercased()] ?? Suggest.closest(to: verb, among: Command.cliGroups + ["help"]).map { "'\($0)'" })
            .map { "; did you mean \($0)?" } ?? ""
        return CoreError(.usage, "unknown command '\(verb)'\(hint.isEmpty ? "." : hint) See 'blockc --help'.")
    }

    /// What people call blockc's commands, and the commands they mean.
    static let commandSynonyms: [String: String] = [
        "block": "'start' (blockc start --for 30m SELECTION)", "unblock": "'stop' (blockc stop NAME)",
        "end": "'stop'", "remove": "'stop', 'schedule remove' or 'limit remove'", "rm": "'stop', 'schedule remove' or 'limit remove'",
        "list": "'status', 'schedule list' or 'limit list'", "ls": "'status', 'schedule list' or 'limit list'",
        "show": "'status' or 'selections show NAME'", "add": "'start', 'schedule add' or 'limit add'",
        "extend": "'start' (starting again extends a block)", "ask": "'more'", "grant": "'approve'", "refuse": "'deny'",
        "events": "'watch'", "log": "'watch' or 'report'", "schedules": "'schedule list'", "limits": "'limit list'",
    ]
}
