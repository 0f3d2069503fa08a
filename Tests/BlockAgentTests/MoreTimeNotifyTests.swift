import BlockCore
import Foundation
import Glibc
import Testing
@testable import BlockAgent
import BlockTestTools

/// M4 as users see it: the real `blockc watch --notify`, real dunst, buttons pressed through
/// `dunstctl`, and a fake blockd that records what the buttons sent.
@Suite("Integration: more-time buttons on dunst (M4, S2, S4)", .serialized)
struct MoreTimeNotifyTests {
    static let tokyo = NotifyIntegrationTests.tokyo

    /// The shield hit with `more` as a daemon sends it (a word this build may not know).
    static func denied(more: String) -> JSONObject {
        guard case .shieldHit(var hit) = WatchEvent(NotifyIntegrationTests.denied("discord", app: "Discord", until: Date().addingTimeInterval(1775))) else {
            fatalError("not a shield hit")
        }
        hit.more = WireWord(more)
        return WatchEvent.shieldHit(hit).json
    }

    static func note(_ kind: WatchEvent.MoreTime.Kind, uid: UInt32) -> JSONObject {
        WatchEvent.moreTime(time: tokyo.iso8601(Date()), kind: kind, id: "m3", selection: "discord",
                            until: tokyo.iso8601(Date().addingTimeInterval(900)), message: "words", uid: uid).json
    }

    static func displayed(_ session: DesktopSession, _ n: Int) -> Bool {
        (try? session.dunstctl(["count", "displayed"]))?.trimmingCharacters(in: .whitespacesAndNewlines) == "\(n)"
    }

    @Test("M4: 'Ask for more time' sends 'more discord 15m' as this user; \"Asked for more time\" and then the answer replace it (S2)",
          .enabled(if: Desktop.can(needs: NotifyIntegrationTests.dunstTools), Desktop.needsPrograms))
    func asker() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.dunstTools) != nil { return }
        let session = try DesktopSession()
        try session.startDunst()
        let (daemon, _) = try NotifyIntegrationTests.start(session)

        daemon.send(MoreTimeNotifyTests.denied(more: "ask"))
        try #require(Run.eventually { session.notifyCalls().count == 1 }, "no Notify: \(session.read("agent.log"))")
        #expect(session.notifyCalls()[0].args[5] == ["more", "Ask for more time"], "the daemon said asking can succeed (S4)")
        _ = try session.dunstctl(["action", "0"])
        #expect(Run.eventually { daemon.received == [.more(.init(selection: "discord", seconds: 900))] },
                "received \(daemon.received); log: \(session.read("agent.log"))")

        daemon.send(MoreTimeNotifyTests.note(.asked, uid: getuid()))
        try #require(Run.eventually { session.notifyCalls().count == 2 }, "\(session.read("agent.log"))")
        let asked = session.notifyCalls()[1].args
        #expect(asked[3] == "Asked for more time")
        #expect(asked[5] == [], "nothing to press while the request waits")
        #expect(asked[1] != .int(0), "S2: it replaces the shield notification")
        daemon.send(MoreTimeNotifyTests.note(.granted, uid: getuid()))
        try #require(Run.eventually { session.notifyCalls().count == 3 }, "\(session.read("agent.log"))")
        #expect(session.notifyCalls()[2].args[3] == "More time for discord")
        #expect(session.notifyCalls()[2].args[1] == asked[1], "S2: the answer replaces \"Asked for more time\"")
        #expect(Run.eventually { MoreTimeNotifyTests.displayed(session, 1) })

        daemon.send(MoreTimeNotifyTests.denied(more: "bogus"))
        try #require(Run.eventually { session.notifyCalls().count == 4 })
        #expect(session.notifyCalls()[3].args[5] == [], "S4: an offer this build does not know is no button")
    }

    @Test("M4: an administrator gets the request with Approve and Deny; Approve sends 'approve m3'; the answer replaces it (S2)",
          .enabled(if: Desktop.can(needs: NotifyIntegrationTests.dunstTools), Desktop.needsPrograms))
    func administrator() throws {
        if Desktop.unavailable(needs: NotifyIntegrationTests.dunstTools) != nil { return }
        let session = try DesktopSession()
        // dunst offers a notification's several actions in its context menu, through dmenu:
        // this one picks the line with "Approve", as a person would.
        // Run by /bin/sh, not exec'd itself: a process this test process forks meanwhile may
        // hold the just-written file open for writing, and exec then fails (ETXTBSY).
        try session.write("cat > '\(session.dir)/menu'\ngrep -m1 Approve '\(session.dir)/menu'\n", to: "pick", mode: 0o644)
        try session.startDunst(config: "    dmenu = /bin/sh \(session.dir)/pick\n")
        let (daemon, _) = try NotifyIntegrationTests.start(session, admin: true)

        daemon.send(MoreTimeNotifyTests.note(.asked, uid: 4242))
        try #require(Run.eventually { session.notifyCalls().count == 1 }, "no Notify: \(session.read("agent.log"))")
        let request = session.notifyCalls()[0].args
        #expect(request[3] == "More time asked for discord")
        #expect(request[5] == ["approve", "Approve", "deny", "Deny"])
        _ = try session.dunstctl(["action", "0"])
        #expect(Run.eventually { daemon.received == [.approve(id: "m3", seconds: nil)] },
                "received \(daemon.received); menu: \(session.read("menu")); log: \(session.read("agent.log")) \(session.read("dunst.log"))")

        daemon.send(MoreTimeNotifyTests.note(.granted, uid: 4242))
        try #require(Run.eventually { session.notifyCalls().count == 2 }, "\(session.read("agent.log"))")
        let answer = session.notifyCalls()[1].args
        #expect(answer[3] == "More time for discord")
        #expect(answer[5] == [])
        #expect(answer[1] != .int(0), "S2: the answer replaces the request")
        #expect(Run.eventually { MoreTimeNotifyTests.displayed(session, 1) })
    }
}
