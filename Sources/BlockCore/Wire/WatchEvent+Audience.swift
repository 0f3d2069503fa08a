extension WatchEvent {
    /// Per-user blocks, §5: whether the daemon sends this event to a watcher connected as
    /// `peer` (its SO_PEERCRED credentials, never anything the client says). Root and members
    /// of `blockd-admin` see every event, as they see every user's blocks. Anyone else sees
    /// what `status` would show them: blocks and limits for the whole machine or for them
    /// (a member can scope a block only to themselves, so the blocks they created are among
    /// these), their own more-time requests and answers, and refusals and failures of their
    /// own requests or of no one's (a configuration file's, the enforcement's).
    public func isShown(to peer: Peer) -> Bool {
        if peer.isRoot || peer.isAdmin { return true }
        let me = Int(peer.uid)
        switch self {
        case .dropped: return true  // about this watcher's own stream
        case .moreTime(let e): return e.uid == me  // M4: an agent needs only its own requests' answers
        case .refusal(let e), .failure(let e): return e.uid.map { $0 == me } ?? true
        case .lock, .unlock, .shieldHit, .tamper, .limit, .warning, .unknown: return concerns(me)
        }
    }

    /// Per-user blocks: whether a lock, unlock, shield hit, limit or warning is about uid
    /// `uid`: no `users` (the whole machine, but for `except`), or `users` naming them. An
    /// administrator's agent gets every event and shows only these (U2).
    public func concerns(_ uid: Int) -> Bool {
        if let users { return users.contains(uid) }
        return !(except ?? []).contains(uid)
    }

    /// Per-user blocks: the uids the event's selection or limit is for; nil: the whole machine
    /// (and every event that is not about a block).
    public var users: [Int]? {
        switch self {
        case .lock(let e): e.users
        case .unlock(let e): e.users
        case .shieldHit(let e), .tamper(let e): e.users
        case .limit(let e): e.users
        case .warning(let e): e.users
        case .refusal, .failure, .moreTime, .dropped: nil
        case .unknown(_, let o): WatchEvent.ints(o["users"])
        }
    }

    /// U2: a lock or unlock for everyone but these uids, whose own view of the selection did
    /// not change the same way (`Audience`).
    public var except: [Int]? {
        switch self {
        case .lock(let e): e.except
        case .unlock(let e): e.except
        case .shieldHit, .tamper, .limit, .warning, .refusal, .failure, .moreTime, .dropped: nil
        case .unknown(_, let o): WatchEvent.ints(o["except"])
        }
    }

    /// A1: a lock for everyone (but `except`): a reason for the whole machine started.
    public var isForEveryone: Bool {
        if case .lock(let e) = self { return e.users == nil }
        return false
    }
}
