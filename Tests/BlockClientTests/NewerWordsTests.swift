@testable import BlockClient
import BlockCore
import Testing

/// §8: "Clients must ignore kinds and keys they do not know": a newer daemon's word in an event
/// or an answer is still shown by blockc, as the daemon said it, never dropped or mistaken for
/// one this build knows.
@Suite("blockc: a newer daemon's words are shown, not dropped")
struct NewerWordsTests {
    @Test("M3, S5, §8: an event with a kind blockc does not know is still a line, in the daemon's words where it has them", arguments: [
        // M3: a more-time kind of a newer daemon: its own message, as the journal says it.
        (#"{"event":"more-time","time":"2026-11-29T13:00:00+09:00","kind":"paused","activity":"r1","selection":"steam","message":"More time for steam (request mq3v8k2x1fd) paused by root"}"#,
         "13:00 More time: More time for steam (request mq3v8k2x1fd) paused by root"),
        (#"{"event":"more-time","time":"2026-11-29T13:00:00+09:00","activity":"r1","selection":"steam","message":"m"}"#,
         "13:00 More time: m"),
        // Every known kind keeps its sentence.
        (#"{"event":"more-time","time":"2026-11-29T13:00:00+09:00","kind":"expired","activity":"r1","selection":"steam","message":"m"}"#,
         "13:00 More time for steam: the request (request r1) expired unanswered"),
        (#"{"event":"more-time","time":"2026-11-29T13:00:00+09:00","kind":"cancelled","activity":"r1","selection":"steam","message":"m"}"#,
         "13:00 More time for steam: the request (request r1) was cancelled"),
        (#"{"event":"more-time","time":"2026-11-29T13:00:00+09:00","kind":"ended","activity":"g1","selection":"steam","message":"m"}"#,
         "13:00 More time for steam ended (request g1)"),
        // S5: a hit of a newer kind is still a hit on a blocked selection.
        (#"{"event":"shield-hit","time":"2026-11-29T13:00:00+09:00","kind":"throttled","selection":"games","path":"/usr/games/steam","app":"Steam","until":"2026-11-29T14:05:00+09:00"}"#,
         "13:00 Denied Steam (/usr/games/steam): games is blocked until 14:05 (1h left)"),
        (#"{"event":"shield-hit","time":"2026-11-29T13:00:00+09:00","kind":"killed","selection":"games","path":"/usr/games/steam","until":null,"more":"forever"}"#,
         "13:00 Stopped steam (/usr/games/steam): games is blocked"),
    ])
    func events(line: String, shown: String) throws {
        let object = try #require(try JSON.parse(line).object)
        #expect(Fixture.output().event(object) == shown)
    }

    @Test("T10, §8: a start outcome blockc does not know says the block as started")
    func startOutcome() {
        #expect(Fixture.output().start(Fixture.start(Fixture.instagramBlock, outcome: "resumed")) == "Blocked instagram until 13:35 (30m left).")
    }

    @Test("§6, §8: an activity of a kind or an origin blockc does not know is listed with the daemon's word, and no rule or origin invented")
    func activity() throws {
        var pause = try #require(Fixture.bedtime.object)
        (pause["kind"], pause["origin"], pause["name"]) = ("pause", "policy", "lunch")
        let row = Fixture.output().activityRow(ActivityReply(pause)).map(\.text)
        #expect(row == ["lunch", "pause", "", "instagram, reddit", "next at 22:00 (in 8h55m)", ""], "\(row)")
        let bedtime = Fixture.output().activityRow(ActivityReply(try #require(Fixture.bedtime.object))).map(\.text)
        #expect(bedtime[1] == "schedule" && bedtime[2] == "daily 22:00-07:00" && bedtime[5] == "from /etc/blockd/schedules.d/bedtime.conf", "\(bedtime)")
    }

    @Test("M2, §8: a loosening of a kind blockc does not know is shown by its word while it waits and when it is cancelled")
    func loosenings() {
        let delayed: JSONObject = ["pending": "work", "kind": "pause", "uid": 1000, "at": "2026-11-29T13:07:00+09:00"]
        let text = Fixture.output().status(MoreTimeOutputTests.status(delayed: [.object(delayed)]))
        #expect(text.contains("  pause of 'work' takes effect at 13:07 (in 2m); 'blockc cancel work' to keep it"), "\(text)")
        #expect(Fixture.output().removal(RemovalReply(delayed), kind: "block").hasPrefix("The pause of 'work' takes effect at 13:07"))
        #expect(Fixture.output().cancelled(CancelledReply(["cancelled": "work", "kind": "pause"])) == "Cancelled the pause of 'work'; it stays.")
        #expect(Fixture.output().cancelled(CancelledReply(["cancelled": "m2", "kind": "request"])) == "Withdrew request m2.")
        #expect(Fixture.output().cancelled(CancelledReply(["cancelled": "bed", "kind": "schedule-remove"])) == "Cancelled the schedule-remove of 'bed'; it stays.")
    }

    @Test("R2, §8: a report's period blockc does not know is compared as its days are, as `days` is")
    func reportPeriod() {
        func average(_ period: String?) -> String? {
            var o = ReportOutputTests.week
            o["period"] = period.map(JSON.string)
            return ReportOutputTests.lines(ReportOutputTests.output().report(ReportReply(o))).first { $0.hasPrefix("  Average") }
        }
        #expect(average("week") == "  Average 1 h a day, 30 min more than the week before.")
        #expect(average("month") == "  Average 1 h a day, 30 min more than the month before.")
        #expect(average("days") == "  Average 1 h a day, 30 min more than the 2 days before.")
        #expect(average("fortnight") == average("days") && average(nil) == average("days") && average("Week") == average("days"))
    }
}
