import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BlockDaemon
import BlockTestTools

/// U3: the mount table's own news (`MountWatch`), which replaced the per-user tables' 10 s
/// audit for what inotify cannot see (a mount over a table). The watched table is a child's in
/// a mount namespace of its own (`unshare -m`), so nothing is mounted where the machine sees it.
@Suite("U3: the mount table's news", .serialized)
struct MountWatchTests {
    static let tools = ["/usr/bin/unshare", "/usr/bin/nsenter", "/usr/bin/mount", "/usr/bin/umount", "/usr/bin/sleep"]

    @Test("U3: a bind mount in the watched namespace wakes the watch at once, its unmount too; nothing wakes it meanwhile",
          .enabled(if: Privileged.can(needs: MountWatchTests.tools), Privileged.needsRoot))
    func mountAndUnmount() throws {
        let dir = Harness.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/fake", contents: Data("x\n".utf8))
        _ = FileManager.default.createFile(atPath: dir + "/table", contents: Data("site.test\n".utf8))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        child.arguments = ["--mount", "--propagation", "private", "/usr/bin/sleep", "60"]
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let pid = child.processIdentifier
        // unshare has exec'd sleep once its namespace differs from ours.
        let ours = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/mnt")
        #expect(Run.eventually(timeout: 5) { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/mnt")) != ours })

        // Each wake-up notes whether the bind mount is there: the news of the mount says true,
        // of the unmount false, and a wake-up with nothing new repeats what the last one said.
        let table = dir + "/table"
        let seen = Mutex<[Bool]>([])
        @Sendable func mounted() -> Bool {
            ((try? String(contentsOfFile: "/proc/\(pid)/mountinfo", encoding: .utf8)) ?? "").contains(" \(table) ")
        }
        let queue = DispatchQueue(label: "mountwatch-test")
        let watch = try #require(MountWatch(path: "/proc/\(pid)/mountinfo", queue: queue) { let m = mounted(); seen.withLock { $0.append(m) } })
        func inChild(_ args: [String]) throws -> Int32 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/nsenter")
            p.arguments = ["--target", "\(pid)", "--mount", "--"] + args
            try p.run()
            p.waitUntilExit()
            return p.terminationStatus
        }
        // Each change is the barrier for the one before: its news comes after every wake-up the
        // one before caused, so the list is exactly one entry per change, in order.
        #expect(try inChild(["/usr/bin/mount", "-n", "--bind", dir + "/fake", table]) == 0)
        #expect(Run.eventually(timeout: 5) { seen.withLock { $0.last } == true }, "the mount over the file is news")
        #expect(try inChild(["/usr/bin/umount", "-n", table]) == 0)
        #expect(Run.eventually(timeout: 5) { seen.withLock { $0.last } == false }, "so is its unmount")
        #expect(try inChild(["/usr/bin/mount", "-n", "--bind", dir + "/fake", table]) == 0)
        #expect(Run.eventually(timeout: 5) { seen.withLock { $0.last } == true }, "and a second mount")
        #expect(seen.withLock { $0 } == [true, false, true],
                "no change, no wake-up; a change is news once, not a readable descriptor forever: \(seen.withLock { $0 })")
        withExtendedLifetime(watch) {}
    }
}
