import Foundation
import Glibc
import Testing

/// Privileged tests are declared with `.enabled(if: Privileged.can(...), Privileged.needsRoot)`:
/// where BLOCKD_PRIVILEGED_TESTS=1 (CI, as root) they always run, and fail if what they need is
/// missing; elsewhere they run when they can and are reported as skipped, with the reason, when
/// they cannot.
public enum Privileged {
    public static var required: Bool { ProcessInfo.processInfo.environment["BLOCKD_PRIVILEGED_TESTS"] == "1" }
    public static var isRoot: Bool { geteuid() == 0 }
    public static let needsRoot: Comment = "needs root and the tools it runs; runs as root with BLOCKD_PRIVILEGED_TESTS=1"
    public static let needsTools: Comment = "needs tools that scripts/deps installs; runs (and fails without them) with BLOCKD_PRIVILEGED_TESTS=1"

    /// The condition of a test that needs root and `tools`: true when it must run or can.
    public static func can(needs tools: [String]) -> Bool { required || (isRoot && missing(tools).isEmpty) }

    /// The condition of a test that needs `tools` but not root.
    public static func can(tools: [String]) -> Bool { required || missing(tools).isEmpty }

    /// The tools that are not there (not executable files).
    public static func missing(_ tools: [String]) -> [String] {
        tools.filter { !FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Nil when the test can run; otherwise why not, recorded as an issue (the test was enabled
    /// because BLOCKD_PRIVILEGED_TESTS=1 says it must run).
    public static func unavailable(needs tools: [String]) -> String? {
        report((isRoot ? [] : ["root"]) + missing(tools))
    }

    /// For tests that need tools but not root: nil when they are all there; otherwise the
    /// reason, recorded as an issue when BLOCKD_PRIVILEGED_TESTS=1.
    public static func unavailable(tools: [String]) -> String? { report(missing(tools)) }

    /// Nil when nothing is `missing`; otherwise "needs …", recorded as an issue when
    /// BLOCKD_PRIVILEGED_TESTS=1 says the test must run.
    public static func report(_ missing: [String]) -> String? {
        guard !missing.isEmpty else { return nil }
        let why = "needs \(missing.joined(separator: ", "))"
        if required { Issue.record("BLOCKD_PRIVILEGED_TESTS=1 but this test \(why) (scripts/deps check installs the tools)") }
        return why
    }
}
