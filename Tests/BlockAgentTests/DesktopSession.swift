import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestTools

/// Tests that need real desktop programs are declared with `.enabled(if: Desktop.can(...),
/// Desktop.needsPrograms)`, as `Privileged` declares tools: where BLOCKD_PRIVILEGED_TESTS=1 (CI,
/// `make check`, which installs them) they always run and fail if they cannot; elsewhere they
/// are skipped with the reason when the programs are missing. Root is not needed: everything
/// runs on a private bus in a temp dir.
enum Desktop {
    static let dbusDaemon = "/usr/bin/dbus-daemon", busctl = "/usr/bin/busctl", dbusSend = "/usr/bin/dbus-send"
    static let xvfb = "/usr/bin/Xvfb", dunst = "/usr/bin/dunst", dunstctl = "/usr/bin/dunstctl"
    static let python = "/usr/bin/python3"
    static let needsPrograms: Comment = "needs desktop programs that scripts/deps installs; runs (and fails without them) with BLOCKD_PRIVILEGED_TESTS=1"

    /// The condition of a test that needs `tools`: true when it must run or can.
    static func can(needs tools: [String], pythonDBus: Bool = false) -> Bool {
        Privileged.required || missing(tools, pythonDBus: pythonDBus).isEmpty
    }

    /// `Privileged.missing`, and the Python modules of the fake notification server.
    static func missing(_ tools: [String], pythonDBus: Bool) -> [String] {
        var missing = Privileged.missing(tools)
        if pythonDBus, missing.isEmpty,
           (try? Run.capture(python, ["-c", "import dbus, dbus.service; from gi.repository import GLib"]).status) != 0 {
            missing.append("python3-dbus and python3-gi")
        }
        return missing
    }

    /// Nil when the test can run; otherwise why not, recorded as an issue (the test was enabled
    /// because BLOCKD_PRIVILEGED_TESTS=1 says it must run).
    static func unavailable(needs tools: [String], pythonDBus: Bool = false) -> String? {
        Privileged.report(missing(tools, pythonDBus: pythonDBus))
    }
}

/// Xvfb on a display of its own (it prints the number once it listens, `-displayfd`); stopped
/// with `processes`.
enum Xvfb {
    /// The display, `:N`, and the pipe's read end, to keep open while Xvfb runs (what it
    /// writes there later must not kill it with SIGPIPE). The number is a random one from 100 up,
    /// not the first free one: a test's server that is still shutting down removes its socket
    /// file, and a new server that took the same number at once became unreachable ("Can't open
    /// display: :0"). A number that is taken makes Xvfb exit, and another is tried.
    /// `-noreset`: an X server resets when its last client disconnects, dropping the root
    /// window's properties and, while it resets, the clients that connect (a test's `xprop -set`
    /// exits, and the `xmessage` started right after got "Can't open display" in CI).
    static func start(_ processes: Processes, log: String) throws -> (display: String, pipe: Int32) {
        var failure: Error?
        for _ in 0..<5 {
            let number = Int.random(in: 100..<30_000)
            guard access("/tmp/.X\(number)-lock", F_OK) != 0 else { continue }
            do { return try start(processes, number: number, log: log) } catch { failure = error }
        }
        throw failure ?? TestFailure("Xvfb did not start: no free display number found")
    }

    static func start(_ processes: Processes, number: Int, log: String) throws -> (display: String, pipe: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TestFailure("pipe: \(String(cString: strerror(errno)))") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)  // dup2 onto fd 1 clears it in the child
        let launched = Result {
            try processes.launch(Desktop.xvfb, [":\(number)", "-displayfd", "1", "-nolisten", "tcp", "-noreset", "-screen", "0", "640x480x24"],
                                 output: log, stdoutFD: fds[1])
        }
        close(fds[1])  // the write end is Xvfb's now: EOF when it dies
        _ = try launched.get()
        var number = ""
        var byte: UInt8 = 0
        while !number.hasSuffix("\n") {
            guard Glibc.read(fds[0], &byte, 1) == 1 else {
                close(fds[0])
                throw TestFailure("Xvfb did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
            number += String(decoding: [byte], as: UTF8.self)
        }
        return (":" + number.trimmingCharacters(in: .whitespacesAndNewlines), fds[0])
    }
}

/// A private session: its own dbus-daemon (own config, no service activation, so "no
/// server" really is none), optionally Xvfb + dunst as the notification server, and a
/// `busctl monitor` recording every Notify call as JSON.
final class DesktopSession: @unchecked Sendable {
    private let temp: TempDir
    var dir: String { temp.path }
    let processes = Processes()
    var address: String { "unix:path=\(dir)/bus" }
    /// The session's bus, and its own state directory (the agent's weekly summary, R3, writes
    /// there and never in the real home).
    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address, "XDG_STATE_HOME": dir + "/state-home"] }
    private var display: String?
    private var descriptors: [Int32] = []

    init() throws {
        temp = try TempDir(prefix: "ba-")
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(dir)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: dir + "/bus.conf", atomically: true, encoding: .utf8)
        try processes.launch(Desktop.dbusDaemon, ["--config-file=\(dir)/bus.conf", "--nofork", "--nopidfile"], output: dir + "/dbus.log")
        guard Run.eventually(timeout: 5, { FileManager.default.fileExists(atPath: dir + "/bus") }) else {
            throw TestFailure("dbus-daemon did not start: \(read("dbus.log"))")
        }
        // Every Notify call, as sent, for the assertions on replaces_id and actions.
        try processes.launch(Desktop.busctl, ["--address=\(address)", "monitor", "--json=short",
                                              "--match=type='method_call',interface='org.freedesktop.Notifications',member='Notify'"],
                             output: dir + "/monitor.err", stdoutFD: try file(dir + "/monitor.json"))
        guard Run.eventually(timeout: 5, { read("monitor.err").contains("Monitoring") }) else {
            throw TestFailure("busctl monitor did not start: \(read("monitor.err"))")
        }
    }

    deinit {
        processes.stopAll()
        descriptors.forEach { close($0) }
    }

    /// busctl monitor writes each message as it arrives, so a plain file will do.
    private func file(_ path: String) throws -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot create \(path)") }
        descriptors.append(fd)
        return fd
    }

    func read(_ name: String) -> String {
        (try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? ""
    }

    /// Writes through a close-on-exec descriptor and renames into place: a descriptor without
    /// it (Foundation's atomic write) is inherited by whatever this test process spawns
    /// meanwhile, and exec of the script then fails with ETXTBSY for as long as that lives.
    func write(_ text: String, to name: String, mode: Int = 0o644) throws {
        let path = dir + "/" + name, temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode_t(mode))
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, mode_t(mode))
        close(fd)
        guard written == bytes.count, rename(temp, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// The notification server's name has an owner.
    func serverRunning() -> Bool {
        let r = try? Run.capture(Desktop.busctl, ["--address=\(address)", "call", "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                   "org.freedesktop.DBus", "NameHasOwner", "s", "org.freedesktop.Notifications"])
        return r?.output.hasPrefix("b true") ?? false
    }

    /// Xvfb on a free display (it prints the number it took) and dunst on this bus.
    /// `config`: more `[global]` lines (M4: a stand-in `dmenu` for dunst's context menu).
    func startDunst(config: String = "") throws {
        let x = try Xvfb.start(processes, log: dir + "/xvfb.log")
        (display, descriptors) = (x.display, descriptors + [x.pipe])
        // Notifications stay until closed, so the counts below do not race a timeout.
        try write("[global]\n    timeout = 0\n" + config, to: "dunstrc")
        try processes.launch(Desktop.dunst, ["-config", dir + "/dunstrc"], environment: environment.merging(["DISPLAY": display!]) { $1 },
                             output: dir + "/dunst.log")
        guard Run.eventually(timeout: 10, serverRunning) else { throw TestFailure("dunst did not take the bus name: \(read("dunst.log"))") }
    }

    /// A notification server without the `actions` capability, which records each Notify
    /// (Python with Debian's dbus-python: dunst cannot be told to drop the capability).
    /// `delay` makes it slow, for the S3 drain test.
    func startServerWithoutActions(delay: Double = 0) throws {
        let script = """
            import dbus, dbus.service, json, sys, time
            from dbus.mainloop.glib import DBusGMainLoop
            from gi.repository import GLib
            DBusGMainLoop(set_as_default=True)
            bus = dbus.bus.BusConnection(sys.argv[1])
            class Server(dbus.service.Object):
                next_id = 1
                @dbus.service.method("org.freedesktop.Notifications", in_signature="", out_signature="as")
                def GetCapabilities(self):
                    return ["body"]
                @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
                def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
                    time.sleep(\(delay))
                    nid = replaces or Server.next_id
                    Server.next_id += 0 if replaces else 1
                    with open(sys.argv[2], "a") as f:
                        f.write(json.dumps({"id": int(nid), "summary": str(summary), "body": str(body),
                                            "actions": [str(a) for a in actions]}) + "\\n")
                    return nid
            name = dbus.service.BusName("org.freedesktop.Notifications", bus)
            Server(bus, "/org/freedesktop/Notifications")
            GLib.MainLoop().run()
            """
        try write(script, to: "server.py")
        try processes.launch(Desktop.python, [dir + "/server.py", address, dir + "/server.jsonl"], output: dir + "/server.log")
        guard Run.eventually(timeout: 10, serverRunning) else { throw TestFailure("the fake server did not start: \(read("server.log"))") }
    }

    /// The fake server's record of Notify calls.
    func serverCalls() -> [JSONObject] {
        read("server.jsonl").split(separator: "\n").compactMap { try? JSON.parse(String($0)).object }
    }

    /// Every Notify call seen on the bus: `(sender, [app, replaces_id, icon, summary, body,
    /// actions, hints, timeout])`.
    func notifyCalls() -> [(sender: String, args: [JSON])] {
        read("monitor.json").split(separator: "\n").compactMap { line in
            guard let o = try? JSON.parse(String(line)).object, let args = o["payload"]?["data"]?.array else { return nil }
            return (o["sender"]?.string ?? "", args)
        }
    }

    func dunstctl(_ arguments: [String]) throws -> String {
        let r = try Run.capture(Desktop.dunstctl, arguments, environment: environment)
        guard r.status == 0 else { throw TestFailure("dunstctl \(arguments.joined(separator: " ")) failed: \(r.output)") }
        return r.output
    }

    /// `dunstctl history`: each entry's fields as plain values (dunst wraps them in {type, data}).
    func dunstHistory() throws -> [[String: JSON]] {
        let o = try JSON.parse(try dunstctl(["history"]))
        let entries = o["data"]?[0]?.array ?? []
        return entries.compactMap { entry in
            guard let fields = entry.object else { return nil }
            var out: [String: JSON] = [:]
            for (k, v) in fields { out[k] = v["data"] }
            return out
        }
    }
}
