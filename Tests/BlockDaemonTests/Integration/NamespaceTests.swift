import BlockCore
import Foundation
import Testing
import BlockTestSupport
import BlockTestTools

/// blockd on its default hosts path, /etc/hosts, inside a private
/// mount namespace where a scratch file is bind-mounted over /etc/hosts (so the machine's real
/// file is never touched, and the bind-mount write fallback is exercised). The resolver in that
/// namespace answers 0.0.0.0 for a blocked name during the block and what it answered before
/// after the unlock; the file outside the section is byte-identical.
@Suite("Integration: the real resolver in a private mount namespace", .serialized)
struct NamespaceTests {
    @Test("E1: getent answers 0.0.0.0 during `blockc start --for 3s instagram`, and as before after it", .enabled(if: Privileged.can(needs: ["/usr/bin/unshare", "/usr/bin/getent"]), Privileged.needsRoot))
    func getentDuringBlock() throws {
        if Privileged.unavailable(needs: ["/usr/bin/unshare", "/usr/bin/getent"]) != nil { return }
        let s = Sandbox()
        let scratch = s.dir + "/scratch-hosts"
        let original = Array((Sandbox.hostsTemplate + "\n# the user's comment, then no final newline").utf8)
        _ = FileManager.default.createFile(atPath: scratch, contents: Data(original))
        let bin = Repo.binDir
        let (out, values) = try NamespaceTests.run(s, scratch: scratch, steps: """
            echo "before4=$(getent ahostsv4 instagram.com | head -1)"
            echo "before=$(getent hosts instagram.com)"
            '\(bin)/blockc' start --for 3s instagram >/dev/null || echo "start-failed"
            echo "during4=$(getent ahostsv4 instagram.com | head -1)"
            echo "during=$(getent hosts www.instagram.com)"
            \(NamespaceTests.waitForUnlock)
            echo "after4=$(getent ahostsv4 instagram.com | head -1)"
            echo "after=$(getent hosts instagram.com)"
            """)
        #expect(!out.contains("mount-failed"), "output:\n\(out)")
        #expect(!out.contains("start-failed"), "output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(values["during4"]?.hasPrefix("0.0.0.0 ") == true, "output:\n\(out)")
        let during = values["during"] ?? ""
        #expect(during.hasPrefix("0.0.0.0 ") || during.hasPrefix(":: ") || during.hasPrefix("::  "), "output:\n\(out)")
        #expect(values["after4"] == values["before4"], "output:\n\(out)")
        #expect(values["waited"] == "unlocked", "the unlock landed within 10 s; output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(values["after"] == values["before"], "output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(Array(FileManager.default.contents(atPath: scratch) ?? Data()) == original, "byte-identical after the unlock")
        #expect(s.log.contains("writing it in place"), "the bind-mount fallback was used; log:\n\(s.log)")
    }

    @Test("E6: a user's own line and one appended during the block give a blocked name no address, and come back byte for byte", .enabled(if: Privileged.can(needs: ["/usr/bin/unshare", "/usr/bin/getent"]), Privileged.needsRoot))
    func overrideLines() throws {
        if Privileged.unavailable(needs: ["/usr/bin/unshare", "/usr/bin/getent"]) != nil { return }
        let s = Sandbox()
        let scratch = s.dir + "/scratch-hosts"
        let original = Array((Sandbox.hostsTemplate + "\n203.0.113.9\tinstagram.com nas2 # the user's own, older line\r\n").utf8)
        _ = FileManager.default.createFile(atPath: scratch, contents: Data(original))
        let appended = Array("203.0.113.7 instagram.com\n".utf8)
        let bin = Repo.binDir
        let (out, values) = try NamespaceTests.run(s, scratch: scratch, steps: """
            echo "before=$(getent ahostsv4 instagram.com | awk '{print $1}' | sort -u | tr '\\n' ' ')"
            '\(bin)/blockc' start --for 4s instagram >/dev/null || echo "start-failed"
            echo "during=$(getent ahostsv4 instagram.com | awk '{print $1}' | sort -u | tr '\\n' ' ')"
            echo "kept=$(getent ahostsv4 nas2 | awk '{print $1}' | sort -u | tr '\\n' ' ')"
            printf '203.0.113.7 instagram.com\\n' >> /etc/hosts
            sleep 1.5
            echo "appended=$(getent ahostsv4 instagram.com | awk '{print $1}' | sort -u | tr '\\n' ' ')"
            echo "failures=$('\(bin)/blockc' failures | grep -c tamper)"
            \(NamespaceTests.waitForUnlock)
            echo "after=$(getent ahostsv4 instagram.com | awk '{print $1}' | sort -u | tr '\\n' ' ')"
            """)
        #expect(!out.contains("mount-failed") && !out.contains("start-failed"), "output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(values["before"] == "203.0.113.9", "output:\n\(out)")
        #expect(values["during"].map { !$0.contains("203.0.113.9") && !$0.isEmpty } == true, "the older line still answers; output:\n\(out)")
        #expect(values["kept"] == "203.0.113.9", "other names on the held line keep resolving; output:\n\(out)")
        #expect(values["appended"].map { !$0.contains("203.0.113.7") && !$0.contains("203.0.113.9") } == true,
                "an appended override is undone within a second; output:\n\(out)\nlog:\n\(s.log)")
        #expect(values["failures"].flatMap { Int($0) }.map { $0 >= 1 } == true, "recorded as tamper; output:\n\(out)")
        #expect(values["waited"] == "unlocked", "the unlock landed within 10 s; output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(values["after"] == "203.0.113.7 203.0.113.9", "output:\n\(out)\nblockd log:\n\(s.log)")
        #expect(Array(FileManager.default.contents(atPath: scratch) ?? Data()) == original + appended,
                "the user's lines are back byte for byte after the unlock")
    }

    /// Polls until nothing is blocked and no unlock is still pending (at most 10 s); prints
    /// `waited=unlocked` or `waited=timeout` and the last status.
    static let waitForUnlock = """
        waited=timeout
        for i in $(seq 100); do
          now=$('\(Repo.binDir)/blockc' status 2>&1)
          if printf '%s\\n' "$now" | grep -q 'Nothing is blocked' && ! printf '%s\\n' "$now" | grep -q 'unblock pending'; then waited=unlocked; break; fi
          sleep 0.1
        done
        echo "waited=$waited"
        printf '%s\\n' "$now" | sed 's/^/  status: /'
        """

    /// Runs `steps` in a private mount and PID namespace in which `scratch` is bind-mounted over
    /// /etc/hosts and a sandboxed blockd runs on that default path; returns the output and its
    /// `key=value` lines.
    static func run(_ s: Sandbox, scratch: String, steps: String) throws -> (String, [String: String]) {
        let bin = Repo.binDir
        let script = """
            set -u
            # Never let blockd near the machine's real /etc/hosts: stop unless the bind mount
            # took effect and /etc/hosts is now the scratch file (same device and inode).
            mount --bind '\(scratch)' /etc/hosts || { echo "mount-failed"; exit 1; }
            [ "$(stat -c %d:%i /etc/hosts)" = "$(stat -c %d:%i '\(scratch)')" ] || { echo "mount-failed"; exit 1; }
            '\(bin)/blockd' --socket '\(s.socket)' --state-dir '\(s.stateDir)' --config-dir '\(s.configDir)' --policy-root '\(s.policyRoot)' --log-target console --firewall no --cut-sockets no >>'\(s.logPath)' 2>&1 &
            for i in $(seq 300); do [ -S '\(s.socket)' ] && break; sleep 0.02; done
            export BLOCKD_SOCKET='\(s.socket)'
            \(steps)
            """
        s.write(script, to: "ns.sh")
        // posix_spawn and waitpid, not Foundation's Process: its wait can miss the exit of a
        // child whose descendants inherited its watch socket, and then never returns.
        let p = try Child("/usr/bin/unshare", ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                                              "/bin/sh", s.dir + "/ns.sh"], environment: ProcessInfo.processInfo.environment,
                          output: s.dir + "/ns.out")
        defer { p.stop() }
        guard Run.eventually(timeout: 120, every: 0.01, { !p.isRunning }) else {
            throw TestFailure("the namespace script did not finish within 120 s; its output is in \(s.dir)/ns.out")
        }
        let out = try String(contentsOfFile: s.dir + "/ns.out", encoding: .utf8)
        var values: [String: String] = [:]
        for line in out.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            values[String(line[..<eq])] = String(line[line.index(after: eq)...]).trimmingCharacters(in: .whitespaces)
        }
        return (out, values)
    }
}
