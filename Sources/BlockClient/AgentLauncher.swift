import Glibc

/// `watch --notify` runs the notification agent (S1), a separate executable, so that only it
/// loads libsystemd (sd-bus) and every other `blockc` command starts without it. `blockc`
/// replaces itself with the agent (execv: same process, so a user unit keeps tracking it).
public enum AgentLauncher {
    public static let name = "blockc-agent"

    /// Where the agent is looked for, given `blockc`'s own path (symlinks resolved): next to it
    /// (a build directory), then `../libexec/blockd/` (where `make install` puts it).
    public static func candidates(executable: String) -> [String] {
        guard let slash = executable.lastIndex(of: "/") else { return [] }
        let dir = executable[..<slash]
        let parent = dir.lastIndex(of: "/").map { dir[..<$0] } ?? ""
        return ["\(dir)/\(name)", "\(parent)/libexec/blockd/\(name)"]
    }

    /// The arguments the agent is run with: the socket `blockc` resolved, then the command.
    public static func arguments(agent: String, socketPath: String) -> [String] {
        [agent, "--socket", socketPath, "watch", "--notify"]
    }

    /// Runs the agent in this process; returns (exit 2, message printed) only when none can
    /// be run.
    public static func exec(socketPath: String, stderr: (String) -> Void) -> Int32 {
        let own = ownPath()
        let found = own.map(candidates(executable:)) ?? []
        for agent in found where access(agent, X_OK) == 0 {
            let argv = arguments(agent: agent, socketPath: socketPath)
            var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
            cArgs.append(nil)
            execv(agent, cArgs)
            let reason = String(cString: strerror(errno))
            cArgs.forEach { free($0) }
            stderr("blockc: could not run the notification agent \(agent): \(reason); reinstall blockd (make install)\n")
            return BlockcRunner.usage
        }
        let looked = found.isEmpty ? "(blockc's own path is unknown)" : found.joined(separator: " and ")
        stderr("blockc: the notification agent \(name) is missing: looked for \(looked); reinstall blockd (make install), or use blockc watch\n")
        return BlockcRunner.usage
    }

    /// `/proc/self/exe`: blockc's real path, whatever PATH or symlink it was started through.
    static func ownPath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
