import Glibc

/// `watch --notify` runs the notification agent (S1): `blockc` replaces itself with
/// `blockc-agent` (execv: same process, so a user unit keeps tracking it). Both are names of
/// the one executable (P1), so this is the same program started again under the agent's name:
/// the process is then named `blockc-agent` (ps, the journal's _COMM) and runs as it always
/// did, exactly as when the agent was a separate executable.
public enum AgentLauncher {
    public static let name = "blockc-agent"

    /// Where the agent's name is looked for, given `blockc`'s own path (symlinks resolved, so
    /// installed this is blockd's): next to it (a build directory), then `../libexec/blockd/`
    /// (where `make install` puts the link).
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

    /// What is run when no file of the agent's name is found: blockc's own file, with the
    /// agent's name as argv[0], which is what makes the one executable the agent. (A copy of
    /// blockc alone, under its own name, still has the agent in it.)
    public static func fallback(executable: String, socketPath: String) -> (path: String, argv: [String]) {
        (executable, [name] + arguments(agent: name, socketPath: socketPath).dropFirst())
    }

    /// Runs the agent in this process; returns (exit 2, message printed) only when it cannot
    /// be run.
    public static func exec(socketPath: String, stderr: (String) -> Void) -> Int32 {
        guard let own = ownPath() else {
            stderr("blockc: cannot start the notification agent: blockc's own path is unknown (/proc/self/exe); is /proc mounted? Or use blockc watch\n")
            return BlockcRunner.usage
        }
        let found = candidates(executable: own).first { access($0, X_OK) == 0 }
        let (path, argv) = found.map { ($0, arguments(agent: $0, socketPath: socketPath)) }
            ?? fallback(executable: own, socketPath: socketPath)
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        execv(path, cArgs)
        let reason = String(cString: strerror(errno))
        cArgs.forEach { free($0) }
        stderr("blockc: could not run the notification agent \(path): \(reason); reinstall blockd (make install), or use blockc watch\n")
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
