import BlockCore
import FoundationEssentials
import Glibc

/// R2: `blockc report --html FILE` writes the report as one self-contained page (ReportHTML)
/// and says where; `--html -` prints it.
extension BlockcRunner {
    func writeReportPage(_ report: ReportReply, to path: String) -> Int32 {
        let out = output
        let c = out.clock.civil(of: now())
        let hm = WallTime(hour: c.secondsOfDay / 3600, minute: c.secondsOfDay % 3600 / 60)
        let page = ReportHTML.page(report, title: "blockd report", generated: "\(c.date) \(hm)", userName: out.userName)
        if path == "-" {
            _ = stdout(page)
            return BlockcRunner.ok
        }
        if let problem = writeFile(path, page) {
            stderr("blockc: cannot write the report to \(Output.clean(path)): \(problem); give --html a file in a directory you can write, such as --html ~/report.html\n")
            return BlockcRunner.refused
        }
        _ = stdout("Wrote the report to \(Output.clean(path)); open it in a browser.\n")
        return BlockcRunner.ok
    }

    /// Replaces `path` whole or not at all: a temp file beside it (created with `mode`), fsync,
    /// rename. The error's text, or nil. Also the agent's, for the weekly page (R3).
    public static func writeAtomically(_ path: String, _ text: String, mode: mode_t = 0o644) -> String? {
        let temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        let problem: String? = written < bytes.count || fsync(fd) != 0 ? String(cString: strerror(errno)) : nil
        close(fd)
        if problem == nil, rename(temp, path) == 0 { return nil }
        let why = problem ?? String(cString: strerror(errno))
        unlink(temp)
        return why
    }
}
