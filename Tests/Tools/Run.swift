import Foundation
import Glibc

/// Running a program for its output, and waiting for a condition with a deadline: what the
/// daemon's and the agent's integration tests both need, written once.
public enum Run {
    public struct Result: Sendable {
        public var status: Int32
        /// stdout and stderr together.
        public var output: String
    }

    /// Runs a program to completion (nil in `environment` removes a variable).
    public static func capture(_ path: String, _ arguments: [String], environment: [String: String?] = [:]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Holds `queue` until the returned semaphore is signalled: what is queued after the plug
    /// waits where a test can look at it.
    public static func plug(_ queue: DispatchQueue) -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        return gate
    }

    /// Runs `body` on a thread of its own and says whether it returned within `seconds` (it
    /// is let go either way: the thread ends when `body` does).
    public static func returns(within seconds: Double = 10, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { body(); done.signal() }
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// Whether `condition` holds within `timeout` seconds, looked at every `interval` seconds:
    /// a deadline for something that must happen, never a sleep to show that something did not
    /// (for that, wait for something that comes after it: a barrier).
    public static func eventually(timeout: TimeInterval = 10, every interval: TimeInterval = 0.02,
                                  _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(useconds_t(interval * 1_000_000))
        }
        return try condition()
    }
}
