import FoundationEssentials
import Glibc

/// A program the agent runs with its standard output on a pipe: no shell, standard input and
/// error on /dev/null, and a clean signal mask and default dispositions (the agent ignores
/// SIGTERM, and a child would inherit that: it could then only be killed).
struct Spawned {
    let pid: pid_t
    /// The read end of the child's standard output; the caller closes it.
    let output: Int32

    static func start(_ path: String, _ arguments: [String], environment: [String: String]) -> Spawned? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // dup2 clears it on the child's stdout
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attr, argv, envp)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            return nil
        }
        return Spawned(pid: pid, output: fds[0])
    }

    /// Runs `path` to its end: its output when it exits with status 0, else nil.
    static func output(_ path: String, _ arguments: [String], environment: [String: String]) -> String? {
        guard let child = start(path, arguments, environment: environment) else { return nil }
        var reader = LineReader(fd: child.output)
        var lines: [String] = []
        while let line = reader.next() { lines.append(line) }
        close(child.output)
        return child.wait() == 0 ? lines.joined(separator: "\n") : nil
    }

    /// Reaps the child; its wait status.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// Lines from a descriptor, blocking in read(2) until one is complete (no wake-ups between).
struct LineReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// A line longer than this is cut: what the agent reads is one property a line.
    static let maxLine = 16_384

    init(fd: Int32) { self.fd = fd }

    /// The next line without its LF; nil at the end of the output (or on an error).
    mutating func next() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                defer { buffer = [] }
                return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk[..<n])
            if buffer.count > LineReader.maxLine, !buffer.contains(10) { buffer.removeFirst(buffer.count - LineReader.maxLine) }
        }
    }
}
