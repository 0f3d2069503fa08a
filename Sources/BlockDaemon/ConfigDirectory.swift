import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// Reads `blockd.conf`, `selections.d/*.conf` and `schedules.d/*.conf` from a directory
/// (DESIGN §7). A missing file or directory is fine (built-in defaults); an unreadable one is
/// an error that names it.
public struct ConfigDirectory: Sendable {
    public let path: String

    public init(_ path: String) { self.path = path }

    public var daemonFile: String { path + "/blockd.conf" }

    public func load(flags: DaemonConfig.Layer = .init()) throws(CoreError) -> ConfigSet {
        let daemon = try read(daemonFile)
        let selections = try readAll(in: path + "/selections.d")
        let schedules = try readAll(in: path + "/schedules.d")
        let limits = try readAll(in: path + "/limits.d")
        return try ConfigSet.load(daemonFile: daemon, selectionFiles: selections, scheduleFiles: schedules,
                                  limitFiles: limits, flags: flags)
    }

    private func read(_ file: String) throws(CoreError) -> ConfigSource? {
        guard FileManager.default.fileExists(atPath: file) else { return nil }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw CoreError(.invalidConfig, "\(file): cannot be read; check its permissions")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CoreError(.invalidConfig, "\(file): is not UTF-8 text")
        }
        return ConfigSource(path: file, text: text)
    }

    /// `*.conf` in `dir`, sorted by name; other files (editor backups, `.dpkg-old`) are skipped.
    private func readAll(in dir: String) throws(CoreError) -> [ConfigSource] {
        var isDir = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else { return [] }
        guard isDir else { throw CoreError(.invalidConfig, "\(dir): is not a directory") }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: dir) } catch {
            throw CoreError(.invalidConfig, "\(dir): cannot be listed; check its permissions")
        }
        var out: [ConfigSource] = []
        for name in names.sorted() where name.hasSuffix(".conf") && !name.hasPrefix(".") {
            if let source = try read(dir + "/" + name) { out.append(source) }
        }
        return out
    }
}
