import BlockCore
import Foundation
import Testing
import BlockTestSupport
import BlockTestTools

/// E7/E8 against the real binaries, with every policy path under the sandbox's `--policy-root`
/// (a fake installed Chromium and Firefox: their config directories exist there).
@Suite struct BrowserPolicyIntegrationTests {
    static let adminFirefox = #"{"policies": {"DisableTelemetry": true, "Homepage": {"URL": "https://intranet.example/"}}}"#

    func sandbox() throws -> (Sandbox, chromium: String, firefox: String) {
        let s = Sandbox()
        let fm = FileManager.default
        try fm.createDirectory(atPath: s.policyRoot + "/etc/chromium", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: s.policyRoot + "/etc/firefox/policies", withIntermediateDirectories: true)
        let firefox = s.policyRoot + "/etc/firefox/policies/policies.json"
        try Self.adminFirefox.write(toFile: firefox, atomically: true, encoding: .utf8)
        return (s, s.policyRoot + "/etc/chromium/policies/managed/blockd.json", firefox)
    }

    func json(_ path: String) throws -> JSON {
        let data = try #require(FileManager.default.contents(atPath: path))
        return try JSON.parse(bytes: Array(data))
    }

    @Test("E7/E8: start writes the Chromium policy (domains and prefixes, DoH off) and merges Firefox's; unlock removes it; --release restores Firefox")
    func lifecycle() throws {
        let (s, chromium, firefox) = try sandbox()
        try s.start()
        // Firefox: merged at start, the administrator's keys kept.
        #expect(Run.eventually { (try? json(firefox)["policies"]?["DNSOverHTTPS"]) == ["Enabled": false, "Locked": true] })
        #expect(try json(firefox)["policies"]?["Homepage"] == ["URL": "https://intranet.example/"])
        #expect(!FileManager.default.fileExists(atPath: chromium), "nothing blocked: no Chromium policy")

        #expect(try s.blockc(["start", "--for", "1h", "social.test/shorts", "reddit"]).status == 0)
        let policy = try json(chromium)
        let list = (policy["URLBlocklist"]?.array ?? []).compactMap { $0.string }
        #expect(list.contains("social.test/shorts") && list.contains("www.reddit.com"))
        #expect(policy["DnsOverHttpsMode"] == "off")
        // E8: the path-only selection puts nothing into the hosts file.
        let hosts = HostsFile.blockedDomains(in: Array(try #require(FileManager.default.contents(atPath: s.hostsPath))))
        #expect(hosts.contains("reddit.com") && !hosts.contains("social.test"))
        let status = try s.status()
        #expect(status["enforcement"]?["browserPolicies"]?["files"] == [.string(chromium)])
        #expect(status["enforcement"]?["pathRules"] == nil)
        let shown = try s.blockc(["status"]).out
        #expect(shown.contains("\n  browsers     policies for chromium, firefox ("), "\(shown)")
        // Atomic writes leave no temp files behind.
        let managed = (chromium as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: managed) == ["blockd.json"])

        #expect(try s.blockc(["stop", "social.test_shorts+reddit"]).status == 0)
        #expect(Run.eventually { !FileManager.default.fileExists(atPath: chromium) }, "nothing blocked any more: the policy goes")

        #expect(try s.blockc(["start", "--for", "1h", "instagram"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: chromium))
        s.stop()
        let released = try s.launch(Repo.binDir + "/blockd", s.daemonArgs() + ["--release"], output: s.dir + "/release.log")
        released.waitUntilExit()
        #expect(released.terminationStatus == 0, "\((try? String(contentsOfFile: s.dir + "/release.log", encoding: .utf8)) ?? "")")
        #expect(!FileManager.default.fileExists(atPath: chromium), "--release removes the Chromium policy")
        #expect(try json(firefox) == (try JSON.parse(Self.adminFirefox)), "--release leaves Firefox's file as the administrator wrote it")
    }

    @Test("W3: a block closes private windows and guest profiles in both files and status says so; the end opens them, the administrator's DisablePrivateBrowsing back")
    func privateWindows() throws {
        let (s, chromium, firefox) = try sandbox()
        let admin = #"{"policies": {"DisablePrivateBrowsing": false, "Homepage": {"URL": "https://intranet.example/"}}}"#
        try admin.write(toFile: firefox, atomically: true, encoding: .utf8)
        try s.start()
        #expect(Run.eventually { (try? json(firefox)["policies"]?["DNSOverHTTPS"]) != nil })
        #expect(try json(firefox)["policies"]?["DisablePrivateBrowsing"] == false, "nothing blocked: the administrator's value")
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["closed"] == [])
        #expect(!(try s.blockc(["status"]).out.contains("Closed while blocked")))
        // A per-user block leaves the machine-wide files alone (DNS blocks hold in a private window through the NSS module).
        #expect(try s.blockc(["start", "--for", "1h", "--user", "nobody", "reddit"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: chromium))
        #expect(try json(firefox)["policies"]?["DisablePrivateBrowsing"] == false)
        #expect(try s.blockc(["stop", "reddit"]).status == 0)

        #expect(try s.blockc(["start", "--for", "1h", "instagram"]).status == 0)
        let policy = try json(chromium)
        #expect(policy["IncognitoModeAvailability"] == 1 && policy["BrowserGuestModeEnabled"] == false && policy["BrowserAddPersonEnabled"] == false)
        #expect(try json(firefox)["policies"]?["DisablePrivateBrowsing"] == true)
        #expect(try json(firefox)["policies"]?["Homepage"] == ["URL": "https://intranet.example/"])
        let notes = try s.status()["enforcement"]?["browserPolicies"]
        #expect(notes?["closed"] == ["private windows", "guest profiles", "new profiles"])
        #expect(notes?["firefoxPrivateClosed"] == true)
        let shown = try s.blockc(["status"]).out
        #expect(shown.contains("Closed while blocked: private windows, guest profiles, new profiles (Firefox reads this when it starts"), "\(shown)")

        #expect(try s.blockc(["stop", "instagram"]).status == 0)
        #expect(Run.eventually { !FileManager.default.fileExists(atPath: chromium) })
        // T9: a loosening is written just after the unlock, Firefox's file after Chromium's.
        #expect(Run.eventually { (try? json(firefox)["policies"]?["DisablePrivateBrowsing"]) == false }, "lifted: the administrator's value back")
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["closed"] == [])

        #expect(try s.blockc(["start", "--for", "1h", "instagram"]).status == 0)
        #expect(try json(firefox)["policies"]?["DisablePrivateBrowsing"] == true)
        s.stop()
        let released = try s.launch(Repo.binDir + "/blockd", s.daemonArgs() + ["--release"], output: s.dir + "/release.log")
        released.waitUntilExit()
        #expect(released.terminationStatus == 0)
        #expect(try json(firefox) == (try JSON.parse(admin)), "--release during a block gives the administrator's file back")
    }

    @Test("W2: an allow-only window writes * and URLAllowlist, a block inside it stays blocked, a per-user window writes nothing; stop removes the file")
    func allowOnly() throws {
        let (s, chromium, _) = try sandbox()
        try s.start()
        let window = try s.blockc(["start", "--for", "10m", "only:school.test"])
        #expect(window.status == 0, "\(window.out)\(window.err)")
        var policy = try json(chromium)
        #expect(policy["URLBlocklist"] == ["*"])
        #expect(policy["URLAllowlist"] == ["chrome://*", "school.test"])
        #expect(policy["IncognitoModeAvailability"] == 1 && policy["DnsOverHttpsMode"] == "off")
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["allowOnly"] == ["school.test"])

        // A subdomain blocked inside the window: blocked beside the allowed site (Chromium's longer host wins).
        #expect(try s.blockc(["start", "--for", "10m", "games.school.test"]).status == 0)
        policy = try json(chromium)
        #expect(policy["URLBlocklist"] == ["*", "games.school.test"])
        #expect(policy["URLAllowlist"] == ["chrome://*", "school.test"])
        // The allowed site itself blocked: not allowed at all while both hold.
        #expect(try s.blockc(["start", "--for", "10m", "school.test"]).status == 0)
        policy = try json(chromium)
        #expect(policy["URLBlocklist"] == ["*", "games.school.test", "school.test"])
        #expect(policy["URLAllowlist"] == ["chrome://*"])
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["allowOnly"] == [])
        #expect(try s.blockc(["stop", "school.test"]).status == 0)
        #expect(try s.blockc(["stop", "games.school.test"]).status == 0)
        #expect(Run.eventually { (try? json(chromium)["URLAllowlist"]) == ["chrome://*", "school.test"] })

        // A second window at once: only what both allow.
        #expect(try s.blockc(["start", "--for", "10m", "only:school.test/class,wiki.test"]).status == 0)
        policy = try json(chromium)
        #expect(policy["URLAllowlist"] == ["chrome://*", "school.test/class"])
        #expect(try s.blockc(["stop", Names.blockName(for: ["only:school.test/class,wiki.test"])]).status == 0)

        #expect(try s.blockc(["stop", Names.blockName(for: ["only:school.test"])]).status == 0)
        #expect(Run.eventually { !FileManager.default.fileExists(atPath: chromium) }, "the window ends: the policy goes")
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["allowOnly"] == nil)

        // A per-user window: Chromium reads machine-wide policies only, so no file.
        #expect(try s.blockc(["start", "--for", "10m", "--user", "nobody", "only:school.test"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: chromium))
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["allowOnly"] == nil)
    }

    @Test("E8: status says when a URL prefix is not enforced because no supported browser is installed; BrowserPolicies=no writes nothing")
    func noBrowser() throws {
        let s = Sandbox()
        try s.start()
        // §7 "Truth": a prefix no browser enforces is accepted but not enforced (exit 1).
        let started = try s.blockc(["start", "--for", "1h", "social.test/shorts"])
        #expect(started.status == 1)
        #expect((started.out + started.err).contains("accepted, but not enforced") && (started.out + started.err).contains("no supported browser"), "\(started.out)\(started.err)")
        let status = try s.status()
        #expect(status["enforcement"]?["notEnforced"]?[0]?["selection"] == "social.test/shorts")
        #expect(status["enforcement"]?["browsersReason"] == "no supported browser is installed")
        #expect(status["enforcement"]?["pathRules"]?.string?.contains("social.test/shorts") == true)
        #expect(try s.blockc(["status"]).out.contains("are not enforced: no supported Chromium-family browser is installed"))
        s.stop()

        let (off, chromium, firefox) = try sandbox()
        try off.start(extraArgs: ["--browser-policies", "no"])
        #expect(try off.blockc(["start", "--for", "1h", "reddit"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: chromium))
        #expect(FileManager.default.contents(atPath: firefox) == Data(Self.adminFirefox.utf8))
        #expect(try off.status()["enforcement"]?["browsersReason"]?.string?.contains("turned off") == true)
        // With the policies off nothing enforces a URL prefix: accepted, but not enforced.
        let prefix = try off.blockc(["start", "--for", "1h", "social.test/shorts"])
        #expect(prefix.status == 1 && (prefix.out + prefix.err).contains("turned off"), "\(prefix.out)\(prefix.err)")
        #expect(try off.status()["enforcement"]?["applied"] == ["reddit"])
    }

    /// B1: an installed extension's directory, as `make install` leaves it (the package itself
    /// is not read by blockd: only its ID and the host's manifest).
    static func extensionDirectory(_ s: Sandbox, id: String = String(repeating: "abcdefghijklmnop", count: 2)) throws -> String {
        let dir = s.dir + "/share/blockd/browser"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try (id + "\n").write(toFile: dir + "/chromium-id", atomically: true, encoding: .utf8)
        let host = #"{"name": "com.blockd.host", "description": "blockd", "path": "/usr/libexec/blockd/blockd-nm-host", "type": "stdio", "#
            + #""allowed_origins": ["chrome-extension://\#(id)/"]}"#
        try host.write(toFile: dir + "/chromium-host.json", atomically: true, encoding: .utf8)
        return dir
    }

    @Test("B1: with the extension installed, blockd force-installs it in Chromium and Firefox whether or not anything is blocked, registers its host, and --release takes all of it out")
    func browserExtension() throws {
        let (s, chromium, firefox) = try sandbox()
        let dir = try Self.extensionDirectory(s)
        let id = String(repeating: "abcdefghijklmnop", count: 2)
        s.write("[Daemon]\nBrowserExtension=\(dir)\n", to: "etc/blockd.conf")
        try s.start()
        let policy = s.policyRoot + "/etc/chromium/policies/managed/blockd-extension.json"
        let host = s.policyRoot + "/etc/chromium/native-messaging-hosts/com.blockd.host.json"
        #expect(Run.eventually { FileManager.default.fileExists(atPath: policy) }, "nothing blocked, and still installed: web time counts anyway")
        let settings = try json(policy)
        #expect(settings["ExtensionSettings"]?[id]?["installation_mode"] == "force_installed")
        #expect(settings["ExtensionSettings"]?[id]?["update_url"] == .string("file://\(dir)/updates.xml"))
        #expect(settings["NativeMessagingAllowlist"] == ["com.blockd.host"])
        #expect(try json(host)["allowed_origins"] == [.string("chrome-extension://\(id)/")])
        #expect(!FileManager.default.fileExists(atPath: chromium))
        let ff = try json(firefox)["policies"]
        #expect(ff?["ExtensionSettings"]?["blockd@blockd.local"]?["install_url"] == .string("file://\(dir)/blockd.xpi"))
        #expect(ff?["ExtensionSettings"]?["blockd@blockd.local"]?["private_browsing"] == true)
        #expect(ff?["Preferences"]?["xpinstall.signatures.required"] == ["Value": false, "Status": "locked"])
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["extension"]?["chromiumID"] == .string(id))
        #expect(try s.blockc(["status"]).out.contains("blockd's extension is installed in them"))
        // A block adds blockd.json; its end removes it and leaves the extension.
        #expect(try s.blockc(["start", "--for", "1h", "reddit"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: chromium))
        #expect(try s.blockc(["stop", "reddit"]).status == 0)
        #expect(Run.eventually { !FileManager.default.fileExists(atPath: chromium) })
        #expect(FileManager.default.fileExists(atPath: policy) && FileManager.default.fileExists(atPath: host))
        s.stop()
        let released = try s.launch(Repo.binDir + "/blockd", s.daemonArgs() + ["--release"], output: s.dir + "/release.log")
        released.waitUntilExit()
        #expect(released.terminationStatus == 0, "\((try? String(contentsOfFile: s.dir + "/release.log", encoding: .utf8)) ?? "")")
        #expect(!FileManager.default.fileExists(atPath: policy) && !FileManager.default.fileExists(atPath: host))
        #expect(try json(firefox) == (try JSON.parse(Self.adminFirefox)), "--release leaves Firefox's file as the administrator wrote it")
    }

    @Test("B1: BrowserExtension=no, or a directory without the extension, installs nothing and status says why")
    func browserExtensionOff() throws {
        let (s, _, firefox) = try sandbox()
        s.write("[Daemon]\nBrowserExtension=no\n", to: "etc/blockd.conf")
        try s.start()
        #expect(Run.eventually { (try? json(firefox)["policies"]?["DNSOverHTTPS"]) != nil })
        #expect(try json(firefox)["policies"]?["ExtensionSettings"] == nil)
        #expect(!FileManager.default.fileExists(atPath: s.policyRoot + "/etc/chromium/policies/managed/blockd-extension.json"))
        #expect(try s.status()["enforcement"]?["browserPolicies"]?["extensionReason"] == "turned off (BrowserExtension=no)")
        #expect(try s.blockc(["status"]).out.contains("blockd's extension: turned off (BrowserExtension=no)"))
        s.stop()
        let (t, _, _) = try sandbox()
        t.write("[Daemon]\nBrowserExtension=\(t.dir)/nowhere\n", to: "etc/blockd.conf")
        try t.start()
        #expect(try t.status()["enforcement"]?["browserPolicies"]?["extensionReason"]?.string?.hasPrefix("not installed (no \(t.dir)/nowhere/chromium-id") == true)
    }
}

