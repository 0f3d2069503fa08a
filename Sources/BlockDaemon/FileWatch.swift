import CLinux
import Dispatch
import Foundation
import Glibc

/// Watches files through their directories (so replacement by rename is seen) and the files
/// themselves (so in-place writes are seen). Stops when released.
final class FileWatch: @unchecked Sendable {
    let fd: Int32
    let source: DispatchSourceRead
    /// What is watched, for a caller that must watch again when a symlink's target changes.
    let paths: [String]

    /// `onChange(true)` for an event about one of `paths`, `onChange(false)` for any other
    /// entry of their directories (only when `everyEntry`: a file deleted there frees space).
    init?(paths: [String], queue: DispatchQueue, everyEntry: Bool = false, onChange: @escaping @Sendable (Bool) -> Void) {
        fd = blockd_inotify_init()
        guard fd >= 0 else { return nil }
        self.paths = paths
        var names: [Int32: Set<String>] = [:]  // directory watch → the watched names in it
        var files: Set<Int32> = []
        let dirMask = blockd_in_create() | blockd_in_moved_to() | blockd_in_close_write() | blockd_in_delete() | blockd_in_attrib()
        for path in paths {
            let dir = (path as NSString).deletingLastPathComponent
            let wd = blockd_inotify_add_watch(fd, dir.isEmpty ? "." : dir, dirMask)
            guard wd >= 0 else {
                close(fd)
                return nil
            }
            names[wd, default: []].insert((path as NSString).lastPathComponent)
            let file = blockd_inotify_add_watch(fd, path, blockd_in_modify() | blockd_in_close_write())
            if file >= 0 { files.insert(file) }
        }
        source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [fd, names, files] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var aboutFile = false, other = false
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                var offset = 0
                while offset + 16 <= n {
                    let wd = Int32(bitPattern: UInt32(buffer[offset]) | UInt32(buffer[offset + 1]) << 8 | UInt32(buffer[offset + 2]) << 16 | UInt32(buffer[offset + 3]) << 24)
                    let len = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8 | Int(buffer[offset + 14]) << 16 | Int(buffer[offset + 15]) << 24
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + len, n)].prefix { $0 != 0 }
                    if files.contains(wd) || names[wd]?.contains(String(decoding: nameBytes, as: UTF8.self)) == true {
                        aboutFile = true
                    } else {
                        other = true
                    }
                    offset += 16 + len
                }
            }
            if aboutFile { onChange(true) } else if other && everyEntry { onChange(false) }
        }
        source.setCancelHandler { [fd] in close(fd) }
        source.resume()
    }

    convenience init?(path: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        self.init(paths: [path], queue: queue) { _ in onChange() }
    }

    deinit { source.cancel() }
}
