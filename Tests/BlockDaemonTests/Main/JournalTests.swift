import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon
import BlockTestTools

@Suite("Integration: journald (§7)", .serialized)
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
            exec '\(Repo.binDir)/blockd' \(s.daemonArgs(logTarget: "journal").map { "'\($0)'" }.joined(separator: " "))
            """
        s.write(script, to: "run.sh")
        _ = try s.launch(JournalTests.unshare, ["--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
                                                "/bin/sh", s.dir + "/run.sh"], output: s.logPath)
        try s.waitUntilServing()
        #expect(try s.request(#"start {"selections":["instagram"],"seconds":1}"#).hasPrefix("OK "))

        var unlock: JSON?
        _ = Run.eventually(timeout: 30) {
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
        let r = try? Run.capture(journalctl, ["-D", directory, "-o", "json", "--no-pager", "SYSLOG_IDENTIFIER=blockd"])
        // journalctl's complaints on stderr are no entries: only JSON lines are.
        return (r?.output ?? "").split(separator: "\n").compactMap { try? JSON.parse(String($0)) }
    }
}

/// The `<N>` priority prefix is for journald only: a person reading a terminal, a pipe or a file
/// never sees it (`make install`, `make try`, `blockd --release` print to those).
@Suite("§7: blockd's stderr lines carry <N> only when stderr is the journal's stream")
struct StderrPrefixTests {
    @Test("JOURNAL_STREAM must name the descriptor's own device:inode; absent, garbage or another file's means plain lines")
    func journalStream() throws {
        let path = "/tmp/bd-prefix-\(getpid())"
        let fd = open(path, O_CREAT | O_WRONLY, 0o600)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var st = stat()
        #expect(fstat(fd, &st) == 0)
        let mine = "\(st.st_dev):\(st.st_ino)"
        #expect(StderrSink.isJournalStream(fd, environment: mine))
        #expect(!StderrSink.isJournalStream(fd, environment: nil), "no JOURNAL_STREAM: a terminal, a pipe, a file")
        #expect(!StderrSink.isJournalStream(fd, environment: "\(st.st_dev):\(st.st_ino + 1)"), "inherited, but stderr was redirected")
        #expect(!StderrSink.isJournalStream(fd, environment: "garbage"))
        #expect(!StderrSink.isJournalStream(fd, environment: "1:2:3"))
    }
}
