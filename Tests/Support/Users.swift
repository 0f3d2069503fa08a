import BlockCore
import BlockDaemon
import Glibc
import Testing

extension UserDatabase {
    /// A user database nobody gave: reading it records an issue (`Engine.Collaborators.unsupplied`),
    /// so no test's outcome depends on who has an account on the machine it runs on.
    public static let unsupplied = UserDatabase(
        read: { Unsupplied.used("users (the user database)"); return UsersTable.holding() },
        lookUp: { table, _, _ in table })
}

extension UsersTable {
    /// The table with the test process's own user as the daemon's (an administrator of the
    /// daemon it runs in-process, as blockd's own user is).
    public func runningAsThisProcess() -> UsersTable {
        var t = self
        t.daemonUID = getuid()
        return t
    }
}
