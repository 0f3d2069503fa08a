import Foundation

/// The `--json` shapes of DESIGN §6, built in one place. They are an API for scripts: keys
/// may be added, never renamed. Instants are ISO 8601 with offset, durations are seconds.
public struct Shapes: Sendable {
    public var clock: LocalClock

    public init(clock: LocalClock) { self.clock = clock }

    func instant(_ d: Date?) -> JSON { d.map { .string(clock.iso8601($0)) } ?? .null }

    /// An activity: for a schedule, `start`/`end` are the current window if active, else the next.
    public func activity(_ a: Activity, at now: Date) -> JSON {
        let window = a.currentOrNextWindow(at: now, clock: clock)
        var o = JSONObject()
        o["name"] = .string(a.name)
        o["kind"] = .string(a.kind.rawValue)
        o["selections"] = .array(a.selections.map { .string($0) })
        let active = a.activeWindow(at: now, clock: clock) != nil
        o["active"] = .bool(active)
        o["start"] = instant(window?.start)
        o["end"] = instant(window?.end)
        o["locked"] = .bool(a.locked)
        if case .schedule(let s) = a {
            o["window"] = .string("\(s.start)-\(s.end)")
            o["days"] = .string(s.days.description)
        }
        if case .limit(let l) = a {
            // §9: the daily allowance and today's use, in seconds.
            o["limit"] = .int(Int64(l.seconds))
            o["days"] = .string(l.days.description)
            if let warn = l.warnSeconds { o["warn"] = .int(Int64(warn)) }
            if let state = l.state {
                o["used"] = .int(Int64(state.used.rounded()))
                o["left"] = .int(Int64(state.remaining.rounded()))
                o["running"] = .bool(state.running)
            }
        }
        // Seconds until it is lifted, for an active activity only.
        if active, let end = window?.end { o["remaining"] = .int(Int64(end.timeIntervalSince(now).rounded(.up))) }
        switch a.origin {
        case .client(let uid):
            o["origin"] = "client"
            o["uid"] = .int(Int64(uid))
        case .config(let file):
            o["origin"] = "config"
            o["file"] = .string(file)
        }
        return .object(o)
    }

    public func blocked(_ b: Policy.Blocked) -> JSON {
        [
            "selection": .string(b.selection),
            "until": instant(b.until),
            "reasons": .array(b.reasons.map { .string($0.activity) }),
        ]
    }

    public func failure(time: Date, code: String, message: String, uid: UInt32?, activity: String?) -> JSON {
        var o: JSONObject = ["time": instant(time), "code": .string(code), "message": .string(message)]
        if let uid { o["uid"] = .int(Int64(uid)) }
        if let activity { o["activity"] = .string(activity) }
        return .object(o)
    }

    public func selection(_ s: Selection) -> JSON {
        var o: JSONObject = [
            "name": .string(s.name),
            "domains": .array(s.domains.map { .string($0) }),
            "apps": .array(s.apps.map { .string($0) }),
        ]
        o["paths"] = .array(s.paths.map { .string($0) })  // E8: URL prefixes
        o["openURL"] = s.openURL.map { .string($0) } ?? .null
        if s.firewall == true { o["firewall"] = .bool(true) }
        // S6: the selection's own texts (keys as in its file, e.g. ShieldBody[ja]), so that a
        // user agent renders what the administrator wrote.
        var texts = JSONObject()
        for key in s.texts.keys.sorted() { texts[key] = .string(s.texts[key]!) }
        o["texts"] = .object(texts)
        return .object(o)
    }
}
