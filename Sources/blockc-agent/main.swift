import BlockAgent
import BlockClient
import BlockCore
import Glibc

// blockd's agent in a user's session. The notification agent (S1) behind `blockc watch
// --notify`, which execs this with the socket it resolved: `blockc-agent --socket PATH watch
// --notify`; its own executable so that only it links libsystemd (sd-bus). Run as
// `blockd-nm-host` (a symlink the browsers' native-messaging manifests name) or with
// `--native-host`, it is the browser extension's native-messaging host (B1) instead.
signal(SIGPIPE, SIG_IGN)
var runner = BlockcRunner.system()
let environment = runner.environment
let arguments = Array(CommandLine.arguments.dropFirst())
let status: Int32
switch AgentCommandLine.mode(argv0: CommandLine.arguments.first ?? "", arguments: arguments) {
case .help:
    status = runner.stdout(AgentCommandLine.help) ? 0 : 1
case .version:
    status = runner.stdout(AgentCommandLine.version) ? 0 : 1
case .nativeHost(let caller):
    // The browser's user, on the socket blockc would use: nothing here names another user.
    let socket = BlockcInvocation(action: .version).socket(environment: environment)
    status = NativeHost.run(NativeHost.Options(socketPath: socket, environment: environment, callerArguments: caller))
case .agent(let arguments):
    runner.notifyAgent = { path in NotifyAgent.run(NotifyAgent.Options(socketPath: path, environment: environment)) }
    do throws(CoreError) {
        let invocation = try BlockcInvocation.parse(arguments, now: runner.now(), clock: runner.clock)
        guard case .send(.watch, let options) = invocation.action, options.notify else {
            throw CoreError(.usage, "blockc-agent runs only 'watch --notify' (what 'blockc watch --notify' starts) and, as blockd-nm-host, the browser's native-messaging host; use blockc for every other command")
        }
        status = runner.run(invocation)
    } catch {
        status = runner.usageError(error)
    }
}
exit(status)
