import Foundation
import Glibc
import Testing

/// Small tools the integration tests share: where the repository is, a temp directory that
/// removes itself, and tools-only privileged checks (running a program: BlockTestTools' `Run`).

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

