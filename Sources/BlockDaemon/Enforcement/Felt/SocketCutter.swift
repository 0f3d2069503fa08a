import BlockCore
import CLinux
import Glibc

/// E5: destroys every established TCP socket and connected UDP socket (QUIC) on the machine
/// (or of some owners only, U3) whose peer is one of the given addresses, IPv4 and IPv6 (an IPv4 peer of a dual-stack
/// socket appears as ::ffff:a.b.c.d), through NETLINK_SOCK_DIAG's SOCK_DESTROY.
public struct SocketCutter: Sendable {
    public struct Result: Equatable, Sendable {
        public var destroyed = 0
        public var matched = 0
        /// Why some could not be destroyed, in words; nil when all were.
        public var problem: String?
        /// The kernel cannot destroy sockets at all (no CONFIG_INET_DIAG_DESTROY).
        public var unsupported = false
    }

    public init() {}

    /// `owners`: only sockets owned by these uids (`idiag_uid`, the uid that created the
    /// socket, which is what nftables' `meta skuid` matches too); nil: anyone's.
    public func cut(_ addresses: [IPAddress], owners: Set<UInt32>? = nil) -> Result {
        let uids = owners.map { $0.sorted() } ?? []
        let nuids = Int32(owners == nil ? -1 : uids.count)
        let v4 = addresses.filter(\.isIPv4)
        let v6 = addresses.filter { !$0.isIPv4 } + v4.compactMap(\.v4Mapped)
        var result = Result()
        for (family, list) in [(AF_INET, v4), (AF_INET6, v6)] where !list.isEmpty {
            let packed = list.flatMap { $0.bytes + [UInt8](repeating: 0, count: 16 - $0.bytes.count) }
            for proto in [Int32(IPPROTO_TCP), Int32(IPPROTO_UDP)] {
                var matched: Int32 = 0
                let n = packed.withUnsafeBufferPointer { a in
                    uids.withUnsafeBufferPointer { u in
                        blockd_sockdiag_destroy(family, proto, a.baseAddress, Int32(list.count), u.baseAddress, nuids, &matched)
                    }
                }
                result.matched += Int(matched)
                if n >= 0 { result.destroyed += Int(n); continue }
                result.problem = SocketCutter.explain(-n)
                if -n == EOPNOTSUPP { result.unsupported = true }
            }
        }
        return result
    }

    static func explain(_ code: Int32) -> String {
        switch code {
        case EOPNOTSUPP:
            return "the kernel cannot destroy sockets (it was built without CONFIG_INET_DIAG_DESTROY); open connections stay open until they close, new ones are still refused"
        case EPERM, EACCES:
            return "destroying sockets needs CAP_NET_ADMIN; run blockd as root"
        default:
            return "sock_diag failed: \(String(cString: strerror(code)))"
        }
    }
}
