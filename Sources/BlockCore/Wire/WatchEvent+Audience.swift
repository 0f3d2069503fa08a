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
        switch name {
        case .dropped: return true  // about this watcher's own stream
        case .moreTime: return uid == me  // M4: an agent needs only its own requests' answers
        case .refusal, .failure: return uid.map { $0 == me } ?? true
        default: return concerns(me)
        }
    }

    /// Per-user blocks: whether a lock, unlock, shield hit, limit or warning is about uid
    /// `uid`: no `users` (the whole machine, but for `except`), or `users` naming them. An
    /// administrator's agent gets every event and shows only these (U2).
    public func concerns(_ uid: Int) -> Bool {
        if let users { return users.contains(uid) }
        return !(except ?? []).contains(uid)
    }

    /// A1: a lock for everyone (but `except`): a reason for the whole machine started.
    public var isForEveryone: Bool { name == .lock && users == nil }
}
