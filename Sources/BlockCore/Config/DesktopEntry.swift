/// W2: what an installed `.desktop` file launches (freedesktop Desktop Entry spec 1.5), for the
/// app shield's allow-only part: during a window, the programs of desktop applications are
/// denied but the allowed ones. Pure: the daemon reads the files and resolves the programs.
public struct DesktopEntry: Equatable, Sendable {
    /// `Name=` (the unlocalized one), for shield hits.
    public var name: String?
    public var type: String?
    public var hidden = false, noDisplay = false, terminal = false
    /// `Exec=` split into arguments, field codes dropped; nil when missing or malformed.
    public var exec: [String]?
    public var tryExec: String?

    /// Files larger than this are not desktop files anyone wrote by hand: ignored.
    public static let maxBytes = 64 * 1024

    /// The `[Desktop Entry]` group of `text`; nil when there is none. Other groups (`[Desktop
    /// Action …]`), localized keys, comments and lines that do not parse are ignored; the first
    /// of a repeated key counts.
    public static func parse(_ text: String) -> DesktopEntry? {
        var inGroup = false, seenGroup = false
        var values: [String: String] = [:]
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inGroup = line.trimmingSuffix() == "[Desktop Entry]"
                seenGroup = seenGroup || inGroup
                continue
            }
            guard inGroup, let eq = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<eq]).trimmingSuffix()
            guard !key.isEmpty, !key.contains("["), values[key] == nil else { continue }
            values[key] = String(line[line.index(after: eq)...].drop { $0 == " " || $0 == "\t" })
        }
        guard seenGroup else { return nil }
        var entry = DesktopEntry()
        entry.name = values["Name"].map(unescape)
        entry.type = values["Type"]
        entry.hidden = values["Hidden"] == "true"
        entry.noDisplay = values["NoDisplay"] == "true"
        entry.terminal = values["Terminal"] == "true"
        entry.exec = values["Exec"].flatMap { tokenize(unescape($0)) }
        entry.tryExec = values["TryExec"].map(unescape).flatMap { $0.isEmpty ? nil : $0 }
        return entry
    }

    /// A desktop application a window denies: `Type=Application`, shown in menus (not
    /// `Hidden`, not `NoDisplay`: helpers, portals, settings daemons), not run in a terminal
    /// (command-line tools), with an `Exec=`.
    public var isDesktopApplication: Bool {
        type == "Application" && !hidden && !noDisplay && !terminal && exec?.isEmpty == false
    }

    /// The programs this entry starts: the `Exec=` program (through `env` and `flatpak run`)
    /// and the `TryExec=` one. Never-targets stay in; the caller takes them out by inode.
    public var launches: [DesktopLaunch] {
        var out: [DesktopLaunch] = []
        if let exec, let launch = DesktopLaunch.of(exec) { out.append(launch) }
        if let tryExec, !out.contains(.program(tryExec)) { out.append(.program(tryExec)) }
        return out
    }

    /// The string-value escapes of the spec (`\s \n \t \r \\`); others are kept as written.
    static func unescape(_ value: String) -> String {
        var out = "", escaped = false
        for c in value {
            if escaped {
                switch c {
                case "s": out.append(" ")
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "r": out.append("\r")
                case "\\": out.append("\\")
                default: out.append("\\"); out.append(c)
                }
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else {
                out.append(c)
            }
        }
        if escaped { out.append("\\") }
        return out
    }

    /// `Exec=` (already unescaped) split as the spec says: blanks separate arguments, `"…"`
    /// quotes (inside, `\` escapes `"`, `` ` ``, `$` and `\`), `%%` is `%`, field codes (`%f %F %u
    /// %U %i %c %k`, the deprecated ones, and unknown ones) go, and an argument that was only a
    /// field code with them. Nil for an unterminated quote or an empty command.
    public static func tokenize(_ exec: String) -> [String]? {
        var args: [String] = [], current = "", inArg = false, quoted = false
        var chars = Array(exec)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" { quoted = false; continue }
                if c == "\\", let next = chars.first, "\"`$\\".contains(next) { current.append(chars.removeFirst()); continue }
                current.append(c)
                continue
            }
            switch c {
            case " ", "\t", "\n":
                if inArg { args.append(current) }
                (current, inArg) = ("", false)
            case "\"":
                (quoted, inArg) = (true, true)
            case "%":
                guard let code = chars.popFirst() else { continue }
                // Field codes (and codes the spec does not define) go; `%%` is a `%`.
                if code == "%" { current.append("%"); inArg = true }
            default:
                current.append(c)
                inArg = true
            }
        }
        if quoted { return nil }
        if inArg { args.append(current) }
        return args.isEmpty ? nil : args
    }
}

/// What one entry starts, before the daemon resolves it to an executable file.
public enum DesktopLaunch: Hashable, Sendable {
    /// A bare name (looked up in PATH) or an absolute path.
    case program(String)
    /// `flatpak run [options] APP`: the app's `--command=`, else its metadata `command=`.
    case flatpak(app: String, command: String?)

    /// The launch of an `Exec=` command line: `env VAR=x prog` is `prog`; `flatpak run … APP`
    /// is the flatpak app. Nil when there is nothing to launch.
    public static func of(_ args: [String]) -> DesktopLaunch? {
        var rest = args[...]
        while let first = rest.first, basename(first) == "env" {
            rest = rest.dropFirst()
            while let arg = rest.first, arg.contains("=") && !arg.hasPrefix("/") || arg.hasPrefix("-") {
                rest = rest.dropFirst()
                if arg == "-u" || arg == "--unset" { rest = rest.dropFirst() }
                if arg == "--" { break }
            }
        }
        guard let program = rest.first, !program.isEmpty else { return nil }
        if basename(program) == "flatpak", rest.dropFirst().first == "run" {
            return flatpakRun(rest.dropFirst(2)) ?? .program(program)
        }
        return .program(program)
    }

    /// Options of `flatpak run` that take the next argument when written without `=`.
    static let flatpakValueOptions: Set<String> = ["--command", "--branch", "--arch", "--runtime", "--runtime-version", "--commit", "--runtime-commit", "--cwd"]

    static func flatpakRun(_ args: ArraySlice<String>) -> DesktopLaunch? {
        var rest = args, command: String?
        while let arg = rest.popFirst() {
            if arg.hasPrefix("--command=") { command = String(arg.dropFirst("--command=".count)); continue }
            if flatpakValueOptions.contains(arg) {
                let value = rest.popFirst()
                if arg == "--command" { command = value }
                continue
            }
            if arg.hasPrefix("-") { continue }
            guard isFlatpakID(arg) else { return nil }
            return .flatpak(app: arg, command: command.flatMap { $0.isEmpty ? nil : $0 })
        }
        return nil
    }

    /// A flatpak application ID: dot-separated names of letters, digits, `_` and `-`; nothing
    /// that could step out of a directory.
    public static func isFlatpakID(_ id: String) -> Bool {
        let parts = id.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && id.utf8.count <= 255 && parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        }
    }

    /// A flatpak app's `[Application] command=` from its `metadata` file.
    public static func flatpakCommand(metadata text: String) -> String? {
        var inGroup = false
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") { inGroup = line.trimmingSuffix() == "[Application]"; continue }
            guard inGroup, line.hasPrefix("command=") else { continue }
            let command = String(line.dropFirst("command=".count)).trimmingSuffix()
            return command.isEmpty ? nil : command
        }
        return nil
    }

    /// Where a flatpak app's command lives under the app's `files` directory: `bin/NAME` for a
    /// bare name, the rest of `/app/…`; nil for anything that could leave the directory.
    public static func flatpakFile(command: String) -> String? {
        let relative: String
        if command.hasPrefix("/app/") { relative = String(command.dropFirst("/app/".count)) } else if !command.contains("/") { relative = "bin/" + command } else { return nil }
        let parts = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }), !relative.contains("\0") else { return nil }
        return relative
    }

    /// Programs never denied, whatever a desktop file says (compared by file name and, where
    /// PATH finds them, by inode):
    /// - shells and interpreters: the session's own scripts run through them, and an app's
    ///   `Exec=python3 app.py` could only be denied by denying every script;
    /// - launchers that start other programs: denying `flatpak`, `bwrap`, `snap`, `gio`,
    ///   `gapplication` or `xdg-open` would deny every app started through them, the allowed
    ///   ones too, and what the session opens with them, and the desktops' own application
    ///   finders (`krunner`, `xfce4-appfinder`) are how the allowed apps get started; `blockc`
    ///   is how a user asks for more time during the window;
    /// - desktop shells their session manager starts without an autostart entry, whose settings
    ///   entries name the shell's own program (`xfce4-panel --preferences`), and the file
    ///   managers that draw the desktop in MATE and LXDE (`caja`, `pcmanfm`): stopping them would
    ///   take the panel or the desktop away.
    public static let neverTargets: [String] = [
        "sh", "bash", "dash", "zsh", "fish", "python3", "perl",
        "env", "flatpak", "bwrap", "snap", "gio", "gapplication", "xdg-open", "pkexec", "krunner", "xfce4-appfinder", "blockc",
        "gnome-shell", "plasmashell", "kwin_x11", "kwin_wayland", "xfce4-panel", "xfdesktop", "xfwm4",
        "mate-panel", "marco", "caja", "cinnamon", "budgie-panel", "lxpanel", "lxqt-panel", "pcmanfm", "pcmanfm-qt",
    ]

    static func basename(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

extension StringProtocol {
    fileprivate func trimmingSuffix() -> String {
        var s = Substring(self)
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return String(s)
    }
}
