import FoundationEssentials

/// Screen time (session time): how long a person is at the machine, whatever they use. logind
/// describes each login session (the daemon's edge follows it and hands the sessions over as
/// values); a person is at the screen while some local session of theirs is active (in the
/// foreground of its seat), unlocked and not idle for longer than `idleSeconds`. Two sessions at
/// once count once. Remote sessions (ssh) and the greeter's or the lock screen's own sessions do
/// not count: nobody sits at those.
public struct LoginSession: Equatable, Sendable {
    public var id: String
    public var uid: UInt32
    /// logind's `Active`: in the foreground of its seat.
    public var active: Bool
    /// logind's `LockedHint`, set by the screen locker.
    public var locked: Bool
    /// logind's `IdleHint` and `IdleSinceHint`: idle since then, as the desktop says.
    public var idleSince: Date?
    /// logind's `Remote` (ssh, and other logins from elsewhere).
    public var remote: Bool
    /// logind's `Class`: only `user` sessions have a person at them.
    public var isUser: Bool
    /// logind's `Type` is x11, wayland or mir: a desktop, whose screen locker locks it when
    /// logind asks. A text session (a VT login, `tty`) has nothing that could lock it.
    public var graphical: Bool

    public init(id: String, uid: UInt32, active: Bool, locked: Bool = false, idleSince: Date? = nil, remote: Bool = false, isUser: Bool = true,
                graphical: Bool = true) {
        (self.id, self.uid, self.active, self.locked, self.idleSince, self.remote, self.isUser) = (id, uid, active, locked, idleSince, remote, isUser)
        self.graphical = graphical
    }

    /// A session a person sits at on this machine (not ssh, not a service's session).
    public var isLocal: Bool { isUser && !remote }
}

/// What a screen-time limit does to a person's sessions once their allowance is used up
/// (`Action=`): lock them (the default), end them, or suspend or power off the machine.
public enum SessionAction: String, Sendable, Codable, CaseIterable, Comparable {
    case lock, logout, suspend, poweroff

    /// Weaker to stronger, in the order of the cases: where two hold a person, the stronger acts.
    public static func < (a: SessionAction, b: SessionAction) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

public enum ScreenTime {
    /// Idle time that still counts: a person reading or thinking is at the screen; past this
    /// they are not, from the instant the desktop says they went idle plus this.
    public static let idleSeconds: TimeInterval = 300

    /// One person at one instant.
    public struct Presence: Equatable, Sendable {
        /// At the screen now.
        public var counting: Bool
        /// Not counting: since when (an idle session stops counting `idleSeconds` after it went
        /// idle, which may be before the instant it was seen).
        public var stoppedAt: Date?
        /// Counting while idle: when it stops unless the person comes back (a wake-up for the
        /// engine's timer).
        public var until: Date?
    }

    /// Each person with a session, at `now`.
    public static func presence(_ sessions: [LoginSession], now: Date, idleSeconds: TimeInterval = idleSeconds) -> [UInt32: Presence] {
        var out: [UInt32: Presence] = [:]
        for s in sessions where s.isLocal {
            let one = presence(of: s, now: now, idleSeconds: idleSeconds)
            guard let old = out[s.uid] else { out[s.uid] = one; continue }
            out[s.uid] = union(old, one)
        }
        return out
    }

    static func presence(of s: LoginSession, now: Date, idleSeconds: TimeInterval) -> Presence {
        guard s.active && !s.locked else { return Presence(counting: false, stoppedAt: now, until: nil) }
        guard let since = s.idleSince else { return Presence(counting: true, stoppedAt: nil, until: nil) }
        let end = since.addingTimeInterval(idleSeconds)
        return end > now ? Presence(counting: true, stoppedAt: nil, until: end) : Presence(counting: false, stoppedAt: end, until: nil)
    }

    /// Two sessions of one person: counting if either is, until the later of their idle ends
    /// (nil if one counts with no end); not counting since the later of their stops.
    static func union(_ a: Presence, _ b: Presence) -> Presence {
        switch (a.counting, b.counting) {
        case (true, true):
            let until = a.until.flatMap { x in b.until.map { max(x, $0) } }
            return Presence(counting: true, stoppedAt: nil, until: until)
        case (true, false): return a
        case (false, true): return b
        case (false, false):
            return Presence(counting: false, stoppedAt: [a.stoppedAt, b.stoppedAt].compactMap { $0 }.max(), until: nil)
        }
    }
}

extension UsageHistory {
    /// The name of every screen interval (one per person).
    public static let screenName = "screen"

    /// Brings the open screen intervals to `people` at `now`: a person who starts counting is
    /// opened at `now`; one who stopped is folded up to when they stopped (not before the
    /// interval's own start, not after `now`). Whether anything changed.
    @discardableResult
    public mutating func setScreen(_ people: [UInt32: ScreenTime.Presence], at now: Date, clock: LocalClock) -> Bool {
        var changed = false
        for key in open.keys {
            guard let o = Open(key: key), o.kind == .screen else { continue }
            let presence = UInt32(o.user).flatMap { people[$0] }
            guard presence?.counting != true, let since = open[key] else { continue }
            let stop = min(now, max(since, presence?.stoppedAt ?? now))
            set(o, false, at: stop, clock: clock)
            changed = true
        }
        for (uid, p) in people where p.counting {
            let o = Open(.screen, user: String(uid), name: Self.screenName)
            if open[o.key] == nil {
                set(o, true, at: now, clock: clock)
                changed = true
            }
        }
        return changed
    }
}
