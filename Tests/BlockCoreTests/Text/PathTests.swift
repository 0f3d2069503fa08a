import Testing
@testable import BlockCore

/// Path arithmetic that NSString did before the binaries dropped Foundation's ICU half.
@Suite("Path")
struct PathTests {
    @Test("parent and last component", arguments: [
        ("/etc/hosts", "/etc", "hosts"), ("/etc/", "/", "etc"), ("/etc", "/", "etc"), ("/", "/", "/"),
        ("hosts", "", "hosts"), ("a/b/c", "a/b", "c"), ("/a//b", "/a", "b"), ("/run/blockd/users/", "/run/blockd", "users"),
        ("", "", ""),
    ])
    func parts(path: String, parent: String, last: String) {
        #expect(Path.parent(path) == parent, "parent of \(path)")
        #expect(Path.lastComponent(path) == last, "last component of \(path)")
    }
}
