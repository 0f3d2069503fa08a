import BlockCore
import Foundation
import Glibc
import Testing
import BlockTestSupport
@testable import BlockDaemon

/// Apps per user: the decision, as a pure function of the targets blocking one executable and
/// the users of the process at hand.
@Suite("Per-user apps: who a block stops")
struct UserAppDecisionTests {
    static func target(_ selection: String, _ users: Set<UInt32>?) -> ShieldTarget {
        ShieldTarget(selection: selection, path: "/usr/bin/steam", app: "steam", users: ShieldScope(users))
    }

    static let kid: UInt32 = 1001
    static let parent: UInt32 = 1000

    @Test("a launch is denied when the process's real or login uid is in some target's scope; the first such target by name reports it", arguments: [
        // (targets, real uid, login uid, the selection that denies or nil)
        ([("games", nil)], parent, nil, "games"),                              // for everyone: as before
        ([("games", [kid])], kid, nil, "games"),                               // the kid's own launch
        ([("games", [kid])], parent, nil, nil),                                // the parent runs it undisturbed
        ([("games", [kid])], 0, kid, "games"),                                 // `sudo steam` by kid: real root, login kid
        ([("games", [kid])], 0, parent, nil),                                  // `sudo steam` by the parent
        ([("games", [kid])], 0, nil, nil),                                     // a root service (no login uid)
        ([("games", [kid])], kid, parent, "games"),                            // `su kid -c steam` from the parent's session
        ([("a", [kid]), ("b", [parent])], parent, nil, "b"),                   // two scopes on one file add up
        ([("a", [kid]), ("b", nil)], kid, nil, "a"),                           // name order decides who reports
        ([("a", [kid]), ("b", nil)], parent, nil, "b"),
        ([(String, Set<UInt32>?)](), kid, nil, nil),
    ] as [([(String, Set<UInt32>?)], UInt32, UInt32?, String?)])
    func decision(targets: [(String, Set<UInt32>?)], real: UInt32, login: UInt32?, denies: String?) {
        let users = ProcessUsers(real: real, login: login)
        let denied = ShieldTarget.denying(targets.map { Self.target($0.0, $0.1) }) { users }
        #expect(denied?.selection == denies)
    }

    @Test("/proc is read at most once per decision, and not at all when the first target is for everyone")
    func lazyRead() {
        var reads = 0
        let read = { () -> ProcessUsers? in reads += 1; return ProcessUsers(real: Self.parent, login: nil) }
        _ = ShieldTarget.denying([Self.target("a", nil), Self.target("b", [Self.kid])], users: read)
        #expect(reads == 0)
        _ = ShieldTarget.denying([Self.target("a", [Self.kid]), Self.target("b", [7]), Self.target("c", [8])], users: read)
        #expect(reads == 1)
    }

    @Test("a process whose users cannot be read (gone, or outside our PID namespace) is taken to be in scope")
    func failsClosed() {
        #expect(ShieldTarget.denying([Self.target("games", [Self.kid])]) { nil }?.selection == "games")
        #expect(ProcessUsers.inScope([Self.kid], nil))
        #expect(ProcessUsers.inScope(nil, ProcessUsers(real: Self.parent, login: nil)))
    }

    @Test("ProcessUsers.of reads this process's real uid and login uid from /proc")
    func ownUsers() throws {
        let me = try #require(ProcessUsers.of(getpid()))
        #expect(me.real == getuid())
        let raw = try String(contentsOfFile: "/proc/self/loginuid", encoding: .utf8)
        #expect(me.login == (raw == "4294967295" ? nil : UInt32(raw)))
        #expect(ProcessUsers.of(0) == nil)
    }

    @Test("a per-user app block is enforced: no not-enforced report")
    func enforcedReport() {
        let shield = AppShield(killGrace: 1, log: MemorySink(), hits: { _ in })
        defer { _ = shield.release() }
        var steam = Selection(name: "steam", apps: ["/nonexistent/blockd-test-steam"])
        steam.users = [Self.kid]
        let report = shield.enforce(blocked: [steam])
        #expect(report.notEnforced.isEmpty, "\(report)")
    }
}
