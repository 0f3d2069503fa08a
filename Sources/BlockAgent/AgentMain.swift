import BlockClient
import BlockCore
import Glibc

/// `blockc-agent`'s entry point: what the one executable (Sources/blockd/main.swift) runs when
/// it is started as `blockc-agent` or `blockd-nm-host`. The notification agent (S1) behind
/// `blockc watch --notify`, which execs it with the socket it resolved (`blockc-agent --socket
/// PATH watch --notify`); run as `blockd-nm-host` (a symbolic link the browsers'
/// native-messaging manifests name) or with `--native-host`, the browser extension's
/// native-messaging host (B1) instead.
public enum AgentMain {
    /// `argv0`: the name it was started by; `arguments`: what follows it.
    public static func run(argv0: String, arguments: [String]) -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        var runner = BlockcRunner.system()
        let environment = runner.environment
        switch AgentCommandLine.mode(argv0: argv0, arguments: arguments) {
        case .help:
            return runner.stdout(AgentCommandLine.help) ? 0 : 1
        case .version:
            return runner.stdout(AgentCommandLine.version) ? 0 : 1
        case .nativeHost(let caller):
            // The browser's user, on the socket blockc would use: nothing here names another user.
            let socket = BlockcInvocation(action: .version).socket(environment: environment)
            return NativeHost.run(NativeHost.Options(socketPath: socket, environment: environment, callerArguments: caller))
        case .agent(let arguments):
            runner.notifyAgent = { path in NotifyAgent.run(NotifyAgent.Options(socketPath: path, environment: environment)) }
            do throws(CoreError) {
                let invocation = try BlockcInvocation.parse(arguments, now: runner.now(), clock: runner.clock)
                guard case .send(.watch, let options) = invocation.action, options.notify else {
                    throw CoreError(.usage, "blockc-agent runs only 'watch --notify' (what 'blockc watch --notify' starts) and, as blockd-nm-host, the browser's native-messaging host; use blockc for every other command")
                }
                return runner.run(invocation)
            } catch {
                return runner.usageError(error)
            }
        }
    }
}
