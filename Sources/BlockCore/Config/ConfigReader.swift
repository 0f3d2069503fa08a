// What every configuration file's reader shares (§7): the kinds of files, the problems found
// in one, and reading an entry's value (numbers, durations, booleans, paths) with the line it
// came from. Config.swift reads `[Daemon]` with it; ConfigSelection, ConfigSchedule, ConfigLimit
// and ConfigUsers the other files.

/// Readers for the files under `selections.d/` and `schedules.d/` (§1, §7). They take
/// file contents, never paths to open: BlockCore does no I/O.
public enum ConfigFiles {
    /// One kind of file blockd reads: its one section, where such files go, and its keys.
    public struct Kind: Sendable {
        public var section: String
        /// Where it goes, for "X= belongs in ...": `a schedule file (schedules.d/*.conf, [Schedule])`.
        public var home: String
        public var keys: [String]
    }

    /// Every kind, in the order blockd reads them; a key or a section in the wrong kind of file
    /// is told where it belongs (§7).
    public static let kinds: [Kind] = [
        Kind(section: DaemonConfig.section, home: "blockd.conf ([Daemon])", keys: DaemonConfig.keys),
        Kind(section: selectionSection, home: "a selection file (selections.d/*.conf, [Selection])", keys: selectionKeys + textKeys),
        Kind(section: scheduleSection, home: "a schedule file (schedules.d/*.conf, [Schedule])", keys: scheduleKeys),
        Kind(section: limitSection, home: "a limit file (limits.d/*.conf, [Limit])", keys: limitKeys),
        Kind(section: usersSection, home: "a users file (users.d/*.conf, [Users])", keys: usersKeys),
    ]
}

/// A file's problems, gathered as it is read so that one run says them all (§7): each entry
/// is checked on its own, and a key whose value was refused is remembered, so that the file
/// is not also said to lack it.
struct ProblemList {
    var errors: [CoreError] = []
    var refused: Set<String> = []

    mutating func check(_ e: INIEntry, _ body: () throws(CoreError) -> Void) {
        do throws(CoreError) { try body() } catch {
            errors.append(error)
            refused.insert(e.key)
        }
    }

    /// The problems as `ConfigProblem`s of `file`, by line.
    func problems(file: String) -> [ConfigProblem] {
        errors.map { ConfigProblem($0, file: file) }.inFileOrder([file])
    }
}

/// Error wording and value checks shared by the config readers, so every message has the
/// same `file:line: ...` shape and says what is accepted.
public struct ConfigReader {
    let file: String
    /// How the file is named in messages: "blockd.conf", "a selection file".
    let what: String

    func fail(_ line: Int, _ why: String) -> CoreError {
        CoreError(.invalidConfig, "\(file):\(line): \(why)")
    }

    func fail(_ e: INIEntry, _ why: String) -> CoreError { fail(e.line, why) }

    /// The entries of the one section this kind of file may hold (repeated headers merge);
    /// every other section is a problem, each said once with its line, and its entries are
    /// not read (§7). A near miss of the section's name (`[Selections]`, `[selection]`) is read
    /// as the section all the same, so its keys are checked in the same run.
    /// `misplaced` is true when the file holds another kind's section and none of its own:
    /// then the file's missing keys are not worth saying, its place is.
    func entries(of doc: INIDocument, section: String, problems: inout [CoreError]) -> (entries: [INIEntry], misplaced: Bool) {
        var entries: [INIEntry] = []
        var own = false, elsewhere = false
        for s in doc.sections {
            if s.name == section {
                own = true
                entries += s.entries
                continue
            }
            if Suggestion.nearest(to: s.name, among: [section]) != nil {
                own = true
                entries += s.entries
                let hint = s.name.lowercased() == section.lowercased() ? "section names are case-sensitive: write [\(section)]" : "did you mean [\(section)]?"
                problems.append(fail(s.line, "unknown section [\(s.name)]; \(hint)"))
                continue
            }
            let others = ConfigFiles.kinds.filter { $0.section != section }
            if let near = Suggestion.nearest(to: s.name, among: others.map(\.section)), let kind = others.first(where: { $0.section == near }) {
                elsewhere = true
                let meant = near == s.name ? "[\(near)] belongs in \(kind.home)" : "unknown section [\(s.name)]; did you mean [\(near)]? That section belongs in \(kind.home)"
                problems.append(fail(s.line, "\(meant); \(what) may contain only [\(section)]: move it to a file of its own there"))
                continue
            }
            problems.append(fail(s.line, "unknown section [\(s.name)]; \(what) may contain only [\(section)]"))
        }
        return (entries, elsewhere && !own)
    }

    /// An unknown key, with what was probably meant (§7): a key of this section in another
    /// case (keys are case-sensitive, as systemd's) or a letter or two away (`Apss=`); else a
    /// key of another kind of file, with where it belongs (`Window=` in a selection file); else
    /// the list of the valid keys.
    func unknownKey(_ e: INIEntry, section: String, valid: [String]) -> CoreError {
        // A text key's language suffix is kept: `ShieldBdy[ja]=` is `ShieldBody[ja]=`.
        let open = e.key.firstIndex(of: "[") ?? e.key.endIndex
        let (base, suffix) = (String(e.key[..<open]), String(e.key[open...]))
        let unknown = "unknown key \(e.key)= in [\(section)]"
        if let near = Suggestion.nearest(to: base, among: valid) {
            return near.lowercased() == base.lowercased()
                ? fail(e, "\(unknown); keys are case-sensitive: write \(near)\(suffix)=")
                : fail(e, "\(unknown); did you mean \(near)\(suffix)=?")
        }
        let others = ConfigFiles.kinds.filter { $0.section != section }
        if let near = Suggestion.nearest(to: base, among: others.flatMap(\.keys)) {
            let homes = others.filter { $0.keys.contains(near) }.map(\.home)
            let there = homes.count == 1 ? homes[0] : homes.dropLast().joined(separator: ", ") + " or " + homes[homes.count - 1]
            return near == base
                ? fail(e, "\(e.key)= belongs in \(there), not in [\(section)]; move it there")
                : fail(e, "\(unknown); did you mean \(near)\(suffix)=? It belongs in \(there), not here")
        }
        let list = valid.map { "\($0)=" }.joined(separator: ", ")
        return fail(e, "\(unknown); valid keys are \(list)")
    }

    /// `value` was none of `choices`: a near one, as "; did you mean X?", else nothing.
    static func didYouMean(_ value: String, among choices: [String]) -> String {
        Suggestion.nearest(to: value, among: choices).map { "; did you mean \($0)?" } ?? ""
    }

    /// Runs a validator from elsewhere in BlockCore (or the integrator) and puts the entry's
    /// place and key in front of its message, so the user knows which line to fix.
    func checked<T>(_ e: INIEntry, _ body: () throws(CoreError) -> T) throws(CoreError) -> T {
        do throws(CoreError) {
            return try body()
        } catch {
            throw fail(e, "\(e.key)=: \(error.message)")
        }
    }

    func words(_ e: INIEntry) throws(CoreError) -> [String] {
        try checked(e) { () throws(CoreError) in try INI.words(e.value) }
    }

    func integer(_ e: INIEntry, in range: ClosedRange<Int>) throws(CoreError) -> Int {
        guard e.value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), e.value.utf8.count <= 12,
              let n = Int(e.value), range.contains(n) else {
            throw fail(e, "\(e.key)= must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(e.value)'")
        }
        return n
    }

    func duration(_ e: INIEntry, in range: ClosedRange<Int>) throws(CoreError) -> Int {
        let accepted = "a duration from \(DurationText.format(range.lowerBound)) to \(DurationText.format(range.upperBound)), e.g. 3s"
        let seconds: Int
        do throws(CoreError) {
            seconds = try DurationText.parse(e.value)
        } catch {
            throw fail(e, "\(e.key)= must be \(accepted): \(error.message)")
        }
        guard range.contains(seconds) else {
            throw fail(e, "\(e.key)= must be \(accepted), not '\(e.value)'")
        }
        return seconds
    }

    /// systemd's booleans (systemd.syntax(7)).
    func boolean(_ e: INIEntry) throws(CoreError) -> Bool {
        if let b = ConfigReader.boolean(e.value) { return b }
        let hint = ConfigReader.didYouMean(e.value, among: ["yes", "no", "true", "false", "on", "off"])
        throw fail(e, "\(e.key)= must be yes or no (also true/false, on/off, 1/0), not '\(e.value)'\(hint)")
    }

    public static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "on", "1": true
        case "no", "false", "off", "0": false
        default: nil
        }
    }

    func directory(_ e: INIEntry) throws(CoreError) -> String {
        let p = e.value
        guard p.first == "/", !p.hasControlCharacters else {
            throw fail(e, "\(e.key)= must be an absolute directory, such as / or /srv/sandbox, not '\(p)'")
        }
        return p
    }

    /// A directory blockd fills and empties itself (U3's tables): absolute, and not `/`.
    func ownDirectory(_ e: INIEntry) throws(CoreError) -> String {
        var p = e.value
        while p.count > 1 && p.last == "/" { p.removeLast() }
        guard p.first == "/", p.count > 1, !p.hasControlCharacters else {
            throw fail(e, "\(e.key)= must be an absolute directory other than /, such as /run/blockd/users, not '\(e.value)'")
        }
        return p
    }

    func absolutePath(_ e: INIEntry) throws(CoreError) -> String {
        let p = e.value
        guard p.first == "/", p.count > 1, p.last != "/", !p.hasControlCharacters else {
            throw fail(e, "\(e.key)= must be an absolute path to a file, such as /etc/hosts, not '\(p)'")
        }
        return p
    }
}

extension String {
    /// Control characters would let a value break a line of the hosts file, a journal field
    /// or the protocol; no config value needs them.
    var hasControlCharacters: Bool {
        unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }
}
