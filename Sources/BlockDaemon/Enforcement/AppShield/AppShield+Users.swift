import BlockCore
import CLinux
import Glibc

/// Whose processes a shield target holds for (U1, W2), judged per process by `ProcessUsers`.
enum ShieldScope: Hashable, Sendable {
    /// A block for the whole machine: every process, root's and services' too.
    case everyone
    /// A per-user block (`Selection.users`).
    case users(Set<UInt32>)
    /// W2: an allow-only window for everyone holds for login users (`AllowOnly.loginUsers`)
    /// only, never for root or system services: no uid is listed.
    case loginUsers

    /// The scope of a selection's users (nil: everyone).
    init(_ users: Set<UInt32>?) { self = users.map(ShieldScope.users) ?? .everyone }

    func holds(_ uid: UInt32) -> Bool {
        switch self {
        case .everyone: true
        case .users(let uids): uids.contains(uid)
        case .loginUsers: AllowOnly.loginUsers.contains(uid)
        }
    }
}

/// Who a process counts as for a per-user block (apps per user, usage per user): its real
/// uid, and its login uid where one is set.
///
/// The real uid is what a setuid program leaves alone: `passwd` run by kid is kid's. The
/// login uid is set once at login by pam_loginuid (console, display manager, ssh), inherited
/// by everything started in that session and, unless the kernel was told otherwise, not
/// changeable by the session's processes; it is what makes `sudo steam` (real uid root) run
/// by kid still kid's, and `su kid -c steam` started from the parent's session also the
/// parent's. A process counts for a user when either uid is theirs. Daemons started by
/// systemd have no login uid (4294967295) and count by their real uid alone.
struct ProcessUsers: Equatable, Sendable {
    var real: UInt32
    /// nil where the process has no login uid.
    var login: UInt32?

    /// The users of a running process; nil when it is gone (or not visible in our PID namespace).
    static func of(_ pid: Int32) -> ProcessUsers? {
        var real: UInt32 = 0
        var login: UInt32 = 0
        guard blockd_process_users(pid, &real, &login) == 0 else { return nil }
        return ProcessUsers(real: real, login: login == UInt32.max ? nil : login)
    }

    /// The person a process stands for, to be told of a denied launch or a stopped app: the
    /// login uid (kid's `sudo steam` is kid's), else the real uid.
    var person: UInt32 { login ?? real }

    /// Whether a process of `users` falls in `scope`. A process whose users could not be read
    /// (nil) is taken to be in scope: a block errs on the side of blocking.
    static func inScope(_ scope: ShieldScope, _ users: ProcessUsers?) -> Bool {
        guard scope != .everyone, let users else { return true }
        return scope.holds(users.real) || users.login.map(scope.holds) == true
    }

    /// The same for a set of uids (nil: everyone).
    static func inScope(_ scope: Set<UInt32>?, _ users: ProcessUsers?) -> Bool { inScope(ShieldScope(scope), users) }
}

extension ShieldTarget {
    /// The target, of those blocking one executable (in selection-name order), that denies its
    /// launch by a process of `users`: the first for everyone or whose scope holds the process.
    /// `users` is asked at most once, and not at all when the first target is for everyone
    /// (machine-wide blocks answer an exec without reading /proc).
    static func denying(_ targets: [ShieldTarget], users: () -> ProcessUsers?) -> ShieldTarget? {
        var known: ProcessUsers??
        for target in targets {
            if target.users == .everyone { return target }
            if known == nil { known = .some(users()) }
            if ProcessUsers.inScope(target.users, known!) { return target }
        }
        return nil
    }

    /// The same for a running process `pid`.
    static func denying(_ targets: [ShieldTarget], pid: Int32) -> ShieldTarget? {
        denying(targets) { ProcessUsers.of(pid) }
    }
}
