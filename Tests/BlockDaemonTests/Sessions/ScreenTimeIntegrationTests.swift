import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// Screen time at blockd's edge: the real blockd follows a logind on a private system bus
/// (`DBUS_SYSTEM_BUS_ADDRESS`), a small Python one with logind's interface as blockd reads it
/// (ListSessions, each session's properties, SessionNew, SessionRemoved, PropertiesChanged),
/// driven the way a desktop and a login would drive the real one. What counts is proved on the
/// core (ScreenTimeTests); here, that the sessions reach it, by signal, and leave it.
@Suite("Screen time: blockd follows logind's sessions on the system bus")
struct ScreenTimeIntegrationTests {
    static let python = "/usr/bin/python3"
    static let dbusDaemon = "/usr/bin/dbus-daemon"
    static let busctl = "/usr/bin/busctl"

    static let missing: [String] = {
        var out = Privileged.missing([python, dbusDaemon, busctl])
        // Debian's dbus-python and PyGObject, for the fake logind.
        for (module, package) in [("dbus", "python3-dbus"), ("gi", "python3-gi")] where access("/usr/lib/python3/dist-packages/" + module, F_OK) != 0 {
            out.append(package)
        }
        return out
    }()

    static let fakeLogind = """
        import dbus, dbus.service, os, select, sys
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(sys.argv[1])
        IFACE, SESSION = "org.freedesktop.login1.Manager", "org.freedesktop.login1.Session"
        def path(sid): return "/org/freedesktop/login1/session/_3" + sid
        class Session(dbus.service.Object):
            def __init__(self, sid, uid, remote, cls):
                dbus.service.Object.__init__(self, bus, path(sid))
                self.props = {"Id": dbus.String(sid), "User": dbus.Struct((dbus.UInt32(uid), dbus.ObjectPath("/org/freedesktop/login1/user/_%d" % uid)), signature="uo"),
                              "Active": dbus.Boolean(True), "LockedHint": dbus.Boolean(False), "IdleHint": dbus.Boolean(False),
                              "IdleSinceHint": dbus.UInt64(0), "Remote": dbus.Boolean(remote), "Class": dbus.String(cls),
                              "Type": dbus.String("x11")}
                self.uid = uid
            @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
            def Get(self, iface, name):
                return self.props[name]
            @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
            def GetAll(self, iface):
                return self.props
            @dbus.service.signal(dbus.PROPERTIES_IFACE, signature="sa{sv}as")
            def PropertiesChanged(self, iface, changed, invalidated):
                pass
        sessions = {}
        inhibitors = []  # the read ends of the delay inhibitors handed out
        sleeping = [False]
        class Manager(dbus.service.Object):
            @dbus.service.method(IFACE, in_signature="ssss", out_signature="h")
            def Inhibit(self, what, who, why, mode):
                r, w = os.pipe()
                inhibitors.append(r)
                print("Inhibit %s %s" % (what, mode), flush=True)
                fd = dbus.types.UnixFd(w)
                os.close(w)
                return fd
            @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
            def Get(self, iface, name):
                if name == "PreparingForSleep": return dbus.Boolean(sleeping[0])
                raise dbus.exceptions.DBusException("org.freedesktop.DBus.Error.UnknownProperty")
            @dbus.service.signal(IFACE, signature="b")
            def PrepareForSleep(self, start): pass
            @dbus.service.method("org.blockd.Test", in_signature="b", out_signature="")
            def Sleep(self, start):
                sleeping[0] = bool(start)
                self.PrepareForSleep(start)
            @dbus.service.method("org.blockd.Test", in_signature="", out_signature="i")
            def Held(self):
                # Inhibitors still held: a read end whose write end is open is not readable.
                return sum(1 for r in inhibitors if not select.select([r], [], [], 0)[0])
            @dbus.service.method(IFACE, in_signature="", out_signature="a(susso)")
            def ListSessions(self):
                return [(sid, dbus.UInt32(s.uid), "u%d" % s.uid, "seat0", dbus.ObjectPath(path(sid))) for sid, s in sessions.items()]
            @dbus.service.signal(IFACE, signature="so")
            def SessionNew(self, sid, p): pass
            @dbus.service.signal(IFACE, signature="so")
            def SessionRemoved(self, sid, p): pass
            @dbus.service.method(IFACE, in_signature="s", out_signature="")
            def LockSession(self, sid):
                # As a desktop's locker answers the Lock signal: the session says it is locked.
                print("LockSession " + sid, flush=True)
                self.Set(sid, "LockedHint", True)
            @dbus.service.method(IFACE, in_signature="s", out_signature="")
            def TerminateSession(self, sid):
                print("TerminateSession " + sid, flush=True)
                self.Remove(sid)
            @dbus.service.method("org.blockd.Test", in_signature="subs", out_signature="")
            def Add(self, sid, uid, remote, cls):
                sessions[sid] = Session(sid, uid, remote, cls)
                self.SessionNew(sid, dbus.ObjectPath(path(sid)))
            @dbus.service.method("org.blockd.Test", in_signature="s", out_signature="")
            def Remove(self, sid):
                sessions.pop(sid).remove_from_connection()
                self.SessionRemoved(sid, dbus.ObjectPath(path(sid)))
            @dbus.service.method("org.blockd.Test", in_signature="ssb", out_signature="")
            def Set(self, sid, name, value):
                s = sessions[sid]
                s.props[name] = dbus.Boolean(value)
                changed = {name: s.props[name]}
                if name == "IdleHint":
                    s.props["IdleSinceHint"] = dbus.UInt64(int(GLib.get_real_time()) if value else 0)
                    changed["IdleSinceHint"] = s.props["IdleSinceHint"]
                s.PropertiesChanged(SESSION, changed, [])
        name = dbus.service.BusName("org.freedesktop.login1", bus)
        Manager(bus, "/org/freedesktop/login1")
        print("ready", flush=True)
        GLib.MainLoop().run()
        """

    /// A private bus with the fake logind on it, and the sandboxed blockd following it.
    final class Rig {
        let sandbox = Sandbox()
        var address: String { "unix:path=\(sandbox.dir)/system_bus" }
        var logind: Process?

        func startBus() throws {
            let config = """
                <busconfig><type>system</type><listen>\(address)</listen>
                <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
                """
            try config.write(toFile: sandbox.dir + "/bus.conf", atomically: true, encoding: .utf8)
            _ = try sandbox.launch(ScreenTimeIntegrationTests.dbusDaemon, ["--config-file=\(sandbox.dir)/bus.conf", "--nofork", "--nopidfile"],
                                   output: sandbox.dir + "/bus.log")
            guard Run.eventually(timeout: 10, { access(self.sandbox.dir + "/system_bus", F_OK) == 0 }) else {
                throw TestFailure("the private bus did not start: \(String(describing: try? String(contentsOfFile: self.sandbox.dir + "/bus.log", encoding: .utf8)))")
            }
        }

        var starts = 0

        func startLogind() throws {
            starts += 1
            let log = sandbox.dir + "/logind-\(starts).log"
            try ScreenTimeIntegrationTests.fakeLogind.write(toFile: sandbox.dir + "/logind.py", atomically: true, encoding: .utf8)
            logind = try sandbox.launch(ScreenTimeIntegrationTests.python, [sandbox.dir + "/logind.py", address], output: log)
            guard Run.eventually(timeout: 15, { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("ready") }) else {
                throw TestFailure("the fake logind did not start: \(String(describing: try? String(contentsOfFile: log, encoding: .utf8)))")
            }
        }

        /// A call on the fake logind's test interface, as busctl makes it.
        func call(_ method: String, _ signature: String, _ arguments: [String]) throws {
            let r = try Run.capture(ScreenTimeIntegrationTests.busctl, ["--address=\(address)", "call", "org.freedesktop.login1", "/org/freedesktop/login1",
                                                                       "org.blockd.Test", method, signature] + arguments)
            guard r.status == 0 else { throw TestFailure("busctl \(method): \(r.output)") }
        }

        /// The fake logind's `Held`: how many delay inhibitors blockd still holds.
        func held() throws -> Int {
            let r = try Run.capture(ScreenTimeIntegrationTests.busctl, ["--address=\(address)", "call", "org.freedesktop.login1", "/org/freedesktop/login1",
                                                                       "org.blockd.Test", "Held"])
            guard r.status == 0, let n = Int(r.output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") else {
                throw TestFailure("busctl Held: \(r.output)")
            }
            return n
        }

        /// Each person's screen seconds today, as `blockc report --json --all-users` says.
        func screen() throws -> [String: Int] {
            let r = try sandbox.blockc(["report", "--day", "today", "--all-users", "--json"])
            let o = try JSON.parse(r.out)
            var out: [String: Int] = [:]
            for (uid, seconds) in o["days"]?[0]?["screen"]?.object ?? [:] { out[uid] = seconds.int }
            return out
        }

        /// `uid`'s screen seconds once the change just made has reached blockd (`settle`), and
        /// again `wait` seconds later: what counting on would have added shows between the two.
        func screenOver(_ uid: String, settle: Double = 0.5, wait: Double = 2.5) throws -> (before: Int, after: Int) {
            if settle > 0 { Thread.sleep(forTimeInterval: settle) }
            let before = try screen()[uid] ?? 0
            Thread.sleep(forTimeInterval: wait)
            return (before, try screen()[uid] ?? 0)
        }

        /// The bus, the fake logind and blockd following it.
        func start() throws {
            try startBus()
            try startLogind()
            _ = try sandbox.start(extraArgs: ["--screen-time", "yes"], environment: ["DBUS_SYSTEM_BUS_ADDRESS": address])
        }

        func log() -> String { (try? String(contentsOfFile: sandbox.logPath, encoding: .utf8)) ?? "" }

        /// What blockd asked of the fake logind (its `LockSession c1` lines).
        func asked() -> [String] {
            let text = (try? String(contentsOfFile: sandbox.dir + "/logind-\(starts).log", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("LockSession") || $0.hasPrefix("TerminateSession") }
        }
    }

    @Test("screen time: an active session counts from the moment logind has it; a lock stops it at once (by signal); an ssh session and a greeter's count for nobody; a removed session stops; logind going away is said once, and its return is followed",
          .enabled(if: Privileged.required || ScreenTimeIntegrationTests.missing.isEmpty, Privileged.needsTools))
    func followsLogind() throws {
        if Privileged.report(Self.missing) != nil { return }  // recorded as an issue: it had to run
        let rig = Rig()
        try rig.start()
        try rig.call("Add", "subs", ["c1", "1001", "false", "user"])
        #expect(Run.eventually(timeout: 10) { ((try? rig.screen()) ?? [:])["1001"].map { $0 >= 2 } ?? false },
                "kid's active session counts: \(String(describing: try? rig.screen())) \(rig.log())")

        // A lock, as the screen locker sets LockedHint: the count stops at once, not at a poll.
        try rig.call("Set", "ssb", ["c1", "LockedHint", "true"])
        let (locked, later) = try rig.screenOver("1001")
        #expect(later <= locked + 1, "locked: no more time (\(locked) then \(later))")
        try rig.call("Set", "ssb", ["c1", "LockedHint", "false"])
        #expect(Run.eventually(timeout: 10) { ((try? rig.screen()) ?? [:])["1001"].map { $0 >= locked + 2 } ?? false }, "unlocked: it counts again")

        // An ssh login and a greeter are nobody at the screen; a new session is followed by its signal.
        try rig.call("Add", "subs", ["c2", "1002", "true", "user"])
        try rig.call("Add", "subs", ["c3", "1003", "false", "greeter"])
        try rig.call("Add", "subs", ["c4", "1004", "false", "user"])
        #expect(Run.eventually(timeout: 10) { ((try? rig.screen()) ?? [:])["1004"].map { $0 >= 1 } ?? false }, "a new local session counts")
        let now = try rig.screen()
        #expect(now["1002"] == nil && now["1003"] == nil, "ssh and the greeter count for nobody: \(now)")

        // A session removed stops counting.
        try rig.call("Remove", "s", ["c1"])
        let (removed, afterRemoved) = try rig.screenOver("1001")
        #expect(afterRemoved <= removed + 1, "logged out: no more time")

        // logind goes away: said once, nothing counts; it comes back: followed again.
        if let logind = rig.logind { kill(logind.processIdentifier, SIGKILL) }  // SIGTERM may be ignored, as inherited
        rig.logind?.waitUntilExit()
        #expect(Run.eventually(timeout: 10) { rig.log().contains("Screen time is not counted") }, "said in the journal: \(rig.log())")
        let (gone, afterGone) = try rig.screenOver("1004", settle: 0, wait: 2)
        #expect(afterGone <= gone + 1, "without logind nobody is taken to be at the screen")
        try rig.startLogind()
        try rig.call("Add", "subs", ["c5", "1004", "false", "user"])
        #expect(Run.eventually(timeout: 30) { rig.log().contains("Screen time is counted again") }, "followed again after the backoff: \(rig.log())")
        #expect(Run.eventually(timeout: 10) { ((try? rig.screen()) ?? [:])["1004"].map { $0 >= gone + 1 } ?? false }, "and counted")
        #expect(rig.log().components(separatedBy: "Screen time is not counted").count == 2, "said once, not at every retry")
    }

    @Test("screen time: blockd holds a delay inhibitor for sleep; at logind's PrepareForSleep it stops counting and lets go, so the machine may sleep; on resume it takes one again and counts again",
          .enabled(if: Privileged.required || ScreenTimeIntegrationTests.missing.isEmpty, Privileged.needsTools))
    func sleepStopsTheCount() throws {
        if Privileged.report(Self.missing) != nil { return }  // recorded as an issue: it had to run
        let rig = Rig()
        try rig.start()
        try rig.call("Add", "subs", ["c1", "1001", "false", "user"])
        #expect(Run.eventually(timeout: 10) { ((try? rig.screen()) ?? [:])["1001"].map { $0 >= 1 } ?? false }, "counting: \(rig.log())")
        #expect(Run.eventually(timeout: 10) { (try? rig.held()) == 1 }, "one delay inhibitor held while awake")
        try rig.call("Sleep", "b", ["true"])
        #expect(Run.eventually(timeout: 5) { (try? rig.held()) == 0 }, "let go at PrepareForSleep: the machine need not wait")
        let (asleep, later) = try rig.screenOver("1001")
        #expect(later <= asleep + 1, "asleep: nobody is at the screen (\(asleep) then \(later))")
        try rig.call("Sleep", "b", ["false"])
        #expect(Run.eventually(timeout: 5) { (try? rig.held()) == 1 }, "resumed: a new inhibitor")
        #expect(Run.eventually(timeout: 10) { ((try? rig.screen()) ?? [:])["1001"].map { $0 >= asleep + 2 } ?? false }, "resumed: it counts again")
    }

    @Test("screen time limit: 3 s at the screen, then blockd asks logind to lock the person's session (LockSession), once; unlocked the same day, locked again at once; the journal says why",
          .enabled(if: Privileged.required || ScreenTimeIntegrationTests.missing.isEmpty, Privileged.needsTools))
    func limitLocks() throws {
        if Privileged.report(Self.missing) != nil { return }  // recorded as an issue: it had to run
        let rig = Rig()
        try rig.start()
        let added = try rig.sandbox.blockc(["limit", "add", "screen", "3s", "--session"])
        #expect(added.status == 0 && added.out.contains("3s at the screen a day, then the sessions are locked"), "\(added.out)\(added.err)")
        try rig.call("Add", "subs", ["c1", "1001", "false", "user"])
        try rig.call("Add", "subs", ["c2", "1001", "true", "user"])  // ssh: not locked, not counted
        #expect(Run.eventually(timeout: 10) { rig.asked() == ["LockSession c1"] }, "locked once used up: \(rig.asked()) \(rig.log())")
        #expect(rig.log().contains("Screen time limit 'screen' is used up for #1001: locking their session (Action=lock)"), "\(rig.log())")
        Thread.sleep(forTimeInterval: 1.5)
        #expect(rig.asked() == ["LockSession c1"], "once while it stays locked")
        try rig.call("Set", "ssb", ["c1", "LockedHint", "false"])
        #expect(Run.eventually(timeout: 10) { rig.asked() == ["LockSession c1", "LockSession c1"] }, "unlocked while over: locked again: \(rig.asked())")
        let list = try rig.sandbox.blockc(["limit", "list"])
        #expect(list.out.contains("screen time, then lock"), "\(list.out)")
    }
}
