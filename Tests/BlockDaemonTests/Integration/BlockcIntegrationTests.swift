import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import ZoneInfo
import BlockTestTools

/// The real blockc against the real blockd, as a user would type it (§6).
@Suite("Integration: blockc against blockd", .serialized)
struct BlockcIntegrationTests {
    @Test("start, status, stop, and the exit statuses 0, 1, 2 and 3")
    func startStatusStop() throws {
        let s = Sandbox()
        try s.start()
        let start = try s.blockc(["start", "--minutes", "30", "instagram"])
        #expect(start.status == 0, "\(start.err)")
        #expect(start.out.hasPrefix("Blocked instagram until "))
        #expect(start.out.contains("(30m left)"))

        let status = try s.blockc(["status"])
        #expect(status.status == 0)
        #expect(status.out.contains("Blocked now"))
        #expect(status.out.contains("instagram"))
        #expect(status.out.contains("30m left") || status.out.contains("29m left"))
        #expect(!status.out.contains("\u{1B}["), "no colour when not a terminal")

        let json = try s.blockc(["status", "--json"])
        let object = try JSON.parse(json.out)
        #expect(object["blocked"]?[0]?["selection"] == "instagram")
        #expect(object["activities"]?[0]?["kind"] == "block")

        let stop = try s.blockc(["stop", "instagram"])
        #expect(stop.status == 0, "\(stop.err)")
        #expect(try s.blockc(["status"]).out.contains("Nothing is blocked."))

        let refused = try s.blockc(["start", "--minutes", "5", "instagarm"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("did you mean 'instagram'?"))
        let usage = try s.blockc(["start", "instagram"])
        #expect(usage.status == 2)
        s.stop()
        let unreachable = try s.blockc(["status"])
        #expect(unreachable.status == 3)
        #expect(unreachable.err.contains("no blockd at \(s.socket)"), "a sandbox's socket: \(unreachable.err)")
    }

    @Test("--lock blocks cannot be stopped; schedules list as arrays in --json")
    func lockAndSchedules() throws {
        let s = Sandbox()
        try s.start()
        #expect(try s.blockc(["start", "--for", "1h", "--lock", "--name", "study", "reddit", "youtube"]).status == 0)
        let stop = try s.blockc(["stop", "study"])
        #expect(stop.status == 1)
        #expect(stop.err.contains("--lock") && !stop.err.contains("(locked)"), "the message says it, no code appended: \(stop.err)")
        let json = try s.blockc(["more", "reddit", "5m", "--json"])
        #expect(json.status == 1 && (try? JSON.parse(json.out))?["error"]?["code"] == "locked", "--json gives scripts the code: \(json.out)")
        #expect(try s.blockc(["schedule", "add", "bedtime", "--daily", "22:00-07:00", "instagram", "reddit"]).status == 0)
        #expect(try s.blockc(["schedule", "add", "school", "--weekly", "mon-fri", "09:00-15:00", "youtube"]).status == 0)
        let list = try JSON.parse(try s.blockc(["schedule", "list", "--json"]).out)
        #expect(list.array?.map { $0["name"] } == ["bedtime", "school"])
        #expect(list[1]?["days"] == "mon-fri")
        #expect(try s.blockc(["schedule", "remove", "school"]).status == 0)
        let failures = try JSON.parse(try s.blockc(["failures", "--json"]).out)
        #expect(failures.array == [], "T4: the refused stop is the lock working, not a failure")
    }

    @Test("T3: --until HH:MM is the next occurrence, and ends the block there")
    func untilTime() throws {
        let s = Sandbox()
        try s.start()
        let result = try s.blockc(["start", "--until", "00:05", "--json", "instagram"])
        #expect(result.status == 0, "\(result.err)")
        let object = try JSON.parse(result.out)
        let end = try TimeText.parseISO8601WithOffset(try #require(object["end"]?.string))
        let clock = LocalClock(SystemTimeZone.named("Asia/Tokyo")!)
        #expect(clock.civil(of: end).secondsOfDay == 5 * 60)
        #expect(end > Date() && end <= Date().addingTimeInterval(86_400))
    }

    @Test("E1 end to end: a block puts its domains in the hosts file and its end restores every byte")
    func hostsEndToEnd() throws {
        let s = Sandbox()
        try s.start()
        let original = try #require(FileManager.default.contents(atPath: s.hostsPath))
        let start = try s.blockc(["start", "--for", "1s", "instagram"])
        #expect(start.status == 0, "\(start.err)")
        let blocked = Array(try #require(FileManager.default.contents(atPath: s.hostsPath)))
        #expect(HostsFile.blockedDomains(in: blocked).contains("www.instagram.com"))
        #expect(try s.blockc(["status"]).out.split(separator: "\n").contains { $0.hasPrefix("  websites ") && $0.contains(" hosts file \(s.hostsPath)") })
        #expect(Run.eventually { FileManager.default.contents(atPath: s.hostsPath) == original }, "log:\n\(s.log)")
    }

    @Test("E2 end to end: a blocked app cannot be launched, the denial is counted, and it runs again after the block", .enabled(if: Privileged.can(needs: []), Privileged.needsRoot))
    func appShieldEndToEnd() throws {
        if Privileged.unavailable(needs: []) != nil { return }
        let scratch = try ShieldScratch()
        let s = Sandbox()
        s.write("[Selection]\nName=testgame\nApps=\(scratch.app)\n", to: "etc/selections.d/testgame.conf")
        try s.start()
        let start = try s.blockc(["start", "--for", "2s", "testgame"])
        #expect(start.status == 0, "\(start.err)")
        #expect(try s.blockc(["status"]).out.split(separator: "\n").contains { $0.hasPrefix("  apps ") && $0.hasSuffix(" fanotify exec shield") })
        guard case .failure(let error) = scratch.spawn(scratch.app, ["0"]) else {
            Issue.record("the blocked app was launched")
            return
        }
        #expect(error.code == .EPERM)
        #expect(Run.eventually { (try? s.blockc(["stats", "--json"]).out.contains("testgame")) == true })
        #expect(s.log.contains("Denied launch of"))
        #expect(Run.eventually { scratch.runsToCompletion() }, "the app runs again once the block ends")
    }

    @Test("E4: enforcement stays when blockd stops; --release removes it, but not while a --lock block is active")
    func release() throws {
        let s = Sandbox()
        let original = try #require(FileManager.default.contents(atPath: s.hostsPath))
        try s.start()
        #expect(try s.blockc(["start", "--for", "1h", "reddit"]).status == 0)
        #expect(try s.blockc(["start", "--for", "1h", "--lock", "youtube"]).status == 0)
        s.stop()
        let afterStop = Array(try #require(FileManager.default.contents(atPath: s.hostsPath)))
        #expect(HostsFile.blockedDomains(in: afterStop).contains("reddit.com"), "stopping blockd is no escape")
        let refused = try s.launch(Repo.binDir + "/blockd", s.daemonArgs() + ["--release"], output: s.dir + "/release.log")
        refused.waitUntilExit()
        #expect(refused.terminationStatus == 1)
        #expect(try String(contentsOfFile: s.dir + "/release.log", encoding: .utf8).contains("refusing to release"))
        #expect(FileManager.default.contents(atPath: s.hostsPath) == Data(afterStop))
        // Once the locked block is gone (here: it ended), release works and restores every byte.
        try s.start()
        s.stop()
        var state = try String(contentsOfFile: s.stateDir + "/state.json", encoding: .utf8)
        state = state.replacingOccurrences(of: "\"locked\" : true", with: "\"locked\" : false")
        try state.write(toFile: s.stateDir + "/state.json", atomically: true, encoding: .utf8)
        let released = try s.launch(Repo.binDir + "/blockd", s.daemonArgs() + ["--release"], output: s.dir + "/release2.log")
        released.waitUntilExit()
        #expect(released.terminationStatus == 0, "\((try? String(contentsOfFile: s.dir + "/release2.log", encoding: .utf8)) ?? "")")
        #expect(FileManager.default.contents(atPath: s.hostsPath) == original)
    }

    @Test("§9 end to end: a 2-second daily limit stops a running test app and refuses it for the rest of the day", .enabled(if: Privileged.can(needs: []), Privileged.needsRoot))
    func limitEndToEnd() throws {
        if Privileged.unavailable(needs: []) != nil { return }
        let scratch = try ShieldScratch()
        let s = Sandbox()
        s.write("[Selection]\nName=testgame\nApps=\(scratch.app)\n", to: "etc/selections.d/testgame.conf")
        try s.start()
        let add = try s.blockc(["limit", "add", "play", "2s", "testgame"])
        #expect(add.status == 0, "\(add.err)")
        let pid = try scratch.spawn(scratch.app, ["30"]).get()
        // After two seconds of use the limit is reached: the app is stopped (SIGTERM) ...
        let status = scratch.wait(pid, timeout: 10)
        #expect(status.map(ShieldScratch.termSignal) == SIGTERM, "log:\n\(s.log)")
        // ... and refused from then on.
        guard case .failure(let error) = scratch.spawn(scratch.app, ["0"]) else {
            Issue.record("launched after the limit was reached")
            return
        }
        #expect(error.code == .EPERM)
        let list = try JSON.parse(try s.blockc(["limit", "list", "--json"]).out)
        #expect(list[0]?["active"] == true)
        #expect((list[0]?["used"]?.int ?? 0) >= 2)
        #expect(s.log.contains("Daily limit 'play' reached (2s of use)"))
        #expect(try s.blockc(["status"]).out.contains("play"))
    }
}

/// `make try` (scripts/try): a sandbox any user can run, which changes nothing on the machine.
@Suite("make try: blockd in a sandbox of its own")
struct TryTests {
    @Test("scripts/try prints the BLOCKD_SOCKET line; blockc pointed there blocks in the sandbox's hosts file, with every machine-wide effect off; /etc/hosts is untouched")
    func sandbox() throws {
        let dir = "/tmp/bd-try-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = FileManager.default.contents(atPath: "/etc/hosts")
        let processes = Processes()
        defer { processes.stopAll() }
        let log = dir + ".log"
        defer { unlink(log) }
        let child = try processes.launch(Repo.root + "/scripts/try", [Repo.binDir], environment: ["TRY_DIR": dir], output: log)
        let socket = dir + "/blockd.sock"
        #expect(Run.eventually(timeout: 20) { FileManager.default.fileExists(atPath: socket) }, "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(printed.contains("    export BLOCKD_SOCKET=\(socket)\n"), "\(printed)")
        let start = try Run.capture(Repo.binDir + "/blockc", ["start", "--minutes", "1", "instagram"], environment: ["BLOCKD_SOCKET": socket])
        #expect(start.status == 0, "\(start.output)")
        let status = try Run.capture(Repo.binDir + "/blockc", ["status", "--json"], environment: ["BLOCKD_SOCKET": socket])
        let o = try #require(try JSON.parse(status.output).object)
        #expect(o["enforcement"]?["hostsFile"] == .string(dir + "/hosts"))
        #expect(o["enforcement"]?["firewall"]?["enabled"] == .bool(false) && o["enforcement"]?["cutSockets"] == .bool(false))
        #expect(o["enforcement"]?["apps"] == "off")
        #expect(o["enforcement"]?["config"] == "files", "its own (empty) configuration directory, not /etc/blockd")
        #expect(HostsFile.blockedDomains(in: Array(FileManager.default.contents(atPath: dir + "/hosts") ?? Data())).contains("instagram.com"))
        #expect(FileManager.default.contents(atPath: "/etc/hosts") == before)
        child.stop()
        let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(said.contains("Blocked instagram") && !said.contains("<5>") && !said.contains("<6>"), "the log on the terminal, without journald's prefixes: \(said)")
    }
}
