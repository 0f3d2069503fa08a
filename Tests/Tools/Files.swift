import Foundation
import Glibc

/// Where the repository and the built executables are.
public enum Repo {
    /// The repository checkout these tests were built from.
    public static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The directory holding the built executables (`blockd`, `blockc`, `blockc-agent`): the
    /// test bundle's own, or the nearest one above it that has them.
    public static let binDir: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = (exe as NSString).deletingLastPathComponent
        while !FileManager.default.fileExists(atPath: dir + "/blockc") && dir != "/" {
            dir = (dir as NSString).deletingLastPathComponent
        }
        return dir
    }()
}

/// A test's own failure to set something up (a program that did not start, a socket that
/// would not connect), thrown so that the test fails with what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A temp directory under /tmp (mkdtemp: mode 0700), removed with everything in it when the
/// value goes away. Paths stay short: a Unix socket's path holds 108 bytes.
public final class TempDir: @unchecked Sendable {
    public let path: String

    /// `prefix`: the directory's name before the random part, to tell whose it is.
    public init(prefix: String = "bd-") throws {
        var template = Array("/tmp/\(prefix)XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw TestFailure("mkdtemp /tmp/\(prefix)XXXXXX: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Every regular file below, as "/relative/path".
    public func files() -> [String] {
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
