import Testing
@testable import BlockCore

private let conf = "/etc/blockd/blockd.conf"
private let sel = "/etc/blockd/selections.d/social.conf"
private let sched = "/etc/blockd/schedules.d/bedtime.conf"

private func message(_ body: () throws(CoreError) -> Void) -> String? {
    do throws(CoreError) {
        try body()
        return nil
    } catch {
        #expect(error.code == .invalidConfig)
        return error.message
    }
}

@Suite("Config files (§7)")
struct ConfigTests {
    struct Named<T: Sendable>: CustomTestStringConvertible, Sendable {
        let name: String
        let text: String
        let expected: T
        var testDescription: String { name }
    }

    // MARK: blockd.conf

    @Test("STYLE 7: defaults when the file is empty, only comments, or an empty [Daemon]", arguments: [
        "", "# nothing here\n; really\n", "[Daemon]\n",
        "[Daemon]\nMaxActivities=7\nMaxActivities=\nKillGrace=9s\nKillGrace=\n",
    ])
    func daemonDefaults(_ text: String) throws {
        #expect(try DaemonConfig.parse(file: conf, text: text) == .defaults)
        #expect(DaemonConfig.defaults == DaemonConfig(maxActivities: 10_000, hostsFile: "/etc/hosts", killGraceSeconds: 3))
    }

    @Test("T4: MaxActivities= configurable, default 10,000; E1 HostsFile=; E2 KillGrace=", arguments: [
        Named(name: "MaxActivities=", text: "[Daemon]\nMaxActivities=5\n",
              expected: DaemonConfig(maxActivities: 5, hostsFile: "/etc/hosts", killGraceSeconds: 3)),
        Named(name: "the last assignment wins", text: "[Daemon]\nMaxActivities=5\nMaxActivities = 1000000\n",
              expected: DaemonConfig(maxActivities: 1_000_000, hostsFile: "/etc/hosts", killGraceSeconds: 3)),
        Named(name: "all three", text: "[Daemon]\nHostsFile=/srv/test/hosts\nKillGrace=1m\nMaxActivities=1\n",
              expected: DaemonConfig(maxActivities: 1, hostsFile: "/srv/test/hosts", killGraceSeconds: 60)),
        Named(name: "repeated [Daemon] sections merge", text: "[Daemon]\nKillGrace=10s\n[Daemon]\nMaxActivities=3\n",
              expected: DaemonConfig(maxActivities: 3, hostsFile: "/etc/hosts", killGraceSeconds: 10)),
    ])
    func daemonValues(_ c: Named<DaemonConfig>) throws {
        #expect(try DaemonConfig.parse(file: conf, text: c.text) == c.expected)
    }

    @Test("STYLE 7: layers apply defaults → file → flags, an unset value keeps the layer below")
    func layering() throws {
        let file = try DaemonConfig.parseLayer(file: conf, text: "[Daemon]\nMaxActivities=9\nHostsFile=/a/hosts\n")
        #expect(file == DaemonConfig.Layer(maxActivities: 9, hostsFile: "/a/hosts"))
        let flags = DaemonConfig.Layer(hostsFile: "/b/hosts")
        #expect(DaemonConfig.defaults.applying(file).applying(flags)
                == DaemonConfig(maxActivities: 9, hostsFile: "/b/hosts", killGraceSeconds: 3))
    }

    @Test("§7: a bad blockd.conf is an error naming file, line, key and what is accepted", arguments: [
        Named(name: "MaxActivities= not a number", text: "# limits\n\n[Daemon]\nMaxActivities=many\n",
              expected: "/etc/blockd/blockd.conf:4: MaxActivities= must be a whole number from 1 to 1000000, not 'many'"),
        Named(name: "MaxActivities=0", text: "[Daemon]\nMaxActivities=0\n",
              expected: "/etc/blockd/blockd.conf:2: MaxActivities= must be a whole number from 1 to 1000000, not '0'"),
        Named(name: "MaxActivities= too large", text: "[Daemon]\nMaxActivities=1000001\n",
              expected: "/etc/blockd/blockd.conf:2: MaxActivities= must be a whole number from 1 to 1000000, not '1000001'"),
        Named(name: "MaxActivities= negative", text: "[Daemon]\nMaxActivities=-1\n",
              expected: "/etc/blockd/blockd.conf:2: MaxActivities= must be a whole number from 1 to 1000000, not '-1'"),
        Named(name: "unknown key lists the valid ones", text: "[Daemon]\nSocket=/run/blockd.sock\n",
              expected: "/etc/blockd/blockd.conf:2: unknown key Socket= in [Daemon]; valid keys are MaxActivities=, MaxActivitiesPerUser=, HostsFile=, KillGrace=, ConnectGrace=, Firewall=, CutSockets=, ResolvConf=, BrowserPolicies=, PolicyRoot=, FirefoxPolicies=, BrowserExtension=, UserTablesDirectory=, AppShield=, ScreenTime=, IdleSeconds=, MetricsDirectory=, AlwaysAllowed=, ReportDays="),
        Named(name: "keys are case-sensitive, with a hint", text: "[Daemon]\nmaxactivities=5\n",
              expected: "/etc/blockd/blockd.conf:2: unknown key maxactivities= in [Daemon]; keys are case-sensitive: write MaxActivities="),
        Named(name: "unknown section", text: "[Daemon]\nKillGrace=3s\n[Sandbox]\n",
              expected: "/etc/blockd/blockd.conf:3: unknown section [Sandbox]; blockd.conf may contain only [Daemon]"),
        Named(name: "HostsFile= relative", text: "[Daemon]\nHostsFile=hosts\n",
              expected: "/etc/blockd/blockd.conf:2: HostsFile= must be an absolute path to a file, such as /etc/hosts, not 'hosts'"),
        Named(name: "KillGrace= without unit", text: "[Daemon]\nKillGrace=3\n",
              expected: "/etc/blockd/blockd.conf:2: KillGrace= must be a duration from 1s to 1m, e.g. 3s: '3' is not a duration: it has no unit; write 3m for minutes or 3s for seconds"),
        Named(name: "KillGrace= too long", text: "[Daemon]\nKillGrace=2m\n",
              expected: "/etc/blockd/blockd.conf:2: KillGrace= must be a duration from 1s to 1m, e.g. 3s, not '2m'"),
        Named(name: "key before any section", text: "MaxActivities=5\n",
              expected: "/etc/blockd/blockd.conf:1: MaxActivities= comes before any [Section] header; put it under a section such as [Daemon]"),
    ])
    func daemonErrors(_ c: Named<String>) {
        #expect(message { () throws(CoreError) in _ = try DaemonConfig.parse(file: conf, text: c.text) } == c.expected)
    }

    // MARK: selections.d

    @Test("§1: a selection file with lists that repeat, reset by an empty assignment, and texts")
    func selection() throws {
        let text = """
            [Selection]
            Name = social
            Domains = instagram.com www.instagram.com \\
                      reddit.com
            # reset: an empty assignment forgets what came before, as in systemd
            Domains=
            Domains=tiktok.com x.com
            Domains=tiktok.com
            Apps="/opt/My App/bin/app" firefox
            Apps=/usr/bin/chromium
            OpenURL=https://www.gutenberg.org/
            ExecOnBlock=/usr/local/bin/notify-blocked --quiet
            ShieldTitle=Time for a break
            ShieldBody[ja]={selection} はブロック中です
            WarningBody=gone soon
            WarningBody=
            """
        let s = try ConfigFiles.parseSelection(file: sel, text: text)
        #expect(s == Selection(name: "social", domains: ["tiktok.com", "x.com"],
                               apps: ["/opt/My App/bin/app", "firefox", "/usr/bin/chromium"],
                               openURL: "https://www.gutenberg.org/",
                               texts: ["ShieldTitle": "Time for a break", "ShieldBody[ja]": "{selection} はブロック中です"],
                               execOnBlock: "/usr/local/bin/notify-blocked --quiet"))
    }

    @Test("E1 and S6 are checked at load time: bad domains and templates are errors with file:line")
    func validators() throws {
        let ok = try ConfigFiles.parseSelection(file: sel, text: "[Selection]\nName=s\nDomains=Example.COM bücher.de\nShieldBody={selection}\n")
        #expect(ok.domains == ["example.com", "xn--bcher-kva.de"])
        let badText = message { () throws(CoreError) in
            _ = try ConfigFiles.parseSelection(file: sel, text: "[Selection]\nName=s\nShieldBody={selection}\n\nShieldTitle={nope}\n")
        }
        #expect(badText?.hasPrefix("\(sel):5: ShieldTitle=: ") == true)
        #expect(badText?.contains("{nope}") == true)
        let badDomain = message { () throws(CoreError) in
            _ = try ConfigFiles.parseSelection(file: sel, text: "[Selection]\nName=s\nDomains=a..b\n")
        }
        #expect(badDomain?.hasPrefix("\(sel):3: Domains=: ") == true)
        let badURL = message { () throws(CoreError) in
            _ = try ConfigFiles.parseSelection(file: sel, text: "[Selection]\nName=s\nOpenURL=https://example.org/?q={bogus}\n")
        }
        #expect(badURL?.hasPrefix("\(sel):3: OpenURL=: ") == true)
    }

    @Test("OpenURL= needs a scheme; http(s) needs a host", arguments: [
        ("https://example.org/path?q=1", true), ("http://example.org", true), ("obsidian://open?vault=x", true),
        ("shortcuts:", true), ("mailto:me@example.org", true),
        ("example.org", false), ("https:/example.org", false), ("https://", false), ("1abc:x", false),
        ("https://exa mple.org", false), (":nothing", false),
    ])
    func openURL(_ url: String, _ accepted: Bool) {
        let msg = message { () throws(CoreError) in
            _ = try ConfigFiles.parseSelection(file: sel, text: "[Selection]\nName=s\nOpenURL=\(url)\n")
        }
        #expect((msg == nil) == accepted, "\(url): \(msg ?? "accepted")")
        if let msg { #expect(msg.hasPrefix("\(sel):3: OpenURL= ")) }
    }

    @Test("§7: a bad selection file is an error naming file and line", arguments: [
        Named(name: "missing Name=", text: "# social\n[Selection]\nDomains=x.com\n",
              expected: "\(sel):2: [Selection] has no Name=; add one, e.g. Name=social"),
        Named(name: "Name= emptied again", text: "[Selection]\nName=a\nName=\n",
              expected: "\(sel):1: [Selection] has no Name=; add one, e.g. Name=social"),
        Named(name: "no section at all", text: "# empty\n",
              expected: "\(sel): has no [Selection] section; a selection file needs one with at least Name=, e.g. [Selection] Name=social"),
        Named(name: "invalid Name=", text: "[Selection]\nName=my social\n",
              expected: "\(sel):2: Name=: 'my social' is not a valid selection name: use 1 to 255 letters, digits, '-', '_', '.' or '+', not starting with '-' or '.'"),
        Named(name: "unknown key lists the valid ones", text: "[Selection]\nName=a\nBlocklist=x.com\n",
              expected: "\(sel):3: unknown key Blocklist= in [Selection]; valid keys are Name=, Domains=, Apps=, Paths=, OpenURL=, ExecOnBlock=, ExecOnUnblock=, Firewall=, ShieldTitle=, ShieldBody=, OpenLabel=, BlockStartedTitle=, BlockStartedBody=, UnblockedTitle=, UnblockedBody=, WarningTitle=, WarningBody=, MoreLabel=, AskLabel=, MinuteLabel=, AskedTitle=, AskedBody=, GrantedTitle=, GrantedBody=, HeldBody=, PartHeldBody=, DeniedTitle=, DeniedBody=, ExpiredTitle=, ExpiredBody=, RequestTitle=, RequestBody=, ApproveLabel=, DenyLabel="),
        Named(name: "unsupported text language", text: "[Selection]\nName=a\nShieldBody[fr]=Pause\n",
              expected: "\(sel):3: ShieldBody[fr]= names no supported language; write ShieldBody[en]= or ShieldBody[ja]=, or ShieldBody= for every language"),
        Named(name: "relative app path", text: "[Selection]\nName=a\nApps=bin/app\n",
              expected: "\(sel):3: Apps= takes absolute paths (/usr/bin/firefox) or bare executable names looked up in PATH (firefox), not 'bin/app'; quote a path that contains spaces"),
        Named(name: "unterminated quote in Apps=", text: "[Selection]\nName=a\nApps=\"/opt/My App\n",
              expected: "\(sel):3: Apps=: the value has an opening \" without a closing one; close the quote"),
        Named(name: "unknown section", text: "[Rules]\nName=a\n",
              expected: "\(sel):1: unknown section [Rules]; a selection file may contain only [Selection]"),
    ])
    func selectionErrors(_ c: Named<String>) {
        #expect(message { () throws(CoreError) in _ = try ConfigFiles.parseSelection(file: sel, text: c.text) } == c.expected)
    }

    // MARK: schedules.d

    @Test("§7: declarative schedules; T2 equal ends accepted; weekday ranges; default daily", arguments: [
        Named(name: "T2: Window=13:05-13:05 is accepted (a 24-hour window)",
              text: "[Schedule]\nName=lunch\nWindow=13:05-13:05\nSelections=social\n",
              expected: Schedule(name: "lunch", selections: ["social"], days: .all,
                                 start: WallTime(hour: 13, minute: 5), end: WallTime(hour: 13, minute: 5), origin: .config(file: sched))),
        Named(name: "T3: a window over midnight, weekday range mon-fri",
              text: "[Schedule]\nName=bedtime\nWindow = 22:00 - 07:00\nDays=mon-fri\nSelections=social video\n",
              expected: Schedule(name: "bedtime", selections: ["social", "video"], days: .weekdays,
                                 start: WallTime(hour: 22, minute: 0), end: WallTime(hour: 7, minute: 0), origin: .config(file: sched))),
        Named(name: "a weekday range that wraps past Sunday, and repeated/reset Selections=",
              text: "[Schedule]\nName=w\nWindow=9:00-17:30\nDays=fri-mon\nSelections=a\nSelections=\nSelections=b c\nSelections=b\n",
              expected: Schedule(name: "w", selections: ["b", "c"], days: WeekdaySet([.fri, .sat, .sun, .mon]),
                                 start: WallTime(hour: 9, minute: 0), end: WallTime(hour: 17, minute: 30), origin: .config(file: sched))),
        Named(name: "an empty Days= means daily again",
              text: "[Schedule]\nName=w\nWindow=08:00-09:00\nDays=sat\nDays=\nSelections=a\n",
              expected: Schedule(name: "w", selections: ["a"], days: .all,
                                 start: WallTime(hour: 8, minute: 0), end: WallTime(hour: 9, minute: 0), origin: .config(file: sched))),
    ])
    func schedules(_ c: Named<Schedule>) throws {
        #expect(try ConfigFiles.parseSchedule(file: sched, text: c.text) == c.expected)
    }

    @Test("§7: a bad schedule file is an error naming file and line", arguments: [
        Named(name: "missing Window=", text: "\n[Schedule]\nName=bedtime\nSelections=social\n",
              expected: "\(sched):2: [Schedule] 'bedtime' has no Window=; add one, e.g. Window=22:00-07:00"),
        Named(name: "missing Name=", text: "[Schedule]\nWindow=22:00-07:00\nSelections=social\n",
              expected: "\(sched):1: [Schedule] has no Name=; add one, e.g. Name=bedtime"),
        Named(name: "missing Selections=", text: "[Schedule]\nName=b\nWindow=22:00-07:00\n",
              expected: "\(sched):1: [Schedule] 'b' has no Selections=; add the selections it blocks, e.g. Selections=social video, or Session=yes for allowed hours"),
        Named(name: "Window= without '-'", text: "[Schedule]\nName=b\nWindow=22:00\nSelections=social\n",
              expected: "\(sched):3: Window= must be two times of day joined by '-', such as 22:00-07:00, not '22:00'"),
        Named(name: "Window= 24:00 is refused", text: "[Schedule]\nName=b\nWindow=22:00-24:00\nSelections=social\n",
              expected: "\(sched):3: Window=: '24:00' is not a time of day; write HH:MM from 00:00 to 23:59, e.g. 22:00"),
        Named(name: "bad Days=", text: "[Schedule]\nName=b\nDays=mon-Xday\nWindow=22:00-07:00\nSelections=social\n",
              expected: "\(sched):3: Days=: 'mon-Xday' is not a set of days: 'Xday' is not a day; write e.g. mon,wed or mon-fri"),
        Named(name: "unknown key", text: "[Schedule]\nName=b\nLocked=yes\nWindow=22:00-07:00\nSelections=social\n",
              expected: "\(sched):3: unknown key Locked= in [Schedule]; valid keys are Name=, Window=, Days=, Selections=, Users=, Mode=, Session=, Action=, MoreTime=, Delay=, MoreTimePerDay=, RequestTimeout="),
        Named(name: "bad selection name", text: "[Schedule]\nName=b\nSelections=ok -bad\nWindow=22:00-07:00\n",
              expected: "\(sched):3: Selections=: '-bad' is not a valid selection name: use 1 to 255 letters, digits, '-', '_', '.' or '+', not starting with '-' or '.'"),
    ])
    func scheduleErrors(_ c: Named<String>) {
        #expect(message { () throws(CoreError) in _ = try ConfigFiles.parseSchedule(file: sched, text: c.text) } == c.expected)
    }
}
