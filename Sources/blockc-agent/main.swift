import BlockAgent
import BlockClient
import BlockCore
import Glibc

// The notification agent (S1) behind `blockc watch --notify`, which execs this with the socket
// it resolved: `blockc-agent --socket PATH watch --notify`. Its own executable so that only it
// links libsystemd (sd-bus); it accepts blockc's arguments and runs no other command.
signal(SIGPIPE, SIG_IGN)
var runner = BlockcRunner.system()
let environment = runner.environment
runner.notifyAgent = { path in NotifyAgent.run(NotifyAgent.Options(socketPath: path, environment: environment)) }
let status: Int32
do throws(CoreError) {
    let invocation = try BlockcInvocation.parse(Array(CommandLine.arguments.dropFirst()), now: runner.now(), clock: runner.clock)
    guard case .send(.watch, let options) = invocation.action, options.notify else {
        throw CoreError(.usage, "blockc-agent runs only 'watch --notify' (what 'blockc watch --notify' starts); use blockc for every other command")
    }
    status = runner.run(invocation)
} catch {
    status = runner.usageError(error)
}
exit(status)
