import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
import BlockTestTools

/// §5: the control socket's directory and the socket get their modes from blockd, not from
/// the umask it was started under. Under `umask 077` a directory left to the umask is 0700,
/// and then no member of group blockd can reach the socket.
@Suite("§5: the control socket under a strict umask")
struct StrictUmaskTests {
    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    @Test("§5: started under umask 077, blockd creates the socket's directory 0755 and the socket 0660")
    func strictUmask() throws {
        let s = Sandbox()
        let socket = s.dir + "/run/s.sock"
        let p = try s.launch("/bin/sh", ["-c", "umask 077; exec \"$0\" \"$@\"", Repo.binDir + "/blockd"] + s.daemonArgs(socket: socket),
                             output: s.logPath)
        defer {
            kill(p.processIdentifier, SIGTERM)  // sh exec'd blockd: this is blockd
            p.waitUntilExit()
        }
        let serving = Run.eventually(timeout: 15) {
            p.isRunning && ((try? RawClient(path: socket).request("hello"))?.hasPrefix("OK ") ?? false)
        }
        #expect(serving, "blockd did not serve on \(socket); its log:\n\(s.log)")
        #expect(Self.mode(s.dir + "/run") == 0o755, "the socket's directory is \(String(Self.mode(s.dir + "/run"), radix: 8))")
        #expect(Self.mode(socket) == 0o660, "the socket is \(String(Self.mode(socket), radix: 8))")
    }
}
