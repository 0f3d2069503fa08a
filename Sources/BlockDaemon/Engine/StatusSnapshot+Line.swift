import BlockCore
import Dispatch
import FoundationEssentials
import Synchronization

/// `status` as the bytes of its `OK` line, rendered once per snapshot and view and then copied
/// out for each answer: the blocked selections, the activities, the failures, the counts and
/// the engine's part of `enforcement` are the same bytes for every answer until the engine
/// publishes again. The pieces that are not are put in at answer time, so that an answer is the
/// same line, byte for byte, as `Response.ok(snapshot.answer(.status(), now:))` gives:
/// - `now`, and each active activity's `remaining` (seconds until its end, rounded up);
/// - a limit's whole object (its use today is brought up to `now`, §9);
/// - the enforcers' notes (E2, E5, E7, U3) and the server's counters (S3): they change without
///   the engine publishing (a socket is cut, a lookup fails, a client connects). The counters
///   are asked for every answer; the notes are rendered again only when the enforcers' count of
///   their changes has moved (`NotesVersion`) or a second has passed (which browsers are
///   installed is looked up on disk, with nothing to say when that changes), so a note kept
///   from an earlier answer is never one the enforcers have since changed.
///
/// A line is exact for answers at `from` ≤ now < `until`: `until` is the earliest instant after
/// `from` at which a shown activity starts or ends, where its `active`, `start` and `end` would
/// change. Outside that interval (the engine has normally published by then) it is rendered again.
struct StatusLine: Sendable {
    enum Piece: Sendable {
        case bytes([UInt8])
        /// The answer's instant, ISO 8601 in the snapshot's zone.
        case now
        /// An active activity's seconds until `end`, rounded up (as `Shapes.activityReply`).
        case remaining(end: Date)
        /// A limit, rendered whole at answer time.
        case activity(Activity)
        /// The enforcers' notes, added to `enforcement` after its `count` members.
        case notes(count: Int)
        case server
    }

    let pieces: [Piece]
    let from: Date
    let until: Date
    let size: Int

    func covers(_ now: Date) -> Bool { from <= now && now < until }
}

extension StatusSnapshot {
    /// `status` (without `--all`, for the caller's own view) as its whole `OK` line without the
    /// LF; nil when the engine answers it (as `answer(_:now:private:)` would give nil).
    func statusLine(now: Date, private uid: UInt32?) -> [UInt8]? {
        guard !scoped, active != nil else { return nil }
        var line = lines.read { $0[uid] }
        if line.map({ !$0.covers(now) }) ?? true {
            let made = makeLine(now: now, private: uid)
            // Views are few (everyone, and each member who asks); a flood of uids is not kept.
            lines.write { if $0.count >= 64 { $0.removeAll() }; $0[uid] = made }
            line = made
        }
        return line.flatMap { render($0, now: now) }
    }

    func render(_ line: StatusLine, now: Date) -> [UInt8]? {
        var out: [UInt8] = Array("OK ".utf8)
        out.reserveCapacity(line.size + 2048)
        for piece in line.pieces {
            switch piece {
            case .bytes(let bytes): out += bytes
            case .now: JSON.string(local.iso8601(now)).serialize(into: &out)
            case .remaining(let end): out += String(Int(end.timeIntervalSince(now).rounded(.up))).utf8
            case .activity(let a): shapes.activity(current(a, now), at: now).serialize(into: &out)
            case .notes(let count):
                let notes = renderedNotes()
                guard !notes.clashes else { return nil }
                if count > 0 && !notes.members.isEmpty { out.append(UInt8(ascii: ",")) }
                out += notes.members
            case .server: JSON.object(serverStats()).serialize(into: &out)
            }
        }
        return out
    }

    /// The enforcers' notes as `"key":value` members joined by commas: the ones rendered for an
    /// earlier answer while `notesVersion` gives the count they were rendered at and they are
    /// less than `NotesCache.lifetime` old, else rendered now. The count is read before the
    /// notes are asked for, so notes that changed meanwhile are kept under the older count and
    /// rendered again by the next answer.
    func renderedNotes() -> NotesCache {
        let version = notesVersion?()
        let now = DispatchTime.now().uptimeNanoseconds
        if let version, let kept = notesCache.read({ $0 }), kept.version == version,
           now &- kept.at < NotesCache.lifetime {
            return kept
        }
        var made = NotesCache(version: version ?? 0, at: now)
        for (index, (key, value)) in enforcementNotes(local).enumerated() {
            if enforcement[key] != nil { made.clashes = true }
            if index > 0 { made.members.append(UInt8(ascii: ",")) }
            JSON.serialize(key: key, into: &made.members)
            made.members.append(UInt8(ascii: ":"))
            value.serialize(into: &made.members)
        }
        if version != nil { notesCache.write { $0 = made } }
        return made
    }

    /// Renders `status` at `now` with holes where the answer's own values go. The object is
    /// the one `document(all:now:)` writes (same keys, same order, A1's filter for a member), so
    /// the two cannot drift apart; only `now`, `activities`, `enforcement` and `server` are
    /// written member by member.
    func makeLine(now: Date, private uid: UInt32?) -> StatusLine {
        let o = Authority.view(uid, document(all: false, now: now, notes: [:], server: [:])).json
        var b = LineBuilder()
        b.bytes.append(UInt8(ascii: "{"))
        var until = Date.distantFuture
        for (index, (key, value)) in o.enumerated() {
            b.member(key, first: index == 0)
            switch key {
            case "now": b.hole(.now)
            case "server": b.hole(.server)
            case "enforcement":
                let engine = value.object ?? [:]
                JSON.object(engine).serialize(into: &b.bytes)
                b.bytes.removeLast()  // the closing brace: the notes go before it
                b.hole(.notes(count: engine.count))
                b.bytes.append(UInt8(ascii: "}"))
            case "activities":
                b.bytes.append(UInt8(ascii: "["))
                for (i, a) in (active ?? []).enumerated() {
                    if i > 0 { b.bytes.append(UInt8(ascii: ",")) }
                    activityPieces(a, now: now, into: &b)
                    if a.kind != .limit, let next = a.nextBoundary(after: now, clock: local) { until = min(until, next) }
                }
                b.bytes.append(UInt8(ascii: "]"))
            default: value.serialize(into: &b.bytes)
            }
        }
        b.bytes.append(UInt8(ascii: "}"))
        b.hole(nil)
        let size = b.pieces.reduce(0) { if case .bytes(let bytes) = $1 { $0 + bytes.count } else { $0 } }
        return StatusLine(pieces: b.pieces, from: now, until: until, size: size)
    }

    /// One activity's object as `Shapes.activity` writes it at `now`, with `remaining` a hole;
    /// a limit is one hole (its use today changes by the second).
    func activityPieces(_ a: Activity, now: Date, into b: inout LineBuilder) {
        guard a.kind != .limit else { return b.hole(.activity(a)) }
        let object = shapes.activityReply(a, at: now).json
        guard let end = a.currentOrNextWindow(at: now, clock: local)?.end else { return JSON.object(object).serialize(into: &b.bytes) }
        b.bytes.append(UInt8(ascii: "{"))
        for (index, (key, value)) in object.enumerated() {
            b.member(key, first: index == 0)
            if key == "remaining" { b.hole(.remaining(end: end)) } else { value.serialize(into: &b.bytes) }
        }
        b.bytes.append(UInt8(ascii: "}"))
    }
}

/// The enforcers' notes as rendered for one answer, with the count they were rendered at
/// (`StatusSnapshot.renderedNotes`).
struct NotesCache: Sendable {
    /// How long rendered notes are kept at most, in nanoseconds of the monotonic clock.
    static let lifetime: UInt64 = 1_000_000_000
    let version: UInt64
    let at: UInt64
    /// A note has a key of the engine's part of `enforcement`: it would replace that member
    /// where it stands, which a line cannot do (`render` gives nil, and the object answers).
    var clashes = false
    var members: [UInt8] = []
}

/// The pieces of a `StatusLine` as they are written: bytes, then a hole, then bytes.
struct LineBuilder {
    var pieces: [StatusLine.Piece] = []
    var bytes: [UInt8] = []

    /// `"key":`, after a comma unless it is the object's first member.
    mutating func member(_ key: String, first: Bool) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        JSON.serialize(key: key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Ends the bytes so far; `piece` (nil: none, at the end) is filled in at answer time.
    mutating func hole(_ piece: StatusLine.Piece?) {
        if !bytes.isEmpty { pieces.append(.bytes(bytes)) }
        if let piece { pieces.append(piece) }
        bytes = []
    }
}
