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

    /// `blockd --check-config`: every problem in the directory, unreadable files included, and
    /// with `candidate` (a file about to be installed, such as Ansible's `validate: blockd
    /// --check-config %s`) checked as part of it: put in by its section (`[Daemon]`,
    /// `[Selection]`, `[Schedule]`, `[Limit]`) in place of the file that defines the same name.
    public func check(flags: DaemonConfig.Layer = .init(), candidate: ConfigSource? = nil) -> (ConfigSet, [CoreError]) {
        var problems: [CoreError] = []
        var daemon: ConfigSource?
        do throws(CoreError) { daemon = try read(daemonFile) } catch { problems.append(error) }
        var kinds: [String: [ConfigSource]] = [:]
        for kind in ["selections", "schedules", "limits"] {
            do throws(CoreError) { kinds[kind] = try readAll(in: path + "/\(kind).d", problems: &problems) } catch {
                problems.append(error)
            }
        }
        if let candidate {
            switch ConfigDirectory.section(of: candidate.text) {
            case "Daemon": daemon = candidate
            case "Selection":
                kinds["selections"] = ConfigDirectory.replacing(kinds["selections"] ?? [], with: candidate) {
                    (try? ConfigFiles.parseSelection(file: $0.path, text: $0.text))?.name.lowercased()
                }
            case "Schedule":
                kinds["schedules"] = ConfigDirectory.replacing(kinds["schedules"] ?? [], with: candidate) {
                    (try? ConfigFiles.parseSchedule(file: $0.path, text: $0.text))?.name
                }
            case "Limit":
                kinds["limits"] = ConfigDirectory.replacing(kinds["limits"] ?? [], with: candidate) {
                    (try? ConfigFiles.parseLimit(file: $0.path, text: $0.text))?.name
                }
            default:
                problems.append(CoreError(.invalidConfig, "\(candidate.path): has no [Daemon], [Selection], [Schedule] or [Limit] section, so it is none of blockd's files"))
            }
        }
        let (set, more) = ConfigSet.assemble(daemonFile: daemon, selectionFiles: kinds["selections"] ?? [],
                                             scheduleFiles: kinds["schedules"] ?? [], limitFiles: kinds["limits"] ?? [], flags: flags)
        return (set, problems + more)
    }

    /// The first `[Section]` of an INI text.
    static func section(of text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) {
            let t = line.trimmed()
            if t.hasPrefix("[") && t.hasSuffix("]") { return String(t.dropFirst().dropLast()).trimmed() }
        }
        return nil
    }

    /// `sources` with `candidate` added, and any that defines the name it defines left out.
    static func replacing(_ sources: [ConfigSource], with candidate: ConfigSource, name: (ConfigSource) -> String?) -> [ConfigSource] {
        let replaced = name(candidate)
        return sources.filter { $0.path != candidate.path && (replaced == nil || name($0) != replaced) } + [candidate]
    }

    /// A file given on the command line, read as the directory's files are.
    public static func source(_ file: String) throws(CoreError) -> ConfigSource {
        guard let source = try ConfigDirectory("/").read(file) else {
            throw CoreError(.invalidConfig, "\(file): does not exist")
        }
        return source
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

    /// `*.conf` in `dir`, sorted by name (other files, such as editor backups and `.dpkg-old`,
    /// are skipped), going on past a file it cannot read and recording why.
    private func readAll(in dir: String, problems: inout [CoreError]) throws(CoreError) -> [ConfigSource] {
        var isDir = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) else { return [] }
        guard isDir else { throw CoreError(.invalidConfig, "\(dir): is not a directory") }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: dir) } catch {
            throw CoreError(.invalidConfig, "\(dir): cannot be listed; check its permissions")
        }
        var out: [ConfigSource] = []
        for name in names.sorted() where name.hasSuffix(".conf") && !name.hasPrefix(".") {
            do throws(CoreError) { if let source = try read(dir + "/" + name) { out.append(source) } } catch { problems.append(error) }
        }
        return out
    }

    /// `*.conf` in `dir`, sorted by name; other files (editor backups, `.dpkg-old`) are skipped.
    private func readAll(in dir: String) throws(CoreError) -> [ConfigSource] {
        var problems: [CoreError] = []
        let out = try readAll(in: dir, problems: &problems)
        if let first = problems.first { throw first }
        return out
    }
}
