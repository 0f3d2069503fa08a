import Foundation
import Glibc

/// Headless Chromium for tests that look at a page as a browser draws it (R2's HTML report):
/// a screenshot of a file, taken by a fresh Chromium with its own profile directory, which is
/// stopped on every path, whatever it left running.
enum Headless {
    static let chromium = "/usr/bin/chromium"

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes a `width`×`height` PNG of `html` (a file) to `png`. Chromium runs as root only
    /// without its sandbox (`--no-sandbox`), with a profile under `dir`, device scale 1 so a
    /// CSS pixel is a pixel of the picture.
    static func screenshot(_ html: String, to png: String, width: Int, height: Int, in dir: String,
                           timeout: Double = 60) throws {
        let profile = dir + "/chromium-profile"
        let argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
                    "--force-device-scale-factor=1", "--user-data-dir=" + profile,
                    "--window-size=\(width),\(height)", "--screenshot=" + png, "file://" + html]
        let log = dir + "/chromium.log"
        let status = try run(argv, log: log, timeout: timeout, marker: profile)
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        guard status == 0, FileManager.default.fileExists(atPath: png) else {
            throw Failure(description: "chromium \(status.map { "exited with status \($0)" } ?? "did not finish within \(Int(timeout)) s") and wrote no \(png): \(output.suffix(800))")
        }
        let left = survivors(marker: profile)
        guard left.isEmpty else { throw Failure(description: "chromium left processes running: \(left)") }
    }

    /// Runs `argv` in a process group of its own, stdout and stderr into `log`; waits at most
    /// `timeout` seconds. Whatever happens, the group is killed afterwards, and so is any
    /// process still naming `marker` in its command line (one that left the group). Nil: it
    /// timed out.
    static func run(_ argv: [String], log: String, timeout: Double, marker: String) throws -> Int32? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, cArgs, environ)
        guard spawned == 0 else { throw Failure(description: "\(argv[0]): \(String(cString: strerror(spawned)))") }
        var reaped = false
        defer {
            kill(-pid, SIGKILL)
            if !reaped { waitpid(pid, nil, 0) }
            for other in survivors(marker: marker) { kill(other, SIGKILL) }
            // A killed process keeps its command line until it has torn itself down, which
            // takes a moment on a loaded machine: wait (bounded) until none is left, so that
            // the caller's check sees what outlived the kill, not what is still dying.
            let gone = Date().addingTimeInterval(10)
            while !survivors(marker: marker).isEmpty && Date() < gone { usleep(20_000) }
        }
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while Date() < deadline {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                reaped = true
                return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            if r < 0 && errno != EINTR { throw Failure(description: "waitpid: \(String(cString: strerror(errno)))") }
            usleep(20_000)
        }
        return nil
    }

    /// Live processes whose command line contains `marker` (a zombie's is empty).
    static func survivors(marker: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), pid != getpid(),
                  let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
            return String(decoding: data, as: UTF8.self).contains(marker) ? pid : nil
        }
    }
}
