import BlockClient
import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

/// `make install` into a temp DESTDIR (never the real system, never systemctl), the
/// installed units through `systemd-analyze verify` and `security`, the journal catalog
/// through a real `journalctl --update-catalog`, and the completions in the real shells.
@Suite("Install: make install, units, catalog, completions")
struct InstallTests {
    static let make = "/usr/bin/make"
    static let analyze = "/usr/bin/systemd-analyze"
    static let journalctl = "/usr/bin/journalctl"
    static let man = "/usr/bin/man"
    static let bash = "/bin/bash"
    static let zsh = "/usr/bin/zsh"
    static let fish = "/usr/bin/fish"

    /// The multiarch triplet (x86_64-linux-gnu), as scripts/install finds it.
    static let multiarch: String = {
        let out = try? Run.capture("/usr/bin/gcc", ["-print-multiarch"])
        return out?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }()

    /// What `make install` puts where, relative to DESTDIR, per PREFIX.
    static func expectedTree(prefix: String) -> [String: (mode: Int, source: String)] {
        let lib = ["/usr", "/usr/local"].contains(prefix) ? prefix + "/lib" : "/usr/local/lib"
        let zsh = prefix == "/usr" ? "/usr/share/zsh/vendor-completions" : prefix + "/share/zsh/site-functions"
        return [
            // P1: the one executable, and its other names as symbolic links to it.
            prefix + "/bin/blockd": (0o755, "@bin/blockd"),
            prefix + "/bin/blockc": (0o777, "@symlink blockd"),
            prefix + "/libexec/blockd/blockc-agent": (0o777, "@symlink ../../bin/blockd"),
            lib + "/systemd/system/blockd.service": (0o644, "systemd/blockd.service"),
            lib + "/systemd/system/blockd.socket": (0o644, "systemd/blockd.socket"),
            lib + "/sysusers.d/blockd.conf": (0o644, "systemd/sysusers.d/blockd.conf"),
            lib + "/systemd/catalog/blockd.catalog": (0o644, "systemd/blockd.catalog"),
            prefix + "/share/man/man8/blockd.8": (0o644, "man/blockd.8"),
            prefix + "/share/man/man1/blockc.1": (0o644, "man/blockc.1"),
            prefix + "/share/man/man5/blockd.conf.5": (0o644, "man/blockd.conf.5"),
            prefix + "/share/bash-completion/completions/blockc": (0o644, "completions/blockc.bash"),
            zsh + "/_blockc": (0o644, "completions/_blockc"),
            prefix + "/share/fish/vendor_completions.d/blockc.fish": (0o644, "completions/blockc.fish"),
            lib + "/systemd/user/blockd-agent.service": (0o644, "systemd/user/blockd-agent.service"),
            "/etc/xdg/autostart/blockd-agent.desktop": (0o644, "systemd/user/blockd-agent.desktop"),
            // U3: where glibc finds its own NSS modules, whatever the PREFIX (scripts/install).
            "/usr/lib/\(multiarch)/libnss_blockd.so.2": (0o644, ".build/nss/libnss_blockd.so.2"),
            // B1: the extension packed for this PREFIX, and the native-messaging host's
            // manifests (written: they name installed paths) and its name (a symlink).
            prefix + "/share/blockd/browser/blockd.crx": (0o644, "@browser/blockd.crx"),
            prefix + "/share/blockd/browser/blockd.xpi": (0o644, "@browser/blockd.xpi"),
            prefix + "/share/blockd/browser/updates.xml": (0o644, "@browser/updates.xml"),
            prefix + "/share/blockd/browser/chromium-id": (0o644, "@browser/chromium-id"),
            prefix + "/share/blockd/browser/firefox-id": (0o644, "@browser/firefox-id"),
            prefix + "/share/blockd/browser/chromium-host.json": (0o644, "@written"),
            "/usr/lib/mozilla/native-messaging-hosts/com.blockd.host.json": (0o644, "@written"),
            // Screen time: pam-auth-update's profile (off until enabled), naming the installed blockc.
            "/usr/share/pam-configs/blockd-screen": (0o644, "@written"),
            prefix + "/libexec/blockd/blockd-nm-host": (0o777, "@symlink blockc-agent"),
        ]
    }

    /// The extension packed for `prefix` into `dir`, as scripts/install packs it (the same key
    /// gives the same bytes).
    static func pack(prefix: String, into dir: String) throws {
        let run = try Run.capture(Repo.root + "/scripts/pack-extension", [dir], environment: ["PREFIX": prefix, "PATH": "/usr/bin:/bin"])
        guard run.status == 0 else { throw TestFailure("pack-extension: \(run.output)") }
    }

    /// B1: the host's manifests name the installed host and, for Chromium, the packed ID.
    static func checkWritten(_ path: String, _ data: Data, prefix: String, packed: String) throws {
        if path.hasSuffix("pam-configs/blockd-screen") {
            let text = String(decoding: data, as: UTF8.self)
            #expect(text.contains("Default: no\n") && text.contains("Account-Type: Additional\n")
                    && text.hasSuffix("Account:\n\trequired\tpam_exec.so quiet stdout \(prefix)/bin/blockc screen --pam\n"), "\(text)")
            return
        }
        let json = try JSON.parse(bytes: Array(data))
        #expect(json["name"] == "com.blockd.host" && json["type"] == "stdio")
        #expect(json["path"] == .string(prefix + "/libexec/blockd/blockd-nm-host"), "\(path)")
        if path.hasSuffix("chromium-host.json") {
            let id = try String(contentsOfFile: packed + "/chromium-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(json["allowed_origins"] == [.string("chrome-extension://\(id)/")])
        } else {
            #expect(json["allowed_extensions"] == ["blockd@blockd.local"])
        }
    }

    @Test("make install puts every file where systemd, man and the shells look; make uninstall removes them", .enabled(if: Privileged.can(tools: [InstallTests.make]), Privileged.needsTools),
          arguments: ["/usr/local", "/usr", "/opt/blockd"])
    func installTree(prefix: String) throws {
        if Privileged.unavailable(tools: [InstallTests.make]) != nil { return }
        let dest = try TempDir()
        let installed = try InstallTests.install(into: dest.path, prefix: prefix)
        #expect(installed.status == 0, "make install failed:\n\(installed.output)")

        let expected = InstallTests.expectedTree(prefix: prefix)
        let packed = try TempDir()
        try InstallTests.pack(prefix: prefix, into: packed.path)
        #expect(Set(dest.files()) == Set(expected.keys), "installed:\n\(dest.files().sorted().joined(separator: "\n"))")
        for (path, (mode, source)) in expected {
            if source.hasPrefix("@symlink ") {
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dest.path + path) == String(source.dropFirst(9)))
                // Each name leads to the one installed file (relative links, so also below DESTDIR).
                let resolved = URL(fileURLWithPath: dest.path + path).resolvingSymlinksInPath().path
                #expect(resolved == URL(fileURLWithPath: dest.path + prefix + "/bin/blockd").resolvingSymlinksInPath().path, "\(path) leads to \(resolved)")
                continue
            }
            if source == "@written" {
                try InstallTests.checkWritten(path, try Data(contentsOf: URL(fileURLWithPath: dest.path + path)), prefix: prefix, packed: packed.path)
                continue
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: dest.path + path)
            #expect((attributes[.posixPermissions] as? Int) == mode, "\(path) has mode \(mode)")
            let from = source.hasPrefix("@bin/") ? Repo.binDir + source.dropFirst(4)
                : source.hasPrefix("@browser/") ? packed.path + source.dropFirst(8) : Repo.root + "/" + source
            // The executables and the NSS module are installed stripped (scripts/install).
            let elf = source.hasPrefix("@bin/") || source.hasSuffix(".so.2")
            let want = try elf ? InstallTests.stripped(from) : Data(contentsOf: URL(fileURLWithPath: from))
            let got = try Data(contentsOf: URL(fileURLWithPath: dest.path + path))
            // The units and the autostart entry name the installed binary; the rest is a copy.
            let exec: (key: String, line: String)? = path.hasSuffix("blockd.service") ? ("ExecStart=", "ExecStart=\(prefix)/bin/blockd")
                : path.hasSuffix("blockd-agent.service") ? ("ExecStart=", "ExecStart=\(prefix)/bin/blockc watch --notify")
                : path.hasSuffix("blockd-agent.desktop") ? ("Exec=", "Exec=\(prefix)/bin/blockc watch --notify") : nil
            if let exec {
                let lines = String(decoding: got, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                #expect(lines.filter { $0.hasPrefix(exec.key) } == [Substring(exec.line)])
                let rest = lines.filter { !$0.hasPrefix(exec.key) }.joined(separator: "\n")
                let original = String(decoding: want, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                #expect(rest == original.filter { !$0.hasPrefix(exec.key) }.joined(separator: "\n"))
            } else {
                #expect(got == want, "\(path) is a copy of \(source)")
            }
        }

        let removed = try Run.capture(InstallTests.make, ["-C", Repo.root, "uninstall", "DESTDIR=\(dest.path)", "PREFIX=\(prefix)"],
                                      environment: InstallTests.cleanMakeEnvironment)
        #expect(removed.status == 0, "make uninstall failed:\n\(removed.output)")
        #expect(dest.files().isEmpty, "left behind: \(dest.files())")
    }

    @Test("the installed units pass systemd-analyze verify, with their man pages found and ExecStart executable", .enabled(if: Privileged.can(tools: [InstallTests.make, InstallTests.analyze, InstallTests.man]), Privileged.needsTools))
    func verifyUnits() throws {
        if Privileged.unavailable(tools: [InstallTests.make, InstallTests.analyze, InstallTests.man]) != nil { return }
        let dest = try TempDir()
        let installed = try InstallTests.install(into: dest.path, prefix: "/usr/local")
        try #require(installed.status == 0, "make install failed:\n\(installed.output)")

        // PID 1 is not necessarily systemd here, and ExecStart must name an executable: verify
        // copies whose ExecStart points into DESTDIR, with man(1) looking in DESTDIR too.
        let units = try TempDir()
        for name in ["blockd.service", "blockd.socket"] {
            var text = try String(contentsOfFile: dest.path + "/usr/local/lib/systemd/system/" + name, encoding: .utf8)
            text = text.replacingOccurrences(of: "ExecStart=/usr/local/bin/blockd", with: "ExecStart=\(dest.path)/usr/local/bin/blockd")
            try text.write(toFile: units.path + "/" + name, atomically: true, encoding: .utf8)
        }
        let env = ["MANPATH": dest.path + "/usr/local/share/man"]
        let verify = try Run.capture(InstallTests.analyze, ["verify", units.path + "/blockd.service", units.path + "/blockd.socket"],
                                     environment: env)
        // Complaints about the host's own units are not ours to fix; any about blockd's are.
        let ours = verify.output.split(separator: "\n").filter { $0.contains("blockd") }
        #expect(verify.status == 0 && ours.isEmpty, "systemd-analyze verify:\n\(verify.output)")

        // The check is not vacuous: a unit whose ExecStart does not exist fails it.
        let broken = try String(contentsOfFile: units.path + "/blockd.service", encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=\(dest.path)/usr/local/bin/blockd", with: "ExecStart=\(dest.path)/missing/blockd")
        try broken.write(toFile: units.path + "/blockd.service", atomically: true, encoding: .utf8)
        let failing = try Run.capture(InstallTests.analyze, ["verify", units.path + "/blockd.service"], environment: env)
        #expect(failing.status != 0, "systemd-analyze verify accepted a missing ExecStart")
    }

    /// 3.1: E5's DNS queries need AF_INET and AF_INET6 (0.3) and no IPAddressDeny= (0.2),
    /// where the unit used to score 2.7 with every lookup failing under it.
    @Test("the hardened service stays at or below exposure 3.1 in systemd-analyze security", .enabled(if: Privileged.can(tools: [InstallTests.analyze]), Privileged.needsTools))
    func securityExposure() throws {
        if Privileged.unavailable(tools: [InstallTests.analyze]) != nil { return }
        let unit = Repo.root + "/systemd/blockd.service"
        let result = try Run.capture(InstallTests.analyze, ["security", "--offline=true", "--threshold=31", "--no-pager", unit])
        let overall = result.output.split(separator: "\n").last { $0.contains("Overall exposure level") } ?? "no overall line"
        #expect(result.status == 0, "\(overall)\n\(result.output)")
    }

    @Test("journalctl --update-catalog builds a catalog with one blockd entry per MESSAGE_ID", .enabled(if: Privileged.can(tools: [InstallTests.make, InstallTests.journalctl]), Privileged.needsTools))
    func catalog() throws {
        if Privileged.unavailable(tools: [InstallTests.make, InstallTests.journalctl]) != nil { return }
        let dest = try TempDir()
        let installed = try InstallTests.install(into: dest.path, prefix: "/usr/local")
        try #require(installed.status == 0, "make install failed:\n\(installed.output)")

        let update = try Run.capture(InstallTests.journalctl, ["--root=\(dest.path)", "--update-catalog"])
        #expect(update.status == 0 && update.output.isEmpty, "journalctl --update-catalog:\n\(update.output)")
        #expect(FileManager.default.fileExists(atPath: dest.path + "/var/lib/systemd/catalog/database"))

        let list = try Run.capture(InstallTests.journalctl, ["--root=\(dest.path)", "--list-catalog"])
        try #require(list.status == 0, "\(list.output)")
        var subjects: [String: String] = [:]
        for line in list.output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            #expect(parts[1].hasPrefix("blockd: "), "\(line)")
            subjects[String(parts[0])] = String(parts[1].dropFirst("blockd: ".count))
        }
        #expect(Set(subjects.keys) == Set(LogEvent.allCases.map(\.messageID)))
        for event in LogEvent.allCases {
            let dump = try Run.capture(InstallTests.journalctl, ["--root=\(dest.path)", "--dump-catalog", event.messageID])
            #expect(dump.status == 0 && subjects[event.messageID]?.isEmpty == false, "\(event): \(dump.output)")
            for header in ["Defined-By: blockd", "Support: man:blockd(8)"] {
                #expect(dump.output.contains(header), "\(event) has \(header)")
            }
            // Only fields blockd sends can be substituted (blockd(8), LOGGING).
            let placeholders = dump.output.matches(of: /@([A-Z_]+)@/).map { String($0.1) }
            for name in placeholders {
                #expect(["BLOCKD_SELECTION", "BLOCKD_ACTIVITY", "BLOCKD_CODE", "BLOCKD_LATE_MS", "BLOCKD_END", "BLOCKD_ADDRESSES",
                          "BLOCKD_MORE_ID", "BLOCKD_UID"].contains(name),
                        "\(event) uses @\(name)@")
            }
        }
        // What journalctl -x shows for the events an administrator acts on.
        #expect(subjects[LogEvent.lock.messageID] == "Blocked @BLOCKD_SELECTION@")
        #expect(subjects[LogEvent.unlock.messageID] == "Unblocked @BLOCKD_SELECTION@")
        #expect(subjects[LogEvent.refusal.messageID]?.contains("refused") == true)
        #expect(subjects[LogEvent.failure.messageID]?.contains("failed") == true)
    }

    // MARK: Completions

    /// What a shell offers after `blockc `: the first word of every command, then `help`.
    static var commands: [String] { Command.cliGroups + ["help"] }
    static var selections: [String] { Catalog.builtIn.map(\.name).sorted() }

    /// (command line so far, the candidates a shell must offer).
    static let cases: [(String, [String])] = [
        ("blockc ", commands),
        ("blockc st", ["start", "stats", "status", "stop"]),
        ("blockc start --", ["--minutes", "--for", "--until", "--lock", "--name", "--json", "--more-time", "--delay", "--more-time-per-day", "--user"]),
        ("blockc start --minutes 30 ", Catalog.builtIn.map(\.name)),
        ("blockc start --for 1h in", ["instagram"]),
        ("blockc schedule ", Command.subcommands(of: "schedule")),
        ("blockc limit ", Command.subcommands(of: "limit")),
        ("blockc schedule add bedtime --daily 22:00-07:00 re", ["reddit"]),
        ("blockc selections show y", ["youtube"]),
        ("blockc limit add games 2h st", ["steam"]),
        ("blockc failures --", ["--json", "--clear"]),
        ("blockc watch --", ["--json", "--notify"]),
    ]

    /// The shipped lists agree with the code: every word of `Command.cliCommands`, and the
    /// built-in selection names as the fallback when the daemon does not answer.
    @Test("each completion file names every command and the built-in selections",
          arguments: ["completions/blockc.bash", "completions/_blockc", "completions/blockc.fish"])
    func completionLists(file: String) throws {
        let text = try String(contentsOfFile: Repo.root + "/" + file, encoding: .utf8)
        for name in Command.cliCommands.flatMap({ $0.split(separator: " ").map(String.init) }) + InstallTests.commands {
            #expect(text.contains(name), "\(file) completes \(name)")
        }
        let fallback = try #require(text.split(separator: "\n").first { $0.contains("discord facebook") })
        let names = fallback.matches(of: /[a-z]+/).map { String($0.0) }.filter { InstallTests.selections.contains($0) }
        #expect(names == InstallTests.selections, "\(file): \(fallback)")
    }

    @Test("bash completes commands, flags and selection names", .enabled(if: Privileged.can(tools: [InstallTests.bash]), Privileged.needsTools))
    func bashCompletion() throws {
        if Privileged.unavailable(tools: [InstallTests.bash]) != nil { return }
        for (line, expected) in InstallTests.cases {
            let got = try InstallTests.complete(shell: .bash, line)
            // Where a flag fits, --help does too.
            #expect(got == Set(expected + (line.hasSuffix("--") ? ["--help"] : [])), "bash: '\(line)' -> \(got.sorted())")
        }
    }

    @Test("zsh completes commands, flags and selection names", .enabled(if: Privileged.can(tools: [InstallTests.zsh]), Privileged.needsTools))
    func zshCompletion() throws {
        if Privileged.unavailable(tools: [InstallTests.zsh]) != nil { return }
        for (line, expected) in InstallTests.cases {
            let got = try InstallTests.complete(shell: .zsh, line)
            #expect(got.isSuperset(of: expected), "zsh: '\(line)' -> \(got.sorted())")
        }
    }

    @Test("fish completes commands, flags and selection names", .enabled(if: Privileged.can(tools: [InstallTests.fish]), Privileged.needsTools))
    func fishCompletion() throws {
        if Privileged.unavailable(tools: [InstallTests.fish]) != nil { return }
        for (line, expected) in InstallTests.cases {
            let got = try InstallTests.complete(shell: .fish, line)
            // fish also offers the global --socket and --help wherever a flag fits.
            #expect(got.subtracting(["--socket", "--help"]) == Set(expected), "fish: '\(line)' -> \(got.sorted())")
        }
    }

    @Test("selection names come from 'blockc selections --json' when the daemon answers", .enabled(if: Privileged.can(tools: [Shell.bash.path, Shell.zsh.path, Shell.fish.path]), Privileged.needsTools), arguments: [Shell.bash, .zsh, .fish])
    func liveSelections(shell: Shell) throws {
        if Privileged.unavailable(tools: [shell.path]) != nil { return }
        let dir = try TempDir()
        // A stand-in client: answers only `--socket S selections --json`, as a running daemon would.
        let client = dir.path + "/blockc"
        try """
            #!/bin/sh
            [ "$*" = "--socket /run/test.sock selections --json" ] || exit 3
            echo '[{"name":"homework-break","domains":["example.com"],"apps":[],"openURL":null},{"name":"news","domains":[],"apps":[],"openURL":null}]'
            """.write(toFile: client, atomically: true, encoding: .utf8)
        chmod(client, 0o755)
        let got = try InstallTests.complete(shell: shell, "\(client) --socket /run/test.sock start --minutes 5 ")
        #expect(got == ["homework-break", "news"], "\(shell): \(got.sorted())")
    }

    enum Shell: String, CaseIterable, CustomStringConvertible {
        case bash, zsh, fish
        var path: String {
            switch self {
            case .bash: InstallTests.bash
            case .zsh: InstallTests.zsh
            case .fish: InstallTests.fish
            }
        }
        var description: String { rawValue }
    }

    /// The candidates `shell` offers after `line` (a trailing space starts a new word), from
    /// the completion file in the repository, with the shell's own rc files ignored.
    static func complete(shell: Shell, _ line: String) throws -> Set<String> {
        let quoted = "'" + line.replacingOccurrences(of: "'", with: "'\\''") + "'"
        let result: Run.Result
        switch shell {
        case .bash:
            let script = """
                source '\(Repo.root)/completions/blockc.bash'
                line=\(quoted)
                read -ra COMP_WORDS <<<"$line"
                [[ $line == *' ' ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                _blockc
                printf '%s\\n' "${COMPREPLY[@]}"
                """
            result = try Run.capture(bash, ["--norc", "--noprofile", "-c", script])
        case .fish:
            let script = "source '\(Repo.root)/completions/blockc.fish'; complete -C \(quoted)"
            result = try Run.capture(fish, ["--no-config", "-c", script])
            return Set(result.output.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") })
        case .zsh:
            // zsh completes only in its line editor: drive an interactive zsh in a pty and
            // record what reaches compadd. The line is written without a newline (-n): with
            // one, zsh would run the completed command, against whatever daemon it reaches.
            let script = """
                zmodload zsh/zpty
                zpty z 'zsh -f -i'
                zpty -w z 'PROMPT=; fpath=(\(Repo.root)/completions $fpath); autoload -Uz compinit; compinit -u -D'
                zpty -w z 'compadd () { local -a h; builtin compadd -O h "$@"; print -r -- "" "@@"${^h}"@@"; builtin compadd "$@"; }'
                zpty -w z '__done () { print -r -- "" "__DO""NE__" }; setopt nobeep'
                zpty -w z 'zle-line-init () { comppostfuncs=(__done) }; zle -N zle-line-init'
                zpty -w -n z \(quoted)$'\\t'
                all= out=
                for i in {1..100}; do
                  while zpty -r -t z out; do all+=$out; done
                  [[ $all == *__DONE__* ]] && break
                  sleep 0.05
                done
                zpty -d z
                print -r -- "$all" | grep -ao '@@[^@" ]*@@' | tr -d @
                """
            result = try Run.capture(zsh, ["-f", "-c", script])
        }
        return Set(result.output.split(separator: "\n").map(String.init).filter { !$0.isEmpty })
    }

    // MARK: Helpers

    /// make's own variables from an outer `make check` stay out of the nested make.
    static var cleanMakeEnvironment: [String: String?] {
        ["MAKEFLAGS": nil, "MAKELEVEL": nil, "MFLAGS": nil, "DESTDIR": nil, "PREFIX": nil]
    }

    /// `path` as scripts/install installs it, stripped as dh_strip does (into a temp dir).
    static func stripped(_ path: String) throws -> Data {
        let dir = try TempDir()
        let run = try Run.capture("/usr/bin/strip", ["--remove-section=.comment", "--remove-section=.note", "--strip-unneeded",
                                                     "-o", dir.path + "/stripped", path])
        guard run.status == 0 else { throw TestFailure("strip \(path): \(run.output)") }
        return try Data(contentsOf: URL(fileURLWithPath: dir.path + "/stripped"))
    }

    /// `make install` of the already-built debug binaries (a release build would take minutes).
    static func install(into destdir: String, prefix: String) throws -> Run.Result {
        precondition(destdir.hasPrefix("/tmp/") && destdir.count > 5, "tests install into a temp DESTDIR only")
        return try Run.capture(make, ["-C", Repo.root, "install", "DESTDIR=\(destdir)", "PREFIX=\(prefix)", "BINDIR_SRC=\(Repo.binDir)"],
                               environment: cleanMakeEnvironment)
    }
}
