import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockDaemon

/// Privileged tests are declared with `.enabled(if: Privileged.can(...), Privileged.needsRoot)`:
/// where BLOCKD_PRIVILEGED_TESTS=1 (CI, as root) they always run, and fail if what they need is
/// missing; elsewhere they run when they can and are reported as skipped, with the reason, when
/// they cannot.
enum Privileged {
    static var required: Bool { ProcessInfo.processInfo.environment["BLOCKD_PRIVILEGED_TESTS"] == "1" }
    static var isRoot: Bool { geteuid() == 0 }
    static let needsRoot: Comment = "needs root and the tools it runs; runs as root with BLOCKD_PRIVILEGED_TESTS=1"
    static let needsTools: Comment = "needs tools that scripts/deps installs; runs (and fails without them) with BLOCKD_PRIVILEGED_TESTS=1"

    /// The condition of a test that needs root and `tools`: true when it must run or can.
    static func can(needs tools: [String]) -> Bool { required || (isRoot && missing(tools).isEmpty) }

    /// The condition of a test that needs `tools` but not root.
    static func can(tools: [String]) -> Bool { required || missing(tools).isEmpty }

    static func missing(_ tools: [String]) -> [String] {
        tools.filter { !FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Nil when the test can run; otherwise why not, recorded as an issue (the test was enabled
    /// because BLOCKD_PRIVILEGED_TESTS=1 says it must run).
    static func unavailable(needs tools: [String]) -> String? {
        report((isRoot ? [] : ["root"]) + missing(tools))
    }

    static func report(_ missing: [String]) -> String? {
        guard !missing.isEmpty else { return nil }
        let why = "needs \(missing.joined(separator: ", "))"
        if required { Issue.record("BLOCKD_PRIVILEGED_TESTS=1 but this test \(why) (scripts/deps check installs the tools)") }
        return why
    }
}

@Suite("Integration: journald (DESIGN §7)", .serialized)
struct JournalTests {
    static let journald = "/lib/systemd/systemd-journald"
    static let journalctl = "/usr/bin/journalctl"
    static let unshare = "/usr/bin/unshare"

    /// A real systemd-journald in a private mount and PID namespace, with /run on a tmpfs (so
    /// the host's /run is never touched) and its journal files bind-mounted into the sandbox;
    /// blockd runs next to it and logs through sd_journal_sendv. Killing `unshare` kills both.
    @Test("the unlock entry reaches a real journald with MESSAGE_ID and the BLOCKD_* fields", .enabled(if: Privileged.can(needs: [JournalTests.journald, JournalTests.journalctl, JournalTests.unshare]), Privileged.needsRoot))
    func unlockEntry() throws {
        if Privileged.unavailable(needs: [JournalTests.journald, JournalTests.journalctl, JournalTests.unshare]) != nil { return }
        let s = Sandbox()
        let journal = s.dir + "/journal"
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: true)
        let script = """
            set -e
            mount -t tmpfs tmpfs /run
            mkdir -p /run/systemd/journal /run/log/journal
            mount --bind '\(journal)' /run/log/journal
            if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
            \(JournalTests.journald) &
            # On a loaded machine journald may take many seconds to make its socket; a blockd
            # started before that logs into nothing, so wait for it (a minute) or say so.
            for i in $(seq 1200); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
            [ -S /run/systemd/journal/socket ] || { echo "journald made no socket in 60 s"; exit 97; }
            exec '\(Sandbox.binDir)/blockd' \(s.daemonArgs(logTarget: "journal").map { "'\($0)'" }.joined(separator: " "))
            """
        s.write(script, to: "run.sh")
        _ = try s.launch(JournalTests.unshare, ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                                                "/bin/sh", s.dir + "/run.sh"], output: s.logPath)
        try s.waitUntilServing()
        #expect(try s.request(#"start {"selections":["instagram"],"seconds":1}"#).hasPrefix("OK "))

        var unlock: JSON?
        _ = s.eventually(timeout: 30) {
            unlock = JournalTests.entries(in: journal).first { $0["BLOCKD_EVENT"] == "unlock" }
            return unlock != nil
        }
        let entry = try #require(unlock, "no unlock entry in the journal (\(JournalTests.entries(in: journal).count) entries from blockd there); blockd log:\n\(s.log)")
        #expect(entry["MESSAGE"] == "Unblocked instagram: timed block 'instagram' ended (1s)")
        #expect(entry["PRIORITY"] == "5")
        #expect(entry["MESSAGE_ID"] == .string(LogEvent.unlock.messageID))
        #expect(entry["SYSLOG_IDENTIFIER"] == "blockd")
        #expect(entry["BLOCKD_SELECTION"] == "instagram")
        #expect(entry["BLOCKD_ACTIVITY"] == "instagram")
        #expect(entry["BLOCKD_END"]?.string?.isEmpty == false)
        let late = try #require(entry["BLOCKD_LATE_MS"]?.string.flatMap(Int.init))
        #expect(late >= 0)
        let lock = JournalTests.entries(in: journal).first { $0["BLOCKD_EVENT"] == "lock" }
        #expect(lock?["MESSAGE_ID"] == .string(LogEvent.lock.messageID))
    }

    static func entries(in directory: String) -> [JSON] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: journalctl)
        p.arguments = ["-D", directory, "-o", "json", "--no-pager", "SYSLOG_IDENTIFIER=blockd"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return [] }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSON.parse(String($0)) }
    }
}
