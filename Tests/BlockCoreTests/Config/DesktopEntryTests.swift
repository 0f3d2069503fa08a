import Testing
@testable import BlockCore

/// W2: the desktop applications an allow-only window denies, as read from `.desktop` files.
@Suite struct DesktopEntryTests {
    static func entry(_ body: String) -> DesktopEntry? { DesktopEntry.parse("[Desktop Entry]\n" + body) }

    @Test("W2: a shown Type=Application entry with an Exec= is a desktop application; hidden, NoDisplay, terminal and other types are not", arguments: [
        ("Type=Application\nName=Game\nExec=game", true),
        ("Type = Application\nExec = game\n", true),                       // blanks around = are allowed
        ("Type=Application\nExec=game\nNoDisplay=true", false),            // a helper, a portal, a settings daemon
        ("Type=Application\nExec=game\nHidden=true", false),               // deleted
        ("Type=Application\nExec=vim %F\nTerminal=true", false),           // a command-line tool
        ("Type=Link\nURL=https://example.com", false),
        ("Type=Directory\nName=Games", false),
        ("Name=Game\nExec=game", false),                                   // no Type
        ("Type=Application\nName=Game", false),                            // no Exec
        ("Type=Application\nExec=\"unterminated", false),
        ("Type=Application\nExec=game\nNoDisplay=false\nHidden=false", true),
    ])
    func isApplication(_ body: String, _ expected: Bool) {
        #expect(Self.entry(body)?.isDesktopApplication == expected, "\(body)")
    }

    @Test("W2: only the [Desktop Entry] group counts; actions, localized keys and comments do not")
    func group() throws {
        let text = """
        # a comment
        [Desktop Action new-window]
        Exec=other --new-window
        NoDisplay=true

        [Desktop Entry]
        Name[de]=Spiel
        Name=Game
        Type=Application
        Exec=game %U
        Exec=second
        """
        let e = try #require(DesktopEntry.parse(text))
        #expect(e.name == "Game" && e.exec == ["game"] && !e.noDisplay, "the first Exec= counts, the action's keys do not")
        #expect(DesktopEntry.parse("[Desktop Action x]\nType=Application\nExec=game") == nil, "no [Desktop Entry] group")
        #expect(DesktopEntry.parse(String(repeating: "\u{0}=[\n", count: 100)) == nil, "garbage parses to nothing, never a crash")
    }

    @Test("W2: Exec= is split per the spec: quotes, escapes, %% and field codes", arguments: [
        ("game", ["game"]),
        ("game %U", ["game"]),
        ("\"/opt/My\\sGame/run\" --x %f %F %u %i %c %k", ["/opt/My Game/run", "--x"]),   // \s is a space (string escape), quoted
        ("/opt/My\\sGame/run", ["/opt/My", "Game/run"]),                    // unquoted, that space separates (escapes before quoting)
        ("\"/opt/My Game/run\" --title=%c", ["/opt/My Game/run", "--title="]),
        ("\"/opt/a \\\\\"b\\\\\"/run\"", ["/opt/a \"b\"/run"]),                 // \\\\ in the file is \\ in the value, \ in quotes
        ("game --percent=100%%", ["game", "--percent=100%"]),
        ("game %d %D %n %N %v %m", ["game"]),                              // deprecated codes go too
        ("  game   -a\t-b  ", ["game", "-a", "-b"]),
        ("\"\" x", ["", "x"]),
    ])
    func tokenize(_ exec: String, _ expected: [String]) throws {
        let e = try #require(Self.entry("Type=Application\nExec=" + exec))
        #expect(e.exec == expected)
    }

    @Test("W2: an unterminated quote or an Exec= of field codes only launches nothing")
    func malformed() {
        #expect(DesktopEntry.tokenize("\"game") == nil)
        #expect(DesktopEntry.tokenize("%U %f") == nil)
        #expect(DesktopEntry.tokenize("") == nil)
    }

    @Test("W2: env and flatpak run are unwrapped to what they start; TryExec= is a program too", arguments: [
        ("game", nil, [DesktopLaunch.program("game")]),
        ("env GDK_BACKEND=x11 LANG=C /usr/bin/game %U", nil, [.program("/usr/bin/game")]),
        ("/usr/bin/env -u DISPLAY game", nil, [.program("game")]),
        ("env", nil, []),
        ("/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=supertuxkart --file-forwarding net.supertuxkart.SuperTuxKart @@u %U @@", nil,
         [.flatpak(app: "net.supertuxkart.SuperTuxKart", command: "supertuxkart")]),
        ("flatpak run org.mozilla.firefox", nil, [.flatpak(app: "org.mozilla.firefox", command: nil)]),
        ("flatpak run --command sh org.x.App", nil, [.flatpak(app: "org.x.App", command: "sh")]),
        ("flatpak run ../../etc", nil, [.program("flatpak")]),            // not an app ID: only flatpak itself, a never-target
        ("flatpak install x", nil, [.program("flatpak")]),
        ("sh -c \"steam %U\"", "steam", [.program("sh"), .program("steam")]),
        ("/usr/bin/game", "/usr/bin/game", [.program("/usr/bin/game")]),
    ] as [(String, String?, [DesktopLaunch])])
    func launches(_ exec: String, _ tryExec: String?, _ expected: [DesktopLaunch]) throws {
        let e = try #require(Self.entry("Type=Application\nExec=\(exec)" + (tryExec.map { "\nTryExec=\($0)" } ?? "")))
        #expect(e.launches == expected, "\(exec)")
    }

    @Test("W2: a flatpak app's command comes from its metadata; only bare names and /app/ paths map into its files")
    func flatpak() {
        let metadata = "[Application]\nname=org.x.App\nruntime=org.gnome.Platform/x86_64/46\ncommand=x-app\n\n[Context]\ncommand=no\n"
        #expect(DesktopLaunch.flatpakCommand(metadata: metadata) == "x-app")
        #expect(DesktopLaunch.flatpakCommand(metadata: "[Runtime]\ncommand=x\n") == nil)
        #expect(DesktopLaunch.flatpakFile(command: "x-app") == "bin/x-app")
        #expect(DesktopLaunch.flatpakFile(command: "/app/lib/x/run") == "lib/x/run")
        #expect(DesktopLaunch.flatpakFile(command: "/app/../../etc/passwd") == nil)
        #expect(DesktopLaunch.flatpakFile(command: "/usr/bin/sh") == nil)
        #expect(DesktopLaunch.flatpakFile(command: "a/b") == nil)
        #expect(DesktopLaunch.isFlatpakID("org.mozilla.firefox") && DesktopLaunch.isFlatpakID("com.valvesoftware.Steam"))
        #expect(!DesktopLaunch.isFlatpakID("firefox") && !DesktopLaunch.isFlatpakID("org/../x") && !DesktopLaunch.isFlatpakID("a..b"))
    }

    @Test("W2: shells, interpreters and launchers are never targets: denying them would break the session or every app")
    func never() {
        for name in ["sh", "bash", "dash", "zsh", "env", "python3", "perl", "flatpak", "snap", "gio", "xdg-open", "blockc", "xfce4-panel", "gnome-shell"] {
            #expect(DesktopLaunch.neverTargets.contains(name), "\(name)")
        }
        #expect(!DesktopLaunch.neverTargets.contains("firefox"))
    }
}
