import BlockCore
import Dispatch
import FoundationEssentials
import Glibc

/// E5: asks the nameservers of resolv.conf for a domain's A and AAAA records over UDP, so that
/// blockd learns its current addresses without the hosts file (which says the sink while the
/// domain is blocked). Blocking calls, bounded by `timeout` in total; run them off the
/// enforcers' queues.
public struct DNSClient: Sendable {
    public let resolvConf: String
    /// The whole lookup's budget (every server and retry included).
    public let timeout: TimeInterval
    /// systemd-resolved's stub (127.0.0.53) answers from /etc/hosts too; the servers it
    /// forwards to are listed here.
    static let resolvedUpstream = "/run/systemd/resolve/resolv.conf"

    public init(resolvConf: String, timeout: TimeInterval = 1) {
        self.resolvConf = resolvConf
        self.timeout = timeout
    }

    /// The servers to ask, in order; empty when the file is missing or lists none.
    public func servers() -> [IPAddress] {
        let listed = DNSClient.nameservers(in: resolvConf)
        let stub = IPAddress("127.0.0.53")!
        if listed == [stub] {
            let upstream = DNSClient.nameservers(in: DNSClient.resolvedUpstream)
            if !upstream.isEmpty { return upstream }
        }
        return listed
    }

    /// W2: every nameserver the machine's programs or this client ask: resolv.conf's, and the
    /// servers systemd-resolved's stub forwards to. During an allow-only window DNS passes to
    /// these addresses only.
    public func inUse() -> [IPAddress] {
        Array(Set(DNSClient.nameservers(in: resolvConf) + servers())).sorted()
    }

    static func nameservers(in path: String) -> [IPAddress] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return DNSMessage.nameservers(resolvConf: String(decoding: data, as: UTF8.self))
    }

    /// What one lookup learned. `problem` says why no server answered (nil when one did, even
    /// with no address or "no such name"), so that a lookup that cannot work is told apart from
    /// a domain without addresses.
    public struct Lookup: Equatable, Sendable {
        public var addresses: [IPAddress]
        public var problem: String?
        public init(addresses: [IPAddress] = [], problem: String? = nil) {
            self.addresses = addresses
            self.problem = problem
        }
    }

    /// The domain's IPv4 and IPv6 addresses (CNAMEs followed); none, with the problem, when no
    /// server answered in time.
    public func lookup(_ domain: String) -> Lookup {
        let servers = servers()
        guard !servers.isEmpty else { return Lookup(problem: "\(resolvConf) lists no nameserver") }
        let deadline = Date().addingTimeInterval(timeout)
        var pending: [DNSMessage.RecordType] = [.a, .aaaa]
        var found: [IPAddress] = []
        var answered = false
        var problem: String?
        // A few tries: each server in turn, twice, each waiting a share of the budget.
        let tries = servers.count * 2
        for attempt in 0..<tries where !pending.isEmpty {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            let wait = left / Double(tries - attempt)
            let asked = ask(servers[attempt % servers.count], domain: domain, types: pending, wait: max(wait, 0.05))
            if let p = asked.problem { problem = p }
            for (type, answer) in asked.answers {
                switch answer {
                case .addresses(let a): found += a; pending.removeAll { $0 == type }; answered = true
                case .noSuchName: return Lookup(addresses: found)
                case .unusable: break
                }
            }
        }
        if answered { return Lookup(addresses: found) }
        let list = servers.map(\.description).joined(separator: ", ")
        return Lookup(problem: problem ?? "no nameserver answered within \(DurationText.formatRemaining(timeout)) (asked \(list))")
    }

    /// One server, one query per type on one connected UDP socket; the answers that came back
    /// within `wait` seconds, or why none could be asked.
    func ask(_ server: IPAddress, domain: String, types: [DNSMessage.RecordType], wait: TimeInterval)
        -> (answers: [(DNSMessage.RecordType, DNSMessage.Answer)], problem: String?) {
        let fd = socket(server.isIPv4 ? AF_INET : AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return ([], DNSClient.socketProblem(errno, server: server)) }
        defer { close(fd) }
        guard SocketAddress.connect(fd, to: server, port: 53) else { return ([], DNSClient.socketProblem(errno, server: server)) }
        var ids: [UInt16: DNSMessage.RecordType] = [:]
        for type in types {
            let id = UInt16.random(in: 0...UInt16.max)
            ids[id] = type
            let query = DNSMessage.query(id: id, name: domain, type: type)
            let sent = query.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            if sent < 0 && (errno == EPERM || errno == EACCES) { return ([], DNSClient.socketProblem(errno, server: server)) }
        }
        var out: [(DNSMessage.RecordType, DNSMessage.Answer)] = []
        let end = Date().addingTimeInterval(wait)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !ids.isEmpty {
            let ms = Int32(max(0, end.timeIntervalSinceNow * 1000))
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard ms > 0, poll(&p, 1, ms) > 0 else { break }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n >= 2 else { if n < 0 && errno != EINTR && errno != EAGAIN { break } else { continue } }
            let reply = Array(buffer[0..<n])
            let id = UInt16(reply[0]) << 8 | UInt16(reply[1])
            guard let type = ids[id] else { continue }  // a stray or spoofed reply
            ids[id] = nil
            out.append((type, DNSMessage.parse(reply, id: id, name: domain, type: type)))
        }
        return (out, nil)
    }

    /// Why a query to `server` could not even be sent. EAFNOSUPPORT and EPERM are what a
    /// sandbox that forbids IP sockets (systemd's RestrictAddressFamilies=, IPAddressDeny=)
    /// returns; the text says so, since that is the usual cause.
    static func socketProblem(_ code: Int32, server: IPAddress) -> String {
        let text = String(cString: strerror(code))
        switch code {
        case EAFNOSUPPORT, EPERM, EACCES:
            return "cannot send a DNS query to \(server): \(text) (a sandbox forbids IP sockets to blockd; blockd.service needs AF_INET and AF_INET6 in RestrictAddressFamilies= and no IPAddressDeny= covering the nameserver)"
        default:
            return "cannot send a DNS query to \(server): \(text)"
        }
    }
}

/// sockaddr_in / sockaddr_in6 for an `IPAddress`.
enum SocketAddress {
    static func connect(_ fd: Int32, to address: IPAddress, port: UInt16) -> Bool {
        if address.isIPv4 {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin_addr) { $0.copyBytes(from: address.bytes) }
            return withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
        var sa = sockaddr_in6()
        sa.sin6_family = sa_family_t(AF_INET6)
        sa.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &sa.sin6_addr) { $0.copyBytes(from: address.bytes) }
        return withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }
}
