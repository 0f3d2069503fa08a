import FoundationEssentials
import Testing
@testable import BlockCore

/// The words of a set that travel in events and answers (a more-time event's `kind`, a hit's,
/// an activity's `kind` and `origin`, ...) are read and written through `WireWord` only: every
/// word this build knows comes back typed and is written back byte for byte, and a newer
/// daemon's word is kept as it came (§8: "Clients must ignore kinds and keys they do not know").
@Suite("§8: words a newer daemon may add, one type each, kept as sent")
struct WireWordTests {
    /// A field that holds a word, and a line the daemon sends with `WORD` in its place, keys in
    /// the order it writes them.
    enum Field: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case moreTimeKind, shieldHitKind, tamperKind, lockOffer, hitOffer, activityKind, activityOrigin, startOutcome, delayedKind, cancelledKind, reportPeriod
        case moreTimeLifts, grantNamed, grantAlso, grantLifts, heldKind, heldMoreTime

        var testDescription: String { rawValue }

        var line: String {
            switch self {
            case .moreTimeKind: #"{"event":"more-time","time":"2026-11-29T13:05:00+09:00","kind":"WORD","activity":"r1","selection":"steam","message":"m","uid":1001}"#
            case .shieldHitKind: #"{"event":"shield-hit","time":"2026-11-29T13:05:00+09:00","kind":"WORD","selection":"games","path":"/usr/games/steam","app":"Steam","until":null}"#
            case .tamperKind: #"{"event":"tamper","time":"2026-11-29T13:05:00+09:00","kind":"WORD","selection":"s","path":"/etc/hosts","until":null}"#
            case .lockOffer: #"{"event":"lock","time":"2026-11-29T13:05:00+09:00","selection":"x","until":null,"reasons":["a"],"more":"WORD"}"#
            case .hitOffer: #"{"event":"shield-hit","time":"2026-11-29T13:05:00+09:00","kind":"killed","selection":"s","path":"/p","until":null,"users":[1001],"more":"WORD"}"#
            case .activityKind: #"{"name":"bed","kind":"WORD","selections":["x"],"active":false,"start":null,"end":null,"locked":false,"origin":"client","uid":1000}"#
            case .activityOrigin: #"{"name":"bed","kind":"schedule","selections":["x"],"active":false,"start":null,"end":null,"locked":false,"origin":"WORD","file":"/etc/blockd/schedules.d/bed.conf"}"#
            case .startOutcome: #"{"name":"x","kind":"block","selections":["x"],"active":true,"start":"2026-11-29T13:05:00.000+09:00","end":"2026-11-29T13:35:00.000+09:00","locked":false,"remaining":1800,"origin":"client","uid":1000,"outcome":"WORD","enforced":true}"#
            case .delayedKind: #"{"pending":"work","kind":"WORD","uid":1000,"user":"kid","at":"2026-11-29T13:07:00.000+09:00"}"#
            case .cancelledKind: #"{"cancelled":"work","kind":"WORD"}"#
            case .moreTimeLifts: #"{"event":"more-time","time":"2026-11-29T13:05:00+09:00","kind":"granted","activity":"m1","selection":"steam","until":"2026-11-29T13:10:00+09:00","message":"m","uid":1001,"lifts":"WORD","heldUntil":"2026-11-29T23:00:00+09:00"}"#
            case .grantNamed: #"{"id":"m1","selection":"steam","state":"granted","start":null,"end":null,"activities":["games"],"grantedBy":null,"named":"WORD"}"#
            case .grantAlso: #"{"id":"m1","selection":"steam","state":"granted","start":null,"end":null,"activities":["games"],"grantedBy":null,"named":"limit","also":"WORD"}"#
            case .grantLifts: #"{"id":"m1","selection":"steam","state":"granted","start":null,"end":null,"activities":["games"],"grantedBy":null,"lifts":"WORD","held":[]}"#
            case .heldKind: #"{"selection":"reddit.com","activity":"focus","kind":"WORD","moreTime":"no","locked":true,"until":null}"#
            case .heldMoreTime: #"{"selection":"reddit.com","activity":"focus","kind":"block","moreTime":"WORD","locked":false,"until":null}"#
            case .reportPeriod: #"{"schema":1,"from":"2026-11-23","to":"2026-11-23","period":"WORD","user":1001,"days":[{"date":"2026-11-23","weekday":"mon","blocked":{},"apps":{},"foreground":{},"web":{},"used":{"games":60},"shieldHits":{},"counts":{"asked":1}}]}"#
            }
        }

        /// Every word this build knows for the field, as the daemon spells it.
        var knownWords: [String] {
            switch self {
            case .moreTimeKind: WatchEvent.MoreTime.Kind.allCases.map(\.rawValue)
            case .shieldHitKind, .tamperKind: ShieldHit.Kind.allCases.map(\.rawValue)
            case .lockOffer, .hitOffer: MoreTimeOffer.allCases.map(\.rawValue)
            case .activityKind: Activity.Kind.allCases.map(\.rawValue)
            case .activityOrigin: ActivityReply.Origin.allCases.map(\.rawValue)
            case .startOutcome: StartReply.Outcome.allCases.map(\.rawValue)
            case .delayedKind: PendingLoosening.Kind.allCases.map(\.rawValue)
            case .cancelledKind: ["request"] + PendingLoosening.Kind.allCases.map(\.rawValue)
            case .reportPeriod: ReportReply.Period.allCases.map(\.rawValue)
            case .moreTimeLifts, .grantLifts: MoreTimeLift.allCases.map(\.rawValue)
            case .grantNamed, .grantAlso: MoreTimeNamed.allCases.map(\.rawValue)
            case .heldKind: Activity.Kind.allCases.map(\.rawValue)
            case .heldMoreTime: MoreTimeMode.allCases.map(\.rawValue)
            }
        }

        /// The object read through the field's one type: what it writes back, and the word as
        /// typed (`known`: whether this build knows it).
        func read(_ o: JSONObject) -> (json: JSONObject, word: String, known: Bool)? {
            func typed<K>(_ w: WireWord<K>?) -> (String, Bool)? { w.map { ($0.word, $0.known != nil) } }
            let event = WatchEvent(o)
            let got: (JSONObject, (String, Bool)?)
            switch (self, event) {
            case (.moreTimeKind, .moreTime(let m)): got = (event.json, typed(m.kind))
            case (.shieldHitKind, .shieldHit(let h)), (.tamperKind, .tamper(let h)): got = (event.json, typed(h.kind))
            case (.lockOffer, .lock(let l)): got = (event.json, typed(l.more))
            case (.hitOffer, .shieldHit(let h)): got = (event.json, typed(h.more))
            case (.activityKind, _): got = (ActivityReply(o).json, typed(ActivityReply(o).kind))
            case (.activityOrigin, _): got = (ActivityReply(o).json, typed(ActivityReply(o).origin))
            case (.startOutcome, _): got = (StartReply(o).json, typed(StartReply(o).outcome))
            case (.delayedKind, _): got = (DelayedReply(o).json, typed(DelayedReply(o).kind))
            case (.cancelledKind, _): got = (CancelledReply(o).json, typed(CancelledReply(o).kind))
            case (.reportPeriod, _): got = (ReportReply(o).json, typed(ReportReply(o).period))
            case (.moreTimeLifts, .moreTime(let m)): got = (event.json, typed(m.lifts))
            case (.grantNamed, _): got = (GrantReply(o).json, typed(GrantReply(o).named))
            case (.grantAlso, _): got = (GrantReply(o).json, typed(GrantReply(o).also))
            case (.grantLifts, _): got = (GrantReply(o).json, typed(GrantReply(o).lifts))
            case (.heldKind, _): got = (HeldReply(o).json, typed(HeldReply(o).kind))
            case (.heldMoreTime, _): got = (HeldReply(o).json, typed(HeldReply(o).moreTime))
            default: return nil  // the line is not the event the field is in
            }
            return got.1.map { (got.0, $0.0, $0.1) }
        }
    }

    static let known: [(Field, String)] = Field.allCases.flatMap { field in field.knownWords.map { (field, $0) } }

    @Test("§8, §6: every word this build knows reads typed and writes back the same bytes", arguments: known)
    func knownWords(field: Field, word: String) throws {
        let line = field.line.replacing("WORD", with: word)
        let object = try #require(try JSON.parse(line).object)
        let read = try #require(field.read(object))
        #expect(read.known, "\(word) is known")
        #expect(read.word == word)
        #expect(JSON.object(read.json).serialized() == line)
    }

    @Test("§8, §6: a newer daemon's word is kept as it came through decode and encode, never dropped",
          arguments: Field.allCases, ["paused", "", "Asked", "denied launch"])
    func newerWords(field: Field, word: String) throws {
        let line = field.line.replacing("WORD", with: word)
        let object = try #require(try JSON.parse(line).object)
        let read = try #require(field.read(object))
        #expect(!read.known, "'\(word)' is not a word this build knows")
        #expect(read.word == word)
        #expect(JSON.object(read.json).serialized() == line)
    }

    /// The words are the wire's: a case renamed must not rename its word (the state file keeps
    /// the loosenings' words too).
    @Test("§8, M1-M3, M5, S5, T10: the words are those the daemon has always sent", arguments: [
        (Field.moreTimeKind, ["asked", "granted", "denied", "expired", "ended", "cancelled"]),
        (.shieldHitKind, ["denied-launch", "killed", "tamper"]),
        (.lockOffer, ["grant", "ask", "minute"]),
        (.activityKind, ["block", "schedule", "limit"]),
        (.activityOrigin, ["client", "config"]),
        (.startOutcome, ["created", "extended", "unchanged"]),
        (.delayedKind, ["stop", "schedule-remove", "limit-remove"]),
        (.cancelledKind, ["request", "stop", "schedule-remove", "limit-remove"]),
        (.reportPeriod, ["days", "week", "month"]),
        (.grantNamed, ["selection", "limit", "hours"]),
        (.grantLifts, ["all", "some", "nothing"]),
        (.heldMoreTime, ["self", "approval", "no"]),
    ])
    func words(field: Field, words: [String]) {
        #expect(field.knownWords == words)
    }

    @Test("§8: a word is known exactly when its type spells it; the unknown one is the word as sent")
    func wireWord() {
        #expect(WireWord<ShieldHit.Kind>("killed") == .known(.killed))
        #expect(WireWord<ShieldHit.Kind>("killed").known == .killed)
        #expect(WireWord<ShieldHit.Kind>("Killed") == .unknown("Killed"))
        #expect(WireWord<ShieldHit.Kind>("Killed").known == nil)
        #expect(WireWord<CancelledReply.Kind>("schedule-remove") == .known(.loosening(.scheduleRemove)))
        #expect(WireWord<CancelledReply.Kind>("request").word == "request")
        #expect(WireWord<WatchEvent.MoreTime.Kind>("").word == "", "an absent kind reads as the empty word and is written so")
    }

    @Test("M3: the core's more-time notes become events with their typed kind; a delayed loosening's stay in the journal")
    func notes() {
        let clock = LocalClock.utc
        let now = Date(timeIntervalSince1970: 1_764_640_000)
        func note(_ event: LogEvent, _ kind: WatchEvent.MoreTime.Kind?) -> MoreTimeNote {
            MoreTimeNote(event: event, kind: kind, id: "r1", selection: "steam", until: nil, message: "m", uid: 1001)
        }
        for kind in WatchEvent.MoreTime.Kind.allCases {
            let events = note(.moreAsked, kind).events(clock: clock, now: now)
            guard case .moreTime(let m)? = events.first, events.count == 1 else { Issue.record("\(kind): one more-time event"); continue }
            #expect(m.kind == .known(kind))
        }
        #expect(note(.delayed, nil).events(clock: clock, now: now).isEmpty, "M2: a loosening that waits is said in the journal only")
        #expect(note(.delayed, nil).entry(clock: clock).event == .delayed)
    }

    @Test("F3: a newer daemon's hit or more-time kind is not counted, and adds no label")
    func metrics() {
        var counters = Metrics.Counters()
        counters.count(WatchEvent(["event": "shield-hit", "kind": "paused"]))
        counters.count(WatchEvent(["event": "more-time", "kind": "paused"]))
        #expect(counters == Metrics.Counters())
        counters.count(WatchEvent(["event": "shield-hit", "kind": "killed"]))
        counters.count(WatchEvent(["event": "more-time", "kind": "denied"]))
        #expect(counters.shieldHits == [.deniedLaunch: 0, .killed: 1, .tamper: 0])
        #expect(counters.moreTime == [.asked: 0, .granted: 0, .denied: 1])
    }

    @Test("M2: the commands that wait for Delay= are exactly the loosenings' kinds, each carried out as the request it was")
    func loosenings() {
        let waits = Set(Command.allCases.filter { $0.route.loosens == .delayed })
        #expect(waits == Set(PendingLoosening.Kind.allCases.map { PendingLoosening(kind: $0, name: "x", uid: 0, asked: .distantPast, due: .distantPast).request.command }))
        for kind in PendingLoosening.Kind.allCases {
            let l = PendingLoosening(kind: kind, name: "work", uid: 1000, asked: .distantPast, due: .distantPast)
            let asked = PendingLoosening.asked(by: l.request)
            #expect(asked?.kind == kind && asked?.name == "work")
        }
        #expect(PendingLoosening.asked(by: .cancel(name: "work")) == nil)
        #expect(PendingLoosening.asked(by: .hello) == nil)
    }
}
