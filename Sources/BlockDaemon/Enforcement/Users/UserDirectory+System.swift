import BlockCore
import CLinux
import Glibc

/// The daemon's edge to the user database (per-user blocks): getpwnam, getgrnam; a group's
/// members are its listed members and the users whose primary group it is.
extension UserDirectory {
    /// The system's user database.
    public static let system = UserDirectory(
        uid: { name in
            var pw = passwd(), result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16384)
            guard getpwnam_r(name, &pw, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
            return pw.pw_uid
        },
        members: systemMembers,
        name: { uid in
            var pw = passwd(), result: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: 16384)
            guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil, let n = pw.pw_name else { return nil }
            return String(cString: n)
        },
        isAdmin: { uid in
            guard uid != 0 else { return true }
            var pw = passwd(), result: UnsafeMutablePointer<passwd>?, admin: UInt32 = 0
            var buffer = [CChar](repeating: 0, count: 16384)
            guard getpwuid_r(uid, &pw, &buffer, buffer.count, &result) == 0, result != nil,
                  blockd_group_id(adminGroup, &admin) == 0 else { return false }
            return blockd_user_in_group(uid, pw.pw_gid, admin) == 1
        })

    @Sendable static func systemMembers(_ group: String) -> [UInt32]? {
        var gr = Glibc.group(), result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        guard getgrnam_r(group, &gr, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        let gid = gr.gr_gid
        var names: [String] = []
        if var p = gr.gr_mem {
            while let m = p.pointee {
                names.append(String(cString: m))
                p += 1
            }
        }
        var uids = names.compactMap { system.uid($0) }
        // Users whose primary group it is are members too, listed or not.
        var pw = passwd(), entry: UnsafeMutablePointer<passwd>?
        var pwBuffer = [CChar](repeating: 0, count: 16384)
        setpwent()
        while getpwent_r(&pw, &pwBuffer, pwBuffer.count, &entry) == 0, entry != nil {
            if pw.pw_gid == gid { uids.append(pw.pw_uid) }
        }
        endpwent()
        return Array(Set(uids)).sorted()
    }
}
