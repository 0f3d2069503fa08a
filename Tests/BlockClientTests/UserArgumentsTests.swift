@testable import BlockClient
import BlockCore
import Testing

@Suite("blockc: --user and --all-users (per-user blocks)")
struct UserArgumentsTests {
    @Test("--user repeats on start, schedule add and limit add, and goes on the wire as users")
    func users() throws {
        let bedtime = try BlockcInvocation.parse(["schedule", "add", "bedtime", "--daily", "21:00-07:00", "--user", "kid", "youtube", "steam"])
        #expect(bedtime.users == ["kid"])
        #expect(bedtime.command == .scheduleAdd(name: "bedtime", days: .all, start: WallTime(hour: 21, minute: 0), end: WallTime(hour: 7, minute: 0),
                                                selections: ["youtube", "steam"]))
        let start = try BlockcInvocation.parse(["start", "--for", "1h", "--user", "kid", "--user=@kids", "reddit"])
        #expect(start.users == ["kid", "@kids"])
        let line = Request.start(Request.StartArguments(selections: ["reddit"], seconds: 3600)).forUsers(start).line
        #expect(line.contains(#""users":["kid","@kids"]"#), "\(line)")
        #expect(try BlockcInvocation.parse(["limit", "add", "games", "1h", "--user", "kid", "steam"]).users == ["kid"])
    }

    @Test("status --user NAME and --all-users; --user where it means nothing is refused")
    func views() throws {
        #expect(try BlockcInvocation.parse(["status"]).view == .caller)
        #expect(try BlockcInvocation.parse(["status", "--user", "kid"]).view == .user("kid"))
        #expect(try BlockcInvocation.parse(["status", "--all-users"]).view == .allUsers)
        #expect(Request.status().forUsers(try BlockcInvocation.parse(["status", "--all-users"])).line == #"status {"allUsers":true}"#)
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(["status", "--user", "kid", "--all-users"]) }
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(["stop", "x", "--user", "kid"]) }
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(["start", "--for", "1h", "--user", "bad name!", "x"]) }
    }
}
