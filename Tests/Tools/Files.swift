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

    /// The directory holding the built executables (`blockd`, and the same program linked as
    /// `blockc` and `blockc-agent`, Package.swift): the test bundle's own, or the nearest one
    /// above it that has them.
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

/// This process's inotify(7) instances, as /proc/self/fdinfo lists their watches: a barrier for
/// a file watcher. The kernel queues an event during the system call that causes it, so once
/// no instance watching a directory has anything left to read, every event of what was done
/// there before has been read by its watcher.
public enum FileEvents {
    /// Whether every inotify instance of this process that watches `directory` has read all
    /// its events (true when none watches it).
    public static func allRead(in directory: String) -> Bool {
        var st = stat()
        guard stat(directory, &st) == 0 else { return true }
        // fdinfo says `ino:` and `sdev:` in hex, the device as the kernel encodes it (major << 20 | minor).
        let dev = UInt64(st.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff), minor = (dev & 0xff) | ((dev >> 12) & ~0xff)
        let watch = "ino:\(String(UInt64(st.st_ino), radix: 16)) sdev:\(String(major << 20 | minor, radix: 16)) "
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap(Int32.init).allSatisfy { fd in
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) == "anon_inode:inotify",
                  let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8),
                  info.split(separator: "\n").contains(where: { $0.hasPrefix("inotify wd:") && $0.contains(watch) }) else { return true }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&p, 1, 0) == 0
        }
    }
}
