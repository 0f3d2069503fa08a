import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

extension Output {
    /// " for kid, @kids" after what a per-user activity blocks; "" for the whole machine.
    func forWhom(_ users: [String]?) -> String {
        guard let users, !users.isEmpty else { return "" }
        return " for \(users.map(Output.clean).joined(separator: ", "))"
    }

    /// " (only for kid)" after a per-user schedule's or limit's selections.
    func onlyFor(_ users: [String]?) -> String {
        guard let users, !users.isEmpty else { return "" }
        return " (only for \(users.map(Output.clean).joined(separator: ", ")))"
    }

    /// U2: " for kid" or " for everyone but kid" after a `watch` event's selection (an
    /// administrator's watch shows every user's events); "" for the whole machine.
    func forWhom(_ e: WatchEvent) -> String {
        func names(_ uids: [Int]) -> String { uids.map { Output.clean(userName($0) ?? "uid \($0)") }.joined(separator: ", ") }
        if let users = e.users { return " for \(names(users))" }
        guard let except = e.except, !except.isEmpty else { return "" }
        return " for everyone but \(names(except))"
    }

    /// The name of `uid` in the system's user database (getpwuid_r), or nil.
    @Sendable public static func systemUserName(_ uid: Int) -> String? {
        guard let id = uid_t(exactly: uid) else { return nil }
        var pw = passwd(), result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(id, &pw, &buffer, buffer.count, &result) == 0, result != nil, let name = pw.pw_name else { return nil }
        return String(cString: name)
    }
}

extension Output {
    /// A1: a user as texts name them: the name the daemon sent (`user`), else the local user
    /// database's, else `uid N`.
    func person(user: String?, uid: Int?) -> String {
        if let user { return Output.clean(user) }
        return person(uid ?? -1)
    }

    func person(_ uid: Int) -> String { userName(uid).map(Output.clean) ?? "uid \(uid)" }
}
