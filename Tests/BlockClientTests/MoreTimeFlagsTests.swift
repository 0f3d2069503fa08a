@testable import BlockClient
import BlockCore
import Testing

/// M1, M2: `--more-time`, `--delay` and `--more-time-per-day` on the commands that create an
/// activity, parsed as the config keys are and sent as the request's `moreTime`.
@Suite("blockc: the more-time policy flags")
struct MoreTimeFlagsTests {
    @Test("start, schedule add and limit add take the policy; the unset keys keep their defaults", arguments: [
        (["start", "--for", "1h", "--more-time", "approval", "--delay", "2m", "reddit"],
         MoreTimePolicy(mode: .approval, delay: 120)),
        (["schedule", "add", "bedtime", "--daily", "22:00-07:00", "--more-time=no", "instagram"], MoreTimePolicy(mode: .no)),
        (["limit", "add", "games", "1h", "--more-time-per-day", "15m", "steam"], MoreTimePolicy(perDay: 900)),
        (["start", "--for", "1h", "--delay", "0", "reddit"], MoreTimePolicy(delay: 0)),
        // T1: a DURATION typed in words, unquoted, is one value.
        (["start", "--for", "1h", "--delay", "10", "minutes", "--more-time-per-day", "1", "hour", "reddit"], MoreTimePolicy(delay: 600, perDay: 3600)),
    ])
    func parsed(arguments: [String], expected: MoreTimePolicy) throws {
        #expect(MoreTimeFlagsTests.policy(try BlockcInvocation.parse(arguments).request) == expected)
    }

    @Test("without the flags there is no policy, so the daemon's defaults apply")
    func absent() throws {
        #expect(MoreTimeFlagsTests.policy(try BlockcInvocation.parse(["start", "--for", "1h", "reddit"]).request) == nil)
    }

    /// The policy a request carries.
    static func policy(_ request: Request?) -> MoreTimePolicy? {
        if case .start(let a)? = request { return a.moreTime }
        if case .scheduleAdd(let s)? = request { return s.moreTime }
        if case .limitAdd(let l)? = request { return l.moreTime }
        return nil
    }

    @Test("a bad value or a command that takes no policy is a usage error that says what is wrong", arguments: [
        (["start", "--for", "1h", "--more-time", "maybe", "x"], "--more-time: must be no, self or approval, not 'maybe'"),
        (["start", "--for", "1h", "--delay", "2 dayz", "x"], "--delay: must be a duration such as 2m or 1h30m: '2 dayz' is not a duration: 'dayz' is not a unit (s, m, h or d, or a word such as minutes); did you mean '2 days'?"),
        (["start", "--for", "1h", "--delay", "2", "days", "x"], "--delay: must be at most 1d, not '2 days'"),
        (["stop", "x", "--delay", "2m"], "'--delay' is not an option of 'stop'"),
    ])
    func refused(arguments: [String], message: String) {
        #expect(throws: CoreError.self) { try BlockcInvocation.parse(arguments) }
        do { _ = try BlockcInvocation.parse(arguments) } catch { #expect(error.message.contains(message), "\(error.message)") }
    }

    @Test("M1: the policy goes on the wire as the request's moreTime, as blockd reads it back")
    func request() throws {
        let request = try #require(try BlockcInvocation.parse(["limit", "add", "g", "1m", "--more-time", "approval", "--delay", "2m", "steam"]).request)
        #expect(request.line.contains(#""moreTime":{"mode":"approval","delay":120"#), "\(request.line)")
        #expect(try Request.parse(request.line) == request)
    }
}
