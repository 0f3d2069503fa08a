import BlockClient
import BlockCore
import Foundation
import Testing

/// Screen time: `blockc screen` in words, and `screen --pam`, pam_exec's account check, which
/// refuses a login only when blockd says the person is kept off the screen, and fails open.
@Suite("blockc screen and screen --pam")
struct ScreenPamTests {
    static let night = ScreenReply(user: "kid", uid: 1001, held: true, activity: "night", kind: "schedule",
                                   until: "2026-11-30T07:00:00+09:00", action: "lock")
    static let login = ["PAM_USER": "kid", "PAM_TYPE": "account", "PAM_SERVICE": "login"]

    @Test("screen says whether the person may be at the screen, or what keeps them off it and until when")
    func words() {
        let held = Harness(FakeTransport([.success(.ok(Self.night.json))]))
        #expect(held.run(["screen", "--user", "kid"]) == 0)
        #expect(held.out == "Allowed hours 'night' keep kid off the screen until Mon 30 Nov 07:00 (17h55m left); the sessions are locked.\n", "\(held.out)")
        #expect(held.transport?.sent == [.screen(view: .user("kid"))])
        var used = Self.night
        (used.activity, used.kind, used.until) = ("screen", "limit", "2026-11-30T00:00:00+09:00")
        let limit = Harness(FakeTransport([.success(.ok(used.json))]))
        #expect(limit.run(["screen"]) == 0 && limit.out.hasPrefix("kid's screen time is used up for today: limit 'screen' keeps kid off the screen until"), "\(limit.out)")
        let free = Harness(FakeTransport([.success(.ok(ScreenReply(user: "kid", uid: 1001).json))]))
        #expect(free.run(["screen"]) == 0 && free.out == "kid may use the computer now.\n")
    }

    @Test("--pam: a login kept off the screen is refused (status 1) with the line the login shows; blockd is asked about PAM_USER")
    func refuses() {
        let h = Harness(FakeTransport([.success(.ok(Self.night.json))]))
        h.environment = Self.login
        #expect(h.run(["screen", "--pam"]) == BlockcRunner.refused)
        #expect(h.out.hasPrefix("Allowed hours 'night' keep kid off the screen until") && h.err.isEmpty, "\(h.out) \(h.err)")
        #expect(h.transport?.sent == [.screen(view: .user("kid"))])
    }

    @Test("--pam fails open and checks only logins to the screen: not held, blockd down or refusing, root, a remote login, a background service, another PAM phase", arguments: [
        ("not held", Self.login, Result<Response, ClientError>.success(.ok(ScreenReply(user: "kid", uid: 1001).json)), true),
        ("blockd down", Self.login, .failure(.unreachable(path: "/tmp/test.sock", errno: ENOENT)), true),
        ("an error answer", Self.login, .success(.error(CoreError(.notFound, "no user named 'kid'"))), true),
        ("root", Self.login.merging(["PAM_USER": "root"]) { $1 }, .success(.ok(Self.night.json)), false),
        ("ssh", Self.login.merging(["PAM_SERVICE": "sshd", "PAM_RHOST": "192.0.2.7"]) { $1 }, .success(.ok(Self.night.json)), false),
        ("remote", Self.login.merging(["PAM_RHOST": "192.0.2.7"]) { $1 }, .success(.ok(Self.night.json)), false),
        ("cron", Self.login.merging(["PAM_SERVICE": "cron"]) { $1 }, .success(.ok(Self.night.json)), false),
        ("systemd-user", Self.login.merging(["PAM_SERVICE": "systemd-user"]) { $1 }, .success(.ok(Self.night.json)), false),
        ("session phase", Self.login.merging(["PAM_TYPE": "open_session"]) { $1 }, .success(.ok(Self.night.json)), false),
        ("no PAM_USER", [:], .success(.ok(Self.night.json)), false),
    ])
    func failsOpen(_ what: String, environment: [String: String], answer: Result<Response, ClientError>, asks: Bool) {
        let h = Harness(FakeTransport(asks ? [answer] : []))
        h.environment = environment
        #expect(h.run(["screen", "--pam"]) == BlockcRunner.ok, "\(what)")
        #expect(h.out.isEmpty && h.err.isEmpty, "\(what): nothing is said: \(h.out) \(h.err)")
        #expect((h.transport?.sent.count ?? 0) == (asks ? 1 : 0), "\(what)")
    }

    @Test("--pam takes the user from PAM_USER alone")
    func noUserFlag() {
        let h = Harness(nil)
        #expect(h.run(["screen", "--pam", "--user", "kid"]) == BlockcRunner.usage)
    }
}
