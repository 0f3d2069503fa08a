import BlockCore
import Foundation
import Testing

/// Issue 4's acceptance test: blockd on its default hosts path, /etc/hosts, inside a private
/// mount namespace where a scratch file is bind-mounted over /etc/hosts (so the machine's real
/// file is never touched, and the bind-mount write fallback is exercised). The resolver in that
/// namespace answers 0.0.0.0 for a blocked name during the block and what it answered before
/// after the unlock; the file outside the section is byte-identical.
@Suite("Integration: the real resolver in a private mount namespace", .serialized)
struct NamespaceTests {
    @Test("E1: getent answers 0.0.0.0 during `blockc start --for 3s instagram`, and as before after it")
    func getentDuringBlock() throws {
        if Privileged.unavailable(needs: ["/usr/bin/unshare", "/usr/bin/getent"]) != nil { return }
        let s = Sandbox()
        let scratch = s.dir + "/scratch-hosts"
        let original = Array((Sandbox.hostsTemplate + "\n# the user's comment, then no final newline").utf8)
        FileManager.default.createFile(atPath: scratch, contents: Data(original))
        let bin = Sandbox.binDir
        let script = """
            set -u
            # Never let blockd near the machine's real /etc/hosts: stop unless the bind mount
            # took effect and /etc/hosts is now the scratch file (same device and inode).
            mount --bind '\(scratch)' /etc/hosts || { echo "mount-failed"; exit 1; }
            [ "$(stat -c %d:%i /etc/hosts)" = "$(stat -c %d:%i '\(scratch)')" ] || { echo "mount-failed"; exit 1; }
            '\(bin)/blockd' --socket '\(s.socket)' --state-dir '\(s.stateDir)' --config-dir '\(s.configDir)' --policy-root '\(s.policyRoot)' --log-target console >>'\(s.logPath)' 2>&1 &
            for i in $(seq 300); do [ -S '\(s.socket)' ] && break; sleep 0.02; done
            export BLOCKD_SOCKET='\(s.socket)'
            echo "before4=$(getent ahostsv4 instagram.com | head -1)"
            echo "before=$(getent hosts instagram.com)"
            '\(bin)/blockc' start --for 3s instagram >/dev/null || echo "start-failed"
            echo "during4=$(getent ahostsv4 instagram.com | head -1)"
            echo "during=$(getent hosts www.instagram.com)"
            for i in $(seq 100); do
              '\(bin)/blockc' status | grep -q 'Nothing is blocked' && break
              sleep 0.1
            done
            echo "after4=$(getent ahostsv4 instagram.com | head -1)"
            echo "after=$(getent hosts instagram.com)"
            """
        s.write(script, to: "getent.sh")
        let p = try s.launch("/usr/bin/unshare", ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                                                  "/bin/sh", s.dir + "/getent.sh"], output: s.dir + "/getent.out")
        p.waitUntilExit()
        let out = try String(contentsOfFile: s.dir + "/getent.out", encoding: .utf8)
        var values: [String: String] = [:]
        for line in out.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq])] = String(line[line.index(after: eq)...]).trimmingCharacters(in: .whitespaces)
        }
        #expect(!out.contains("mount-failed"), "output:\n\(out)")
        #expect(!out.contains("start-failed"), "output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(values["during4"]?.hasPrefix("0.0.0.0 ") == true, "output:\n\(out)")
        let during = values["during"] ?? ""
        #expect(during.hasPrefix("0.0.0.0 ") || during.hasPrefix(":: ") || during.hasPrefix("::  "), "output:\n\(out)")
        #expect(values["after4"] == values["before4"], "output:\n\(out)")
        #expect(values["after"] == values["before"], "output:\n\(out)")
        #expect(Array(FileManager.default.contents(atPath: scratch) ?? Data()) == original, "byte-identical after the unlock")
        #expect(s.log.contains("writing it in place"), "the bind-mount fallback was used; log:\n\(s.log)")
    }
}
