import Foundation
import Glibc
import Testing

/// Small tools the integration tests share: where the repository is, a temp directory that
/// removes itself, running a program for its output, and tools-only privileged checks.

extension Privileged {
    /// For tests that need tools but not root: nil when they are all there; otherwise the
    /// reason, recorded as an issue when BLOCKD_PRIVILEGED_TESTS=1.
    static func unavailable(tools: [String]) -> String? { report(missing(tools)) }
}

enum Repo {
    /// The repository checkout these tests were built from.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()
}

/// A temp directory under /tmp, removed when the value goes away.
final class TempDir {
    let path: String

    init() throws {
        var template = Array("/tmp/bd-install-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SandboxError("mkdtemp: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Every regular file below, as "/relative/path".
    func files() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return [] }
        var out: [String] = []
        while let relative = walker.nextObject() as? String {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + relative, isDirectory: &isDir), !isDir.boolValue {
                out.append("/" + relative)
            }
        }
        return out
    }
}

enum Run {
    struct Result {
        var status: Int32
        /// stdout and stderr together.
        var output: String
    }

    /// Runs a program to completion (nil in `environment` removes a variable).
    static func capture(_ path: String, _ arguments: [String], environment: [String: String?] = [:]) throws -> Result {
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
}
