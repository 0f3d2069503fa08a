import BlockCore
import Foundation
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

    static func nameservers(in path: String) -> [IPAddress] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return DNSMessage.nameservers(resolvConf: String(decoding: data, as: UTF8.self))
    }

    /// The domain's IPv4 and IPv6 addresses (CNAMEs followed); empty when no server answered
    /// in time or the name does not exist.
    public func lookup(_ domain: String) -> [IPAddress] {
        let servers = servers()
        guard !servers.isEmpty else { return [] }
        let deadline = Date().addingTimeInterval(timeout)
        var pending: [DNSMessage.RecordType] = [.a, .aaaa]
        var found: [IPAddress] = []
        // A few tries: each server in turn, twice, each waiting a share of the budget.
        let tries = servers.count * 2
        for attempt in 0..<tries where !pending.isEmpty {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            let wait = left / Double(tries - attempt)
            let answers = ask(servers[attempt % servers.count], domain: domain, types: pending, wait: max(wait, 0.05))
            for (type, answer) in answers {
                switch answer {
                case .addresses(let a): found += a; pending.removeAll { $0 == type }
                case .noSuchName: return found
                case .unusable: break
                }
            }
        }
        return found
    }

    /// One server, one query per type on one connected UDP socket; the answers that came back
    /// within `wait` seconds.
    func ask(_ server: IPAddress, domain: String, types: [DNSMessage.RecordType], wait: TimeInterval) -> [(DNSMessage.RecordType, DNSMessage.Answer)] {
        let fd = socket(server.isIPv4 ? AF_INET : AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        guard SocketAddress.connect(fd, to: server, port: 53) else { return [] }
        var ids: [UInt16: DNSMessage.RecordType] = [:]
        for type in types {
            let id = UInt16.random(in: 0...UInt16.max)
            ids[id] = type
            let query = DNSMessage.query(id: id, name: domain, type: type)
            _ = query.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
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
        return out
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
