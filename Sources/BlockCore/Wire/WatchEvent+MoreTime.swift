extension WatchEvent {
    /// M3: a more-time request or grant changed.
    public struct MoreTime: Equatable, Sendable {
        /// How a request or grant changed, the event's `kind`.
        public enum Kind: String, CaseIterable, Sendable {
            /// A request waits for an administrator (M1).
            case asked
            /// More time was granted: by the policy at once, or by an administrator (M3).
            case granted
            case denied
            /// A request lapsed unanswered.
            case expired
            /// A grant's time is over.
            case ended
            /// A request was withdrawn (`blockc cancel`).
            case cancelled
        }

        public var time: String
        /// How it changed; a newer daemon may say more, kept as it said it.
        public var kind: WireWord<Kind>
        /// The request's or grant's id (`activity` on the wire).
        public var id: String
        public var selection: String
        /// When an unanswered request expires, or a grant ends; nil: left out.
        public var until: String?
        /// The journal's words, with instants in ISO 8601.
        public var message: String
        /// M4: who asked, so that an agent knows its own request's answer.
        public var uid: Int?
        /// M5: a grant's `lifts` (`all`, `some`, `nothing`), and when what still holds the
        /// selection ends (`heldUntil`); both absent on other kinds and from older daemons.
        public var lifts: WireWord<MoreTimeLift>?
        public var heldUntil: String?
        public var extra = JSONObject()

        var fields: [(String, JSON?)] {
            var out: [(String, JSON?)] = [("time", .string(time)), ("kind", .string(kind.word)), ("activity", .string(id)), ("selection", .string(selection)),
                                          ("until", WatchEvent.text(until)), ("message", .string(message)), ("uid", WatchEvent.number(uid))]
            if let lifts { out.append(("lifts", .string(lifts.word))) }
            if let heldUntil { out.append(("heldUntil", .string(heldUntil))) }
            return out
        }

        init(_ o: JSONObject) {
            (time, kind, id, selection) = (o["time"]?.string ?? "", WireWord(o["kind"]?.string ?? ""), o["activity"]?.string ?? "", o["selection"]?.string ?? "")
            (until, message, uid) = (o["until"]?.string, o["message"]?.string ?? "", o["uid"]?.int)
            (lifts, heldUntil, extra) = (o["lifts"]?.string.map(WireWord.init), o["heldUntil"]?.string, WatchEvent.extra(o))
        }

        init(time: String, kind: WireWord<Kind>, id: String, selection: String, until: String?, message: String, uid: Int?) {
            (self.time, self.kind, self.id, self.selection, self.until, self.message, self.uid) = (time, kind, id, selection, until, message, uid)
        }
    }

    /// M3: `kind` says how it changed; `id` is the request's or grant's.
    public static func moreTime(time: String, kind: MoreTime.Kind, id: String, selection: String, until: String?, message: String,
                                uid: UInt32? = nil) -> WatchEvent {
        .moreTime(MoreTime(time: time, kind: .known(kind), id: id, selection: selection, until: until, message: message, uid: uid.map(Int.init)))
    }
}
