@testable import BlockClient
import BlockCore
import Testing

@Suite("blockc: --user and --all-users (per-user blocks)")
struct UserArgumentsTests {
    @Test("--user repeats on start, schedule add and limit add, and goes on the wire as users")
    func users() throws {
        let bedtime = try BlockcInvocation.parse(["schedule", "add", "bedtime", "--daily", "21:00-07:00", "--user", "kid", "youtube", "steam"])
        var schedule = Schedule(name: "bedtime", selections: ["youtube", "steam"], start: WallTime(hour: 21, minute: 0), end: WallTime(hour: 7, minute: 0))
        schedule.users = Scope(names: ["kid"])
        #expect(bedtime.request == .scheduleAdd(schedule))
        let line = try #require(try BlockcInvocation.parse(["start", "--for", "1h", "--user", "kid", "--user=@kids", "reddit"]).request).line
        #expect(line.contains(#""users":["kid","@kids"]"#), "\(line)")
        guard case .limitAdd(let limit)? = try BlockcInvocation.parse(["limit", "add", "games", "1h", "--user", "kid", "steam"]).request else {
            Issue.record("not a limit-add")
            return
        }
        #expect(limit.users?.names == ["kid"])
        #expect(try BlockcInvocation.parse(["start", "--for", "1h", "reddit"]).request == .start(.init(selections: ["reddit"], seconds: 3600)),
                "no --user: no users, the daemon's default scope")
    }

    @Test("status --user NAME and --all-users; --user where it means nothing is refused")
    func views() throws {
        #expect(try BlockcInvocation.parse(["status"]).request == .status(view: .caller))
        #expect(try BlockcInvocation.parse(["status", "--user", "kid"]).request == .status(view: .user("kid")))
        #expect(try BlockcInvocation.parse(["status", "--all-users"]).request?.line == #"status {"allUsers":true}"#)
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(["status", "--user", "kid", "--all-users"]) }
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(["stop", "x", "--user", "kid"]) }
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(["start", "--for", "1h", "--user", "bad name!", "x"]) }
    }
}
