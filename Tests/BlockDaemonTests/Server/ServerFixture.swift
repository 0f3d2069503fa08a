import BlockCore
import Foundation
import Glibc
@testable import BlockDaemon
import BlockTestSupport

/// A control server on a sandbox socket in front of a harness's engine, for tests that talk
/// over the real socket. `peers`: given to the connections in accept order instead of what
/// SO_PEERCRED says (the test runs as one user); nil, SO_PEERCRED's. `users`: root, and this
/// test's own uid (SO_PEERCRED's) as an account without a name, failing closed like the
/// harness's. Going away, it stops the server (every connection closed) before closing the
/// listening socket.
final class ServerFixture: @unchecked Sendable {
    let sandbox = Sandbox()
    let harness: Harness
    let server: ControlServer

    init(peers: [Peer]? = nil, users: UsersTable = UsersTable.holding().runningAsThisProcess(), config: ConfigSet = .builtIn, persistent: Bool = true,
         limits: ControlServer.Limits = ControlServer.Limits()) throws {
        harness = Harness(dir: sandbox.dir + "/state", config: config, persistent: persistent, users: users)
        server = ControlServer(listenFD: try UnixSocket.listen(path: sandbox.socket), engine: harness.engine,
                               hub: harness.hub, log: harness.log, limits: limits)
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

extension ServerFixture {
    /// A 1,000-activity cap and nothing saved: the fixture of the server-limit and snapshot
    /// tests, with `configure` setting the server's limits.
    convenience init(limits configure: (inout ControlServer.Limits) -> Void) throws {
        var config = ConfigSet.builtIn
        config.daemon.maxActivities = 1000
        var limits = ControlServer.Limits()
        configure(&limits)
        try self.init(config: config, persistent: false, limits: limits)
    }
}
