import BlockCore
import Foundation
import Glibc
@testable import BlockDaemon

/// A control server on a sandbox socket in front of a harness's engine, for tests that talk
/// over the real socket. `peers`: given to the connections in accept order instead of what
/// SO_PEERCRED says (the test runs as one user); nil, SO_PEERCRED's.
final class ServerFixture: @unchecked Sendable {
    let sandbox = Sandbox()
    let harness: Harness
    let server: ControlServer

    init(peers: [Peer]? = nil, users: UserDirectory = .system) throws {
        harness = Harness(dir: sandbox.dir + "/state", users: users)
        server = ControlServer(listenFD: try UnixSocket.listen(path: sandbox.socket), engine: harness.engine,
                               hub: harness.hub, log: harness.log)
        if var next = peers.map({ $0[...] }) {  // only the server's queue reads it
            server.credentials = { _ in next.popFirst() ?? Peer(uid: UInt32.max, mayModify: false) }
        }
        server.start()
    }

    deinit {
        server.stop()
        close(server.listenFD)
    }
}
